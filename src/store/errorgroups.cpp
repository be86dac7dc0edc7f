#include "store/errorgroups.h"

#include "store/database.h"
#include "store/livecounts.h"

#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

QString tableChangesSql() {
    return QStringLiteral(
        "(SELECT pg_stat_get_tuples_inserted(t.oid) + pg_stat_get_tuples_updated(t.oid)"
        "   + pg_stat_get_tuples_deleted(t.oid)"
        "   FROM (SELECT to_regclass('outbox_events') AS oid) t)");
}

core::Result<ErrorGroupSet> groupErrors(QSqlDatabase db, const EventFilter &filter, int limit,
                                        int sample) {
    if (limit < 1)
        return core::Error{
            core::ErrorKind::Invalid,
            QStringLiteral("error group limit must be at least 1 (got %1)").arg(limit)};
    if (sample < 1)
        return core::Error{
            core::ErrorKind::Invalid,
            QStringLiteral("error group sample must be at least 1 (got %1)").arg(sample)};
    EventFilter scoped = filter;
    if (!scoped.status && !scoped.retrying)
        scoped.status = core::Status::Dead;
    const SqlCondition condition = toSqlCondition(scoped, QStringLiteral("e"));
    // A search the indexes cannot answer reads the newest events of the
    // status only, through its index (kErrorGroupSearchScan), and says so.
    const bool bounded = scoped.needsScan();
    EventFilter ofStatus;
    ofStatus.status = scoped.status;
    ofStatus.retrying = scoped.retrying;
    const SqlCondition statusCondition = toSqlCondition(ofStatus, QStringLiteral("r"));
    const QString source =
        bounded ? QLatin1String("(SELECT r.* FROM outbox_events r WHERE ") + statusCondition.sql +
                      QLatin1String(" ORDER BY r.created_at DESC, r.id DESC LIMIT ?) e")
                : QStringLiteral("outbox_events e");
    // The newest sample + 1 events through the status's (created_at, id)
    // index, so the grouping is bounded and one more row tells whether it was
    // a sample. Only then the signatures (the expensive part) are computed.
    // The example is the group's most recent error; DISTINCT ON picks it
    // without collecting every message of a large group. The kinds are
    // counted before the limit.
    const QString sql =
        QLatin1String("WITH s AS MATERIALIZED (SELECT x.*, row_number() OVER"
                      "  (ORDER BY x.created_at DESC, x.id DESC) AS rn FROM"
                      " (SELECT e.last_error, e.updated_at, e.created_at, e.id FROM ") +
        source + QLatin1String("  WHERE e.last_error IS NOT NULL AND ") + condition.sql +
        QLatin1String("  ORDER BY e.created_at DESC, e.id DESC LIMIT ?) x),"
                      " g AS (SELECT DISTINCT ON (q.signature) q.signature,"
                      "  q.last_error AS example, count(*) OVER w AS n,"
                      "  max(q.updated_at) OVER w AS latest"
                      "  FROM (SELECT ") +
        errorSignatureSql(QStringLiteral("s.last_error")) +
        QLatin1String(" AS signature, s.last_error, s.updated_at, s.id FROM s WHERE s.rn <= ?) q"
                      "  WINDOW w AS (PARTITION BY q.signature)"
                      "  ORDER BY q.signature, q.updated_at DESC, q.id DESC)"
                      " SELECT g.signature, g.example, g.n, ") +
        epochMsSql(QStringLiteral("g.latest")) +
        QLatin1String(", count(*) OVER (), (SELECT count(*) FROM s), ") +
        (bounded ? QLatin1String("(SELECT count(*) FROM (SELECT FROM outbox_events r WHERE ") +
                       statusCondition.sql +
                       QLatin1String(" ORDER BY r.created_at DESC, r.id DESC LIMIT ?) n), ")
                 : QStringLiteral("0, ")) +
        epochMsSql(QStringLiteral("now()")) +
        QLatin1String(" FROM g ORDER BY g.n DESC, g.latest DESC, g.signature LIMIT ?");
    QVariantList values;
    if (bounded)
        values << statusCondition.values << kErrorGroupSearchScan;
    values << condition.values << sample + 1 << sample;
    if (bounded)
        values << statusCondition.values << kErrorGroupSearchScan + 1;
    values << limit;
    auto query = exec(db, sql, values, QStringLiteral("grouping errors"));
    if (!query)
        return query.error();
    ErrorGroupSet set;
    while (query->next()) {
        const QSqlQuery &row = query.value();
        set.groups << ErrorGroup{row.value(0).toString(), row.value(1).toString(),
                                 row.value(2).toLongLong(), timeFromEpochMs(row.value(3))};
        set.kinds = row.value(4).toLongLong();
        const qint64 seen = row.value(5).toLongLong();
        set.grouped = std::min<qint64>(seen, sample);
        set.sampled = seen > sample;
        if (row.value(6).toLongLong() > kErrorGroupSearchScan)
            set.searchedNewest = kErrorGroupSearchScan;
        set.groupedAt = timeFromEpochMs(row.value(7));
    }
    return set;
}

ErrorGroupWatch::ErrorGroupWatch()
    : ErrorGroupWatch(Options{}) {}

ErrorGroupWatch::ErrorGroupWatch(Options options)
    : m_options(options) {}

core::Result<ErrorGroupSet> ErrorGroupWatch::refresh(QSqlDatabase db, const EventFilter &filter,
                                                     int limit, QDateTime &serverTime) {
    const QString context = QStringLiteral("grouping errors");
    auto marker = execOneRow(db,
                             QLatin1String("SELECT ") + tableChangesSql() + QLatin1String(", ") +
                                 epochMsSql(QStringLiteral("now()")),
                             {}, context);
    if (!marker)
        return marker.error();
    const qint64 changes = marker->value(0).toLongLong();
    serverTime = timeFromEpochMs(marker->value(1));

    const bool asked = m_last && m_last->filter == filter && m_last->limit == limit;
    const bool changed = !asked || m_last->changes != changes;
    const bool due = !asked || dutyCycleAllows(m_last->since, m_last->tookMs, m_options.dutyCycle);
    if (changed && due) {
        Last next;
        next.filter = filter;
        next.limit = limit;
        next.changes = changes;
        next.since.start();
        auto set = groupErrors(db, filter, limit, m_options.sample);
        if (!set)
            return set.error();
        next.set = std::move(set).value();
        if (!next.set.groupedAt.isValid())
            next.set.groupedAt = serverTime;
        next.tookMs = next.since.elapsed();
        m_last = std::move(next);
    }
    ErrorGroupSet set = m_last->set;
    set.stale = m_last->changes != changes;
    return set;
}

} // namespace outbox::store
