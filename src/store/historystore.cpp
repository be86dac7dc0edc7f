#include "store/historystore.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/queuegauges.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QVariant>

#include <algorithm>

namespace outbox::store {

using namespace sqlvalues;

HistoryStore::HistoryStore(Session &session)
    : m_db(session.database()) {}

HistoryStore::HistoryStore(QSqlDatabase db)
    : m_db(std::move(db)) {}

namespace {

// The first column of the one row `sql` returns, as a boolean.
core::Result<bool> callFlag(QSqlDatabase db, const QString &sql, const QVariantList &values,
                            const QString &context) {
    auto row = execOneRow(std::move(db), sql, values, context);
    if (!row)
        return row.error();
    return row->value(0).toBool();
}

// Both tables' minutes of the window, side by side: one statement, one
// round trip. The console asks for an hour, about 60 rows however many
// dispatchers wrote them and whatever outbox_events holds.
QString windowSql() {
    return QLatin1String("WITH t AS (SELECT minute, sum(delivered)::bigint AS delivered,"
                         " sum(failed)::bigint AS failed, sum(dead)::bigint AS dead_rows,"
                         " count(*)::integer AS dispatchers FROM outbox_throughput_history"
                         " WHERE minute >= date_trunc('minute', now()) - ?::integer * interval"
                         " '1 minute' GROUP BY minute),"
                         " b AS (SELECT * FROM outbox_backlog_history"
                         " WHERE minute >= date_trunc('minute', now()) - ?::integer * interval"
                         " '1 minute')"
                         " SELECT ") +
           msOf(QStringLiteral("minute")) +
           QLatin1String(", t.dispatchers, t.delivered, t.failed, t.dead_rows,"
                         " b.pending IS NOT NULL, b.pending, b.processing, b.dead, b.due_now,"
                         " b.oldest_due_age_s"
                         " FROM t FULL JOIN b USING (minute) ORDER BY minute");
}

// Whether any dispatcher ever recorded history here (two index probes).
core::Result<bool> hasAnyHistory(QSqlDatabase db) {
    return callFlag(std::move(db),
                    QStringLiteral("SELECT EXISTS (SELECT 1 FROM outbox_throughput_history)"
                                   " OR EXISTS (SELECT 1 FROM outbox_backlog_history)"),
                    {}, QStringLiteral("looking for earlier history"));
}

} // namespace

core::Result<bool> HistoryStore::record(const QUuid &workerId, const QString &token,
                                        qint64 delivered, qint64 failed, qint64 dead) {
    return callFlag(m_db,
                    QStringLiteral("SELECT outbox_history_record(?::uuid, ?::text, ?::bigint,"
                                   " ?::bigint, ?::bigint)"),
                    {core::uuidText(workerId), token, delivered, failed, dead},
                    QStringLiteral("recording the throughput history"));
}

core::Result<bool> HistoryStore::recordBacklog(const QUuid &workerId, const QString &token,
                                               const QueueGauges &gauges) {
    return callFlag(m_db,
                    QStringLiteral("SELECT outbox_history_backlog(?::uuid, ?::text, ?::bigint,"
                                   " ?::bigint, ?::bigint, ?::bigint, ?::float8)"),
                    {core::uuidText(workerId), token, gauges.pending, gauges.processing,
                     gauges.dead, gauges.dueNow, gauges.oldestDueAgeSeconds},
                    QStringLiteral("recording the backlog history"));
}

core::Result<ThroughputHistory> HistoryStore::read(int minutes) {
    ThroughputHistory history;
    const QString context = QStringLiteral("reading the history");
    // A database migrated before version 6 has no history to show.
    auto present = execOneRow(m_db,
                              QStringLiteral("SELECT to_regclass('outbox_backlog_history') IS NOT"
                                             " NULL, floor(extract(epoch FROM now()) * 1000)"
                                             "::bigint"),
                              {}, context);
    if (!present)
        return present.error();
    history.serverTime = timeFrom(present->value(1));
    if (!present->value(0).toBool()) {
        history.unsupported = true;
        return history;
    }
    const int since = std::max(minutes, 1) - 1;
    auto rows = exec(m_db, windowSql(), {since, since}, context);
    if (!rows)
        return rows.error();
    while (rows->next()) {
        const QDateTime minute = timeFrom(rows->value(0));
        if (!rows->value(1).isNull()) {
            history.throughput.append({minute, rows->value(2).toLongLong(),
                                       rows->value(3).toLongLong(), rows->value(4).toLongLong(),
                                       rows->value(1).toInt()});
        }
        if (rows->value(5).toBool()) {
            history.backlog.append({minute, rows->value(6).toLongLong(),
                                    rows->value(7).toLongLong(), rows->value(8).toLongLong(),
                                    rows->value(9).toLongLong(), rows->value(10).toDouble()});
        }
    }
    if (history.isEmpty()) {
        auto earlier = hasAnyHistory(m_db);
        if (!earlier)
            return earlier.error();
        history.recordedEarlier = earlier.value();
    }
    return history;
}

} // namespace outbox::store
