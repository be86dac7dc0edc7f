#pragma once

#include "core/result.h"
#include "store/operations.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

namespace outbox::store {

class Session;

// A paused destination of routing dispatchers (sql/015_destinations.sql).
struct DestinationPause {
    QString destination;
    QString reason;
    QString pausedBy; // the database user
    QDateTime pausedAt;
};

// Destinations in the database: pausing and resuming one (through
// outbox_destination_pause()/outbox_destination_resume(), which check the
// caller's role and write the audit row; every routing dispatcher's claim
// leaves a paused destination's events pending), and what each dispatcher
// reports of its destinations in the registry. Uses the caller's
// connection, in the caller's thread.
class DestinationStore final {
public:
    explicit DestinationStore(Session &session);
    explicit DestinationStore(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(DestinationStore)

    // Pausing a paused destination replaces its reason.
    core::Result<void> pause(const QString &destination, const QString &reason, const Actor &actor);
    // False: it was not paused (nothing audited).
    core::Result<bool> resume(const QString &destination, const Actor &actor);
    core::Result<QList<DestinationPause>> pauses();

    // A dispatcher's destinations (a JSON array, no secrets) on its
    // registry row; false when the row is gone.
    core::Result<bool> report(const QUuid &workerId, const QString &token, const QString &json);
    // Every registered dispatcher's report, by worker id (none: no routes).
    core::Result<QHash<QUuid, QString>> reports();

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store
