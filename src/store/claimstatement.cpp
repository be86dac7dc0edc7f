#include "store/claimstatement.h"

#include "store/aggregateorder.h"
#include "store/pausestore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace outbox::store {

namespace {

// Per-aggregate order (store/aggregateorder.h): an event with an aggregate
// waits while an earlier event of its aggregate is pending, processing or
// dead (one probe of outbox_events_aggregate_idx, sql/004_claim_path.sql),
// and while a transaction that may still commit an earlier one is open
// (sql/013_aggregate_order_open_transactions.sql).
QString aggregateHeadSql() {
    const QString row = QStringLiteral("outbox_events");
    return QStringLiteral(" AND (aggregate_type IS NULL OR aggregate_id IS NULL OR (") +
           aggregateHorizonPassed(row) +
           QStringLiteral(" AND NOT EXISTS ("
                          "   SELECT FROM outbox_events p"
                          "   WHERE p.aggregate_type = outbox_events.aggregate_type"
                          "     AND p.aggregate_id = outbox_events.aggregate_id"
                          "     AND p.status IN ('pending', 'processing', 'dead')"
                          "     AND ") +
           aggregateOrderBefore(QStringLiteral("p"), row) + QStringLiteral(")))");
}

// A row's payload size for the claim's byte budget (payload_bytes is
// written by outbox_enqueue, sql/012_hardening.sql; older rows are measured).
const QString kBytes = QStringLiteral(" coalesce(payload_bytes, pg_column_size(payload)) AS bytes");

// The rows to claim, picked and locked by materialized CTEs (c, and in
// aggregate order l before it); `filters` are the conditions every one of
// them meets.
QString pickingSql(bool ordered, const QString &filters) {
    if (!ordered)
        return QStringLiteral("c AS MATERIALIZED ("
                              " SELECT ctid AS tid, id, created_at,") +
               kBytes +
               QStringLiteral(" FROM outbox_events"
                              " WHERE status IN ('pending', 'processing') AND NOT held"
                              "   AND ((status = 'pending' AND next_attempt_at <= now())"
                              "     OR (status = 'processing' AND locked_until < now()))") +
               filters +
               QStringLiteral(" ORDER BY created_at, id LIMIT ?::integer FOR UPDATE SKIP LOCKED),");
    // Only processing rows hold a lease (sql/004): l reads the lease index,
    // c the pending events spelled as outbox_events_ordered_claim_idx spells
    // them (sql/aggregate_order.sql), which no other partial index matches.
    return QStringLiteral("l AS MATERIALIZED ("
                          " SELECT ctid AS tid, id, created_at,") +
           kBytes + QStringLiteral(" FROM outbox_events WHERE locked_until < now()") + filters +
           QStringLiteral(" ORDER BY locked_until LIMIT ?::integer FOR UPDATE SKIP LOCKED),"
                          " c AS MATERIALIZED ("
                          " SELECT ctid AS tid, id, created_at,") +
           kBytes +
           QStringLiteral(" FROM outbox_events"
                          " WHERE status NOT IN ('delivered', 'dead') AND locked_until IS NULL"
                          "   AND NOT held AND NOT blocked AND next_attempt_at <= now()") +
           filters +
           QStringLiteral(" ORDER BY created_at, id LIMIT ?::integer - (SELECT count(*) FROM l)"
                          " FOR UPDATE SKIP LOCKED),");
}

} // namespace

// Routing: the routes once per statement (CTE dr: each route's LIKE
// patterns and whether its destination may be claimed, the destination
// pauses applied), then for each row the first route it matches, as a CASE
// whose values are InitPlans (read once per statement): a plain filter on
// the rows the claim index hands out, so the walk in index order stays
// (tests/store/tst_claimplans) and a row costs a few LIKEs.
QString routesCte() {
    return QStringLiteral(
        "dr AS MATERIALIZED ("
        " SELECT x.ns, x.tp, x.n, x.claimable AND NOT EXISTS (SELECT FROM outbox_destination_pauses"
        "                                                     dp WHERE dp.destination = x.d) AS "
        "open"
        " FROM jsonb_to_recordset(?::jsonb) AS x(ns text, tp text, d text, claimable boolean,"
        "                                         n integer))");
}

QString routedCondition(const QString &table, int routes) {
    QString sql = QStringLiteral(" AND coalesce(CASE");
    for (int n = 0; n < routes; ++n) {
        const QString route = QStringLiteral(" FROM dr WHERE dr.n = %1)").arg(n);
        sql += QStringLiteral(" WHEN ") + table + QStringLiteral(".namespace LIKE (SELECT dr.ns") +
               route + QStringLiteral(" AND ") + table +
               QStringLiteral(".topic LIKE (SELECT dr.tp") + route +
               QStringLiteral(" THEN (SELECT dr.open") + route;
    }
    return sql + QStringLiteral(" END, false)");
}

QString routesJson(const QList<ClaimRoute> &routes) {
    QJsonArray rows;
    for (qsizetype i = 0; i < routes.size(); ++i) {
        const ClaimRoute &route = routes.at(i);
        rows.append(QJsonObject{{QStringLiteral("ns"), route.namespaceLike},
                                {QStringLiteral("tp"), route.topicLike},
                                {QStringLiteral("d"), route.destination},
                                {QStringLiteral("claimable"), route.claimable},
                                {QStringLiteral("n"), int(i)}});
    }
    return QString::fromUtf8(QJsonDocument(rows).toJson(QJsonDocument::Compact));
}

// Claim: the materialized CTE picks and locks the rows, the UPDATE takes
// exactly those (a LIMIT inside `WHERE id IN (...)` could be re-evaluated and
// over-claim). `ctid = ANY (ARRAY(...))` makes the UPDATE a Tid Scan of the
// row versions the picking locked (locked, so they stay the current ones
// until this statement updates them): no descent of the primary key per row,
// whose depth grows with everything the table holds (delivered history, a
// paused or blocked backlog). A row changed by a transaction that committed
// after this statement began is locked in its new version, which the Tid
// Scan does not see: it stays pending for a later claim, and no row is ever
// taken twice. The plan holds whatever the planner guesses for the LIMIT, so
// the statement is safe as a generic plan (Session::Options::genericPlans).
// RETURNING has no defined order, hence the outer SELECT.
// With OutboxStore::sessionSettings() the claim can only walk
// outbox_events_claim_idx in order, whatever the statistics say
// (docs/DECISIONS.md, "The claim path"); `NOT held` is that index's
// predicate, which leaves paused events out (sql/010_paused_backlog.sql).
// In aggregate order the claim walks outbox_events_ordered_claim_idx, which
// also leaves out the events blocked behind a dead event of their aggregate
// (sql/011_blocked_aggregates.sql) and holds no processing events: those
// whose lease expired come first, from the lease index (CTE l).
// Every statement of the dispatcher writes updated_at = statement_timestamp():
// the database refuses any other time from a dispatcher (sql/012_hardening.sql).
QString claimStatement(bool byNamespace, core::Ordering ordering, int routes) {
    const bool routed = routes > 0;
    const bool ordered = ordering == core::Ordering::Aggregate;
    // An event's own limit of attempts, else the dispatcher's (sql/014).
    const QString filters =
        QStringLiteral(" AND attempts < coalesce(max_attempts, ?::integer)"
                       " AND created_at >= ?::timestamptz") +
        notPausedCondition(QStringLiteral("outbox_events")) +
        (byNamespace ? QStringLiteral(" AND namespace = ?::text") : QString()) +
        (routed ? routedCondition(QStringLiteral("outbox_events"), routes) : QString()) +
        (ordered ? aggregateHeadSql() : QString());
    return QStringLiteral("WITH ") + (routed ? routesCte() + QStringLiteral(",") : QString()) +
           pickingSql(ordered, filters) +
           // The byte budget: the picked rows whose predecessors' payloads
           // stay below it, so at least the first (sql/012_hardening.sql).
           QStringLiteral(" b AS ("
                          " SELECT tid FROM (SELECT tid, sum(bytes) OVER (ORDER BY created_at, id)"
                          "                        - bytes AS before"
                          "                 FROM (SELECT tid, id, created_at, bytes FROM c") +
           (ordered ? QStringLiteral(" UNION ALL SELECT tid, id, created_at, bytes FROM l")
                    : QString()) +
           QStringLiteral(
               ") p) w"
               " WHERE before < (SELECT claim_budget_bytes FROM outbox_limits)),"
               " u AS ("
               " UPDATE outbox_events e"
               " SET status = 'processing', attempts = e.attempts + 1, locked_by = ?::uuid,"
               "     locked_until = now() + ?::bigint * interval '1 millisecond',"
               "     updated_at = statement_timestamp()"
               " WHERE e.ctid = ANY (ARRAY(SELECT tid FROM b))"
               " RETURNING e.id, e.namespace, e.topic, e.tenant_id, e.dedupe_key, e.aggregate_type,"
               "           e.aggregate_id, e.payload::text AS payload, e.attempts, e.created_at,"
               "           e.locked_until, e.traceparent, e.tracestate)"
               " SELECT * FROM u ORDER BY created_at, id");
}

QString claimFloorStatement(bool byNamespace, int routes) {
    if (routes <= 0) {
        return QStringLiteral(
                   "SELECT (min(created_at) - ?::bigint * interval '1 millisecond')::text"
                   " FROM outbox_events WHERE status IN ('pending', 'processing')"
                   " AND NOT held") +
               (byNamespace ? QStringLiteral(" AND namespace = ?::text") : QString());
    }
    // A routing dispatcher's: from a lower bound (the previous floor), and
    // with nothing to claim now, now: a backlog behind an open circuit stays
    // below the floor either way.
    return QStringLiteral("WITH ") + routesCte() +
           QStringLiteral(" SELECT (coalesce(min(created_at), now())"
                          "         - ?::bigint * interval '1 millisecond')::text"
                          " FROM outbox_events WHERE status IN ('pending', 'processing')"
                          " AND NOT held") +
           (byNamespace ? QStringLiteral(" AND namespace = ?::text") : QString()) +
           QStringLiteral(" AND created_at >= ?::timestamptz") +
           routedCondition(QStringLiteral("outbox_events"), routes);
}

} // namespace outbox::store
