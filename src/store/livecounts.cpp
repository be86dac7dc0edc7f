#include "store/livecounts.h"

#include "store/database.h"
#include "store/errorgroups.h"
#include "store/pausestore.h"

#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

core::Result<QList<TopicCount>> topicCounts(QSqlDatabase db, const QString &context) {
    // Three aggregates, each over its own partial index: pending events
    // (held or not) through the due index, processing ones through the lease
    // index, dead rows by an index-only scan of outbox_events_dead_topic_idx
    // (no heap reads once vacuumed).
    auto query =
        exec(db,
             QStringLiteral(
                 "SELECT namespace, topic, sum(p)::bigint, sum(r)::bigint, sum(d)::bigint FROM ("
                 " SELECT namespace, topic, count(*) AS p, 0::bigint AS r, 0::bigint AS d"
                 "  FROM outbox_events WHERE status = 'pending' GROUP BY namespace, topic"
                 " UNION ALL"
                 " SELECT namespace, topic, 0, count(*), 0 FROM outbox_events"
                 "  WHERE status = 'processing' GROUP BY namespace, topic"
                 " UNION ALL"
                 " SELECT namespace, topic, 0, 0, count(*) FROM outbox_events"
                 "  WHERE status = 'dead' GROUP BY namespace, topic) u"
                 " GROUP BY namespace, topic ORDER BY namespace, topic"),
             {}, context);
    return readRows(std::move(query), [](const QSqlQuery &row) {
        return TopicCount{row.value(0).toString(), row.value(1).toString(),
                          row.value(2).toLongLong(), row.value(3).toLongLong(),
                          row.value(4).toLongLong()};
    });
}

core::Result<qint64> blockedCount(QSqlDatabase db, const QString &context) {
    // Every pending event with an aggregate against the one before it in
    // outbox_events_aggregate_idx: the same test as the ordered claim.
    EventFilter blocked;
    blocked.aggregateBlocked = true;
    auto row = execOneRow(db,
                          QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") +
                              toSqlCondition(blocked, QStringLiteral("e")).sql,
                          {}, context);
    if (!row)
        return row.error();
    return row->value(0).toLongLong();
}

core::Result<void> countBreakdown(QSqlDatabase db, const QString &context, StatusCounts &counts) {
    auto topics = topicCounts(db, context);
    if (!topics)
        return topics.error();
    auto blocked = blockedCount(db, context);
    if (!blocked)
        return blocked.error();
    counts.topics = std::move(topics).value();
    counts.blocked = blocked.value();
    return {};
}

QString oldestDueSql() {
    // The heads of the due index's ranges past the held events, blocked
    // behind a dead event or not (those are due for an unordered dispatcher):
    // a read of a few index entries, however many paused events are due.
    const auto head = [](const char *blocked) -> QString {
        return QLatin1String("(SELECT e.next_attempt_at FROM outbox_events e"
                             " WHERE e.status = 'pending' AND NOT e.held AND ") +
               QLatin1String(blocked) + QLatin1String(" AND e.next_attempt_at <= now()") +
               notPausedCondition(QStringLiteral("e")) +
               QLatin1String(" ORDER BY e.next_attempt_at LIMIT 1)");
    };
    return QLatin1String("least(") + head("NOT e.blocked") + QLatin1String(", ") +
           head("e.blocked") + QLatin1Char(')');
}

QString oldestPendingSql() {
    // The first entry of each index in creation order (held events are
    // outside the claim index, sql/010).
    return QStringLiteral("least((SELECT min(created_at) FROM outbox_events"
                          " WHERE status = 'pending' AND NOT held),"
                          " (SELECT min(created_at) FROM outbox_events"
                          " WHERE held AND status = 'pending'))");
}

namespace {

// Processing events and those whose lease ran out: the lease index, bounded
// by what dispatchers hold, so cheap on every tick (two columns).
const QString kProcessingColumns =
    QStringLiteral(" (SELECT count(*) FROM outbox_events WHERE status = 'processing'),"
                   " (SELECT count(*) FROM outbox_events WHERE status = 'processing'"
                   "   AND locked_until < now())");

} // namespace

QString liveCountsSql() {
    return QStringLiteral(
               "SELECT"
               " (SELECT count(*) FROM outbox_events WHERE status = 'pending' AND attempts = 0),"
               " (SELECT count(*) FROM outbox_events WHERE status = 'pending' AND attempts > 0),") +
           kProcessingColumns + QLatin1Char(',');
}

QString cappedDeliveredSql() {
    return QStringLiteral(
        " (SELECT count(*) FROM (SELECT 1 FROM outbox_events WHERE status = 'delivered'"
        "   LIMIT ?) d),"
        " (SELECT reltuples::bigint FROM pg_class"
        "   WHERE oid = to_regclass('outbox_events_delivered_idx')),");
}

qint64 readStatusColumns(const QSqlQuery &row, qint64 cap, StatusCounts &counts) {
    counts.pending = row.value(0).toLongLong();
    counts.retrying = row.value(1).toLongLong();
    counts.processing = row.value(2).toLongLong();
    counts.expiredLeases = row.value(3).toLongLong();
    const qint64 deliveredCapped = row.value(5).toLongLong();
    // reltuples of the partial index is what the last VACUUM/ANALYZE saw
    // (-1 when never analysed).
    counts.delivered = cappedValue(deliveredCapped, cap, row.value(6).toLongLong());
    counts.deliveredEstimated = deliveredCapped > cap;
    return deliveredCapped;
}

qint64 cappedValue(qint64 counted, qint64 cap, qint64 estimate) {
    return counted > cap ? std::max(counted, estimate) : counted;
}

bool dutyCycleAllows(const QElapsedTimer &since, qint64 tookMs, double dutyCycle) {
    return double(since.elapsed()) * std::max(dutyCycle, 0.0) >=
           double(std::max<qint64>(tookMs, 1));
}

LiveCounts::LiveCounts()
    : LiveCounts(Options{}) {}

LiveCounts::LiveCounts(Options options)
    : m_options(options) {}

core::Result<StatusCounts> LiveCounts::refresh(QSqlDatabase db) {
    const QString context = QStringLiteral("counting events");
    if (m_last && m_last->marker.changes != 0 &&
        m_last->stillSince.elapsed() >= m_options.quietAfterMs) {
        auto quiet = quietRefresh(db, context);
        if (!quiet)
            return quiet.error();
        if (quiet->has_value())
            return std::move(quiet).value().value();
    }
    return fullRefresh(db, context);
}

// The columns that do not read a whole set: the change counter, processing
// and expired leases (the lease index), the oldest pending and due events
// (index heads) and the server's time. The last full count's figures stand
// when the counter has not moved; nullopt when it has.
core::Result<std::optional<StatusCounts>> LiveCounts::quietRefresh(QSqlDatabase db,
                                                                   const QString &context) {
    auto row = execOneRow(
        db,
        QLatin1String("SELECT ") + tableChangesSql() + QLatin1Char(',') + kProcessingColumns +
            QLatin1String(", ") + epochMsSql(oldestPendingSql()) + QLatin1String(", ") +
            epochMsSql(QStringLiteral("now()")) + QLatin1String(", ") + epochMsSql(oldestDueSql()),
        {}, context);
    if (!row)
        return row.error();
    if (row->value(0).toLongLong() != m_last->marker.changes ||
        row->value(1).toLongLong() != m_last->marker.processing)
        return std::optional<StatusCounts>();
    StatusCounts counts = m_last->counts;
    counts.expiredLeases = row->value(2).toLongLong();
    counts.oldestPendingAt = timeFromEpochMs(row->value(3));
    counts.serverTime = timeFromEpochMs(row->value(4));
    counts.oldestDueAt = timeFromEpochMs(row->value(5));
    return std::optional<StatusCounts>(std::move(counts));
}

core::Result<StatusCounts> LiveCounts::fullRefresh(QSqlDatabase db, const QString &context) {
    const qint64 cap = std::max<qint64>(m_options.exactCap, 0);
    // One statement, one snapshot. Each count reads one small partial index;
    // delivered and dead stop after cap + 1 rows.
    auto totals = execOneRow(
        db,
        liveCountsSql() +
            QLatin1String(
                " (SELECT count(*) FROM (SELECT 1 FROM outbox_events WHERE status = 'dead'"
                "   LIMIT ?) x),") +
            cappedDeliveredSql() + QLatin1Char(' ') + tableChangesSql() + QLatin1String(", ") +
            epochMsSql(oldestPendingSql()) + QLatin1String(", ") +
            epochMsSql(QStringLiteral("now()")) + QLatin1String(", ") + epochMsSql(oldestDueSql()),
        {cap + 1, cap + 1}, context);
    if (!totals)
        return totals.error();
    ++m_fullCounts;
    StatusCounts counts;
    const qint64 deliveredCapped = readStatusColumns(totals.value(), cap, counts);
    const qint64 deadCapped = totals->value(4).toLongLong();
    counts.oldestPendingAt = timeFromEpochMs(totals->value(8));
    counts.serverTime = timeFromEpochMs(totals->value(9));
    counts.oldestDueAt = timeFromEpochMs(totals->value(10));
    const Marker marker{totals->value(7).toLongLong(),
                        counts.pending,
                        counts.retrying,
                        counts.processing,
                        deadCapped,
                        deliveredCapped};

    const bool changed = !m_breakdown || m_breakdown->marker != marker;
    const bool due = !m_breakdown ||
                     dutyCycleAllows(m_breakdown->since, m_breakdown->tookMs, m_options.dutyCycle);
    if (changed && due) {
        Breakdown next;
        next.marker = marker;
        next.since.start();
        StatusCounts breakdown;
        if (auto counted = countBreakdown(db, context, breakdown); !counted)
            return counted.error();
        next.topics = std::move(breakdown.topics);
        next.blocked = breakdown.blocked;
        next.tookMs = next.since.elapsed();
        for (const TopicCount &topic : std::as_const(next.topics))
            next.dead += topic.dead;
        next.at = counts.serverTime;
        m_breakdown = std::move(next);
    }
    applyBreakdown(marker, deadCapped, counts);
    if (!m_last || m_last->marker != marker) {
        m_last.emplace();
        m_last->marker = marker;
        m_last->stillSince.start();
    }
    m_last->counts = counts;
    return counts;
}

void LiveCounts::applyBreakdown(const Marker &marker, qint64 deadCapped,
                                StatusCounts &counts) const {
    const qint64 cap = std::max<qint64>(m_options.exactCap, 0);
    const bool stale = m_breakdown->marker != marker;
    counts.topics = m_breakdown->topics;
    counts.topicsAt = m_breakdown->at;
    counts.topicsEstimated = stale;
    counts.blocked = m_breakdown->blocked;
    counts.dead = cappedValue(deadCapped, cap, m_breakdown->dead);
    counts.deadEstimated = deadCapped > cap && stale;
}

} // namespace outbox::store
