#include "store/queuegauges.h"

#include "store/database.h"
#include "store/livecounts.h"
#include "store/pausestore.h"
#include "store/session.h"

#include <QVariant>

namespace outbox::store {

namespace {

// Each count walks one partial index. The due ones are read past the held
// (paused) events of the due-time index; the oldest is LiveCounts' own.
QString gaugesSql() {
    return QStringLiteral(
               "SELECT"
               " (SELECT count(*) FROM outbox_events WHERE status = 'pending'),"
               " (SELECT count(*) FROM outbox_events WHERE status = 'processing'),"
               " (SELECT count(*) FROM (SELECT 1 FROM outbox_events WHERE status = 'delivered'"
               "   LIMIT ?::bigint) d),"
               " (SELECT count(*) FROM outbox_events WHERE status = 'dead'),"
               " (SELECT count(*) FROM outbox_events WHERE status = 'pending' AND NOT held"
               "   AND next_attempt_at <= now()") +
           notPausedCondition(QStringLiteral("outbox_events")) +
           QStringLiteral("),"
                          " coalesce(extract(epoch FROM now() - ") +
           oldestDueSql() +
           QStringLiteral(")::float8, 0),"
                          " (SELECT count(*) FROM outbox_pauses),"
                          " (SELECT count(DISTINCT namespace) FROM outbox_pauses),"
                          " (SELECT count(*) FROM outbox_dispatchers"
                          "   WHERE outbox_dispatcher_alive(heartbeat_at, heartbeat_interval)),"
                          " (SELECT greatest(reltuples, 0)::bigint FROM pg_class"
                          "   WHERE oid = 'outbox_events'::regclass)");
}

} // namespace

core::Result<QueueGauges> readQueueGauges(Session &session) {
    auto row = exec(session.database(), gaugesSql(), {QueueGauges::kDeliveredExactCap},
                    QStringLiteral("reading the queue gauges"));
    if (!row)
        return row.error();
    if (!row->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("queue gauges: no row")};
    QueueGauges g;
    g.pending = row->value(0).toLongLong();
    g.processing = row->value(1).toLongLong();
    g.delivered = row->value(2).toLongLong();
    g.dead = row->value(3).toLongLong();
    g.dueNow = row->value(4).toLongLong();
    g.oldestDueAgeSeconds = std::max(0.0, row->value(5).toDouble());
    g.pausedScopes = row->value(6).toLongLong();
    g.pausedNamespaces = row->value(7).toLongLong();
    g.dispatchersAlive = row->value(8).toLongLong();
    if (g.delivered >= QueueGauges::kDeliveredExactCap) {
        // The planner's row count less the live sets: good to a few percent
        // after the last (auto)analyze, and never below the exact cap.
        const qint64 total = row->value(9).toLongLong();
        g.delivered = std::max(g.delivered, total - g.pending - g.processing - g.dead);
        g.deliveredEstimated = true;
    }
    g.readAt = QDateTime::currentDateTimeUtc();
    return g;
}

} // namespace outbox::store
