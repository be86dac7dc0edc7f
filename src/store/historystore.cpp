#include "store/historystore.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/queuegauges.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QVariant>

namespace outbox::store {

using namespace sqlvalues;

HistoryStore::HistoryStore(Session &session)
    : m_db(session.database()) {}

HistoryStore::HistoryStore(QSqlDatabase db)
    : m_db(std::move(db)) {}

core::Result<bool> HistoryStore::record(const QUuid &workerId, const QString &token,
                                        qint64 delivered, qint64 failed, qint64 dead) {
    auto recorded = exec(m_db,
                         QStringLiteral("SELECT outbox_history_record(?::uuid, ?::text, ?::bigint,"
                                        " ?::bigint, ?::bigint)"),
                         {core::uuidText(workerId), token, delivered, failed, dead},
                         QStringLiteral("recording the throughput history"));
    if (!recorded)
        return recorded.error();
    return recorded->next() && recorded->value(0).toBool();
}

core::Result<bool> HistoryStore::recordBacklog(const QUuid &workerId, const QString &token,
                                               const QueueGauges &gauges) {
    auto recorded = exec(m_db,
                         QStringLiteral("SELECT outbox_history_backlog(?::uuid, ?::text, ?::bigint,"
                                        " ?::bigint, ?::bigint, ?::bigint, ?::float8)"),
                         {core::uuidText(workerId), token, gauges.pending, gauges.processing,
                          gauges.dead, gauges.dueNow, gauges.oldestDueAgeSeconds},
                         QStringLiteral("recording the backlog history"));
    if (!recorded)
        return recorded.error();
    return recorded->next() && recorded->value(0).toBool();
}

core::Result<ThroughputHistory> HistoryStore::read(int minutes) {
    ThroughputHistory history;
    // A database migrated before version 6 has no history to show.
    auto present = exec(m_db,
                        QStringLiteral("SELECT to_regclass('outbox_backlog_history') IS NOT NULL,"
                                       " floor(extract(epoch FROM now()) * 1000)::bigint"),
                        {}, QStringLiteral("reading the history"));
    if (!present)
        return present.error();
    if (!present->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("reading the history: no row")};
    history.serverTime = timeFrom(present->value(1));
    if (!present->value(0).toBool()) {
        history.unsupported = true;
        return history;
    }
    const QVariantList since{qMax(minutes, 1) - 1};
    auto throughput =
        exec(m_db,
             QLatin1String("SELECT ") + msOf(QStringLiteral("minute")) +
                 QLatin1String(", sum(delivered)::bigint, sum(failed)::bigint, sum(dead)::bigint,"
                               " count(*)::integer FROM outbox_throughput_history"
                               " WHERE minute >= date_trunc('minute', now())"
                               " - ?::integer * interval '1 minute'"
                               " GROUP BY minute ORDER BY minute"),
             since, QStringLiteral("reading the throughput history"));
    if (!throughput)
        return throughput.error();
    while (throughput->next()) {
        ThroughputMinute m;
        m.minute = timeFrom(throughput->value(0));
        m.delivered = throughput->value(1).toLongLong();
        m.failed = throughput->value(2).toLongLong();
        m.dead = throughput->value(3).toLongLong();
        m.dispatchers = throughput->value(4).toInt();
        history.throughput.append(m);
    }
    auto backlog = exec(m_db,
                        QLatin1String("SELECT ") + msOf(QStringLiteral("minute")) +
                            QLatin1String(", pending, processing, dead, due_now, oldest_due_age_s"
                                          " FROM outbox_backlog_history"
                                          " WHERE minute >= date_trunc('minute', now())"
                                          " - ?::integer * interval '1 minute'"
                                          " ORDER BY minute"),
                        since, QStringLiteral("reading the backlog history"));
    if (!backlog)
        return backlog.error();
    while (backlog->next()) {
        BacklogMinute m;
        m.minute = timeFrom(backlog->value(0));
        m.pending = backlog->value(1).toLongLong();
        m.processing = backlog->value(2).toLongLong();
        m.dead = backlog->value(3).toLongLong();
        m.dueNow = backlog->value(4).toLongLong();
        m.oldestDueAgeSeconds = backlog->value(5).toDouble();
        history.backlog.append(m);
    }
    if (history.isEmpty()) {
        auto earlier = exec(m_db,
                            QStringLiteral("SELECT EXISTS (SELECT 1 FROM outbox_throughput_history)"
                                           " OR EXISTS (SELECT 1 FROM outbox_backlog_history)"),
                            {}, QStringLiteral("reading the history"));
        if (!earlier)
            return earlier.error();
        history.recordedEarlier = earlier->next() && earlier->value(0).toBool();
    }
    return history;
}

} // namespace outbox::store
