#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "devtools/embeddedpostgres.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace outbox::consolebench {

// How many rows of each kind the benchmark database holds.
struct DatasetSize {
    qint64 delivered = 1000000;
    qint64 dead = 100000;
    qint64 pendingDue = 2000; // attempts = 0, due now
    qint64 retrying = 2000;   // pending with attempts > 0, due within the hour
    qint64 processing = 1000; // leased; half of the leases already expired
};

// What was loaded, for the report.
struct DatasetFacts {
    qint64 delivered = 0;
    qint64 dead = 0;
    qint64 pending = 0;
    qint64 processing = 0;
    double payloadBytes = 0; // average size of the payload as JSON text
    QString tableSize;       // heap + indexes + toast, pretty-printed
    double loadSeconds = 0;
};

// One statement's share of the database work (pg_stat_statements).
struct StatementStat {
    qint64 calls = 0;
    double totalMs = 0;
    double meanMs = 0;
    double maxMs = 0;
    QString query; // normalised, shortened
};

// The throwaway cluster and its realistic outbox: five namespaces with three
// topics each, tenants, dedupe keys, ~200-byte JSON payloads, created_at
// spread over a week (UUID v7 ids made from it, so id order is time order
// as in production), dead rows with a handful of error shapes whose ids and
// numbers vary (so the error grouping has real work to do).
class Dataset final {
public:
    Dataset();
    ~Dataset();
    Q_DISABLE_COPY_MOVE(Dataset)

    core::Result<void> start(); // cluster (with pg_stat_statements) + migrations
    core::Result<DatasetFacts> load(const DatasetSize &size);
    // Due pending events created "now", for the dispatcher to drain.
    core::Result<void> addBacklog(qint64 events);
    // Events delivered just now (they appear at the top of the Delivered view).
    core::Result<void> addDelivered(qint64 events);

    // Runs one statement on the loading connection (e.g. a schema change to
    // try: --after-load-sql).
    core::Result<void> exec(const QString &sql, const QString &what);

    // Waits until no other session is running a statement (a closed
    // console's last query runs on in the server until it finishes), so
    // one measurement does not pay for the previous one.
    core::Result<void> waitIdle(int timeoutMs);

    // Rows with this status, counted exactly (for the report, not timed).
    core::Result<qint64> count(const QString &status);

    core::Result<void> resetStatementStats();
    // The statements of other sessions (not this loader's) by total time.
    core::Result<QList<StatementStat>> statementStats(int limit);

    core::ConnInfo connInfo() const { return m_connInfo; }
    QString serverVersion() const { return m_serverVersion; }

private:
    enum class Kind { Delivered, Dead, PendingDue, Retrying, Processing, Backlog, Fresh };
    core::Result<void> insert(Kind kind, qint64 count);

    devtools::EmbeddedPostgres m_cluster;
    core::ConnInfo m_connInfo;
    QString m_connectionName;
    QSqlDatabase m_db;
    QString m_serverVersion;
    qint64 m_serial = 0; // keeps dedupe keys unique across inserts
};

} // namespace outbox::consolebench
