#include "store/aggregateorder.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/migrator.h"

#include <QSqlQuery>
#include <QVariant>

namespace outbox::store {

namespace {

// The blocker `sql` finds for the event `id` (its one parameter), read from
// its first row by `fill`; nullopt when it finds none.
template <typename Fill>
core::Result<std::optional<AggregateBlocker>> readBlocker(QSqlDatabase db, const QString &sql,
                                                          const QString &id, const QString &context,
                                                          Fill fill) {
    auto query = exec(db, sql, {id}, context);
    if (!query)
        return query.error();
    if (!query->next())
        return std::optional<AggregateBlocker>();
    AggregateBlocker blocker;
    fill(query.value(), blocker);
    return std::optional<AggregateBlocker>(blocker);
}

// The oldest unfinished event of the aggregate before the event `id`.
core::Result<std::optional<AggregateBlocker>> readEarlierEvent(QSqlDatabase db, const QString &id,
                                                               const QString &context) {
    const QString sql = QStringLiteral("SELECT p.id::text, p.status, count(*) OVER ()"
                                       " FROM outbox_events e"
                                       " JOIN outbox_events p"
                                       "   ON p.aggregate_type = e.aggregate_type"
                                       "  AND p.aggregate_id = e.aggregate_id"
                                       "  AND p.status IN ('pending', 'processing', 'dead')"
                                       "  AND ") +
                        aggregateOrderBefore(QStringLiteral("p"), QStringLiteral("e")) +
                        QStringLiteral(" WHERE e.id = ?::uuid AND e.status <> 'delivered'"
                                       "   AND outbox_aggregate_order_on()"
                                       " ORDER BY p.producer_xid, p.created_at, p.id LIMIT 1");
    return readBlocker(db, sql, id, context, [](const QSqlQuery &row, AggregateBlocker &blocker) {
        blocker.id = QUuid::fromString(row.value(0).toString());
        blocker.status =
            core::statusFromName(row.value(1).toString()).value_or(core::Status::Pending);
        blocker.unfinishedBefore = row.value(2).toLongLong();
    });
}

// The oldest open transaction the pending event `id` waits for, with its
// backend when pg_stat_activity shows it to this login.
core::Result<std::optional<AggregateBlocker>>
readOpenTransaction(QSqlDatabase db, const QString &id, const QString &context) {
    const QString sql =
        QStringLiteral("SELECT h.xmin::text, a.pid, a.xact_start"
                       " FROM outbox_events e"
                       " CROSS JOIN (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) h"
                       " LEFT JOIN pg_stat_activity a ON a.backend_xid = h.xmin::xid"
                       " WHERE e.id = ?::uuid AND e.status = 'pending'"
                       "   AND e.aggregate_type IS NOT NULL AND e.aggregate_id IS NOT NULL"
                       "   AND e.producer_xid >= h.xmin"
                       "   AND outbox_aggregate_order_on()"
                       " LIMIT 1");
    return readBlocker(db, sql, id, context, [](const QSqlQuery &row, AggregateBlocker &blocker) {
        blocker.kind = AggregateBlocker::Kind::OpenTransaction;
        blocker.transactionId = row.value(0).toString().toULongLong();
        blocker.backendPid = row.value(1).toInt();
        blocker.transactionStart = row.value(2).toDateTime();
    });
}

} // namespace

QString aggregateOrderBefore(const QString &earlier, const QString &later) {
    const auto key = [](const QString &row) -> QString {
        return QLatin1Char('(') + row + QLatin1String(".producer_xid, ") + row +
               QLatin1String(".created_at, ") + row + QLatin1String(".id)");
    };
    return key(earlier) + QLatin1String(" < ") + key(later);
}

QString aggregateHorizonPassed(const QString &row) {
    // An uncorrelated subquery: one InitPlan, the snapshot of the statement.
    return row + QLatin1String(".producer_xid < (SELECT pg_snapshot_xmin(pg_current_snapshot()))");
}

core::Result<std::optional<AggregateBlocker>>
readAggregateBlocker(QSqlDatabase db, const core::OutboxEvent &event, const QString &context) {
    // Nothing holds a delivered event or one without an aggregate, and
    // nothing holds any event while aggregate order is off: those are
    // answered without the join. With aggregate order off there is no
    // aggregate index, so the join's plan is a scan of every unfinished
    // event; its one-time filter (outbox_aggregate_order_on()) never runs
    // it, but on a large table its estimate passes jit_above_cost and the
    // server compiles the plan on every call (25-400 ms at 10,000,000
    // events), on every refresh of the console's detail pane.
    if (event.status == core::Status::Delivered || !event.aggregateType || !event.aggregateId)
        return std::optional<AggregateBlocker>();
    auto on = Migrator(db).aggregateOrderOn();
    if (!on)
        return on.error();
    if (!on.value())
        return std::optional<AggregateBlocker>();
    // The same tests as the ordered claim (OutboxStore::Statement::Claim):
    // an earlier event first (read through outbox_events_aggregate_idx), then
    // the open transactions.
    const QString text = core::uuidText(event.id);
    auto earlier = readEarlierEvent(db, text, context);
    if (!earlier || earlier.value())
        return earlier;
    return readOpenTransaction(db, text, context);
}

} // namespace outbox::store
