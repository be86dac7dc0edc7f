#pragma once

#include "core/result.h"
#include "core/status.h"

#include <QSqlDatabase>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::store {

// What holds an event back when dispatchers deliver in aggregate order
// (`outboxctl dispatch --ordering aggregate`): the oldest unfinished
// (pending, processing or dead) event of the same (aggregate_type,
// aggregate_id) created before it. The event is not claimed until that one
// is delivered or purged.
struct AggregateBlocker {
    QUuid id;
    core::Status status = core::Status::Pending;
    qint64 unfinishedBefore = 0; // unfinished events of the aggregate before this one
};

// The blocker of the event `id`; nullopt when it has none (no aggregate,
// delivered, first in line, or aggregate order off for the database). Runs in
// the caller's transaction.
core::Result<std::optional<AggregateBlocker>> readAggregateBlocker(QSqlDatabase db, const QUuid &id,
                                                                   const QString &context);

} // namespace outbox::store
