#pragma once

#include "core/result.h"

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace outbox::store {

class Session;

// Applies the numbered migrations compiled in from sql/ (resource :/sql),
// each in its own transaction, serialised across processes with an advisory
// lock, recorded in outbox_schema_version. Re-running is a no-op. A database
// whose version is newer than this binary knows is refused (Conflict).
class Migrator final {
public:
    struct Report {
        int fromVersion = 0;
        int toVersion = 0;
        QStringList applied; // file names applied in this run
        bool rolesApplied = false;
    };

    explicit Migrator(Session &session);
    explicit Migrator(QSqlDatabase db);

    static int latestVersion();
    core::Result<int> currentVersion() const; // 0 when never migrated
    core::Result<Report> migrate(bool withRoles = false, bool dryRun = false);
    // Ok when the schema is exactly latestVersion(); otherwise an error that
    // says to run `outboxctl migrate` (older) or to upgrade (newer).
    core::Result<void> checkCurrent() const;

    // Delivery in aggregate order is on while outbox_events_aggregate_idx
    // exists and is valid (sql/009_aggregate_order_opt_in.sql).
    core::Result<bool> aggregateOrderOn() const;
    // Ok when it is on; otherwise an Invalid error naming the fix.
    core::Result<void> checkAggregateOrder() const;
    // Builds the index with CREATE INDEX CONCURRENTLY (producers and
    // dispatchers keep writing; it waits for transactions already running),
    // first dropping what an interrupted build left. False when it was on.
    core::Result<bool> enableAggregateOrder();

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store
