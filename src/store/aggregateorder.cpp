#include "store/aggregateorder.h"

#include "core/uuidtext.h"
#include "store/database.h"

#include <QSqlQuery>
#include <QVariant>

namespace outbox::store {

core::Result<std::optional<AggregateBlocker>> readAggregateBlocker(QSqlDatabase db, const QUuid &id,
                                                                   const QString &context) {
    // The same test as the ordered claim (OutboxStore::Statement::Claim), read
    // through outbox_events_aggregate_idx; none while aggregate order is off.
    auto query = exec(db,
                      QStringLiteral("SELECT p.id::text, p.status, count(*) OVER ()"
                                     " FROM outbox_events e"
                                     " JOIN outbox_events p"
                                     "   ON p.aggregate_type = e.aggregate_type"
                                     "  AND p.aggregate_id = e.aggregate_id"
                                     "  AND p.status IN ('pending', 'processing', 'dead')"
                                     "  AND (p.created_at, p.id) < (e.created_at, e.id)"
                                     " WHERE e.id = ?::uuid AND e.status <> 'delivered'"
                                     "   AND outbox_aggregate_order_on()"
                                     " ORDER BY p.created_at, p.id LIMIT 1"),
                      {core::uuidText(id)}, context);
    if (!query)
        return query.error();
    if (!query->next())
        return std::optional<AggregateBlocker>();
    AggregateBlocker blocker;
    blocker.id = QUuid::fromString(query->value(0).toString());
    blocker.status =
        core::statusFromName(query->value(1).toString()).value_or(core::Status::Pending);
    blocker.unfinishedBefore = query->value(2).toLongLong();
    return std::optional<AggregateBlocker>(blocker);
}

} // namespace outbox::store
