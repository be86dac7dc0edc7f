#pragma once

#include "core/event.h"
#include "core/result.h"
#include "core/status.h"

#include <QDateTime>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::store {

// What holds an event back when dispatchers deliver in aggregate order
// (`outboxctl dispatch --ordering aggregate`). EarlierEvent: the oldest
// unfinished (pending, processing or dead) event of the same
// (aggregate_type, aggregate_id) before it; the event is not claimed until
// that one is delivered or purged. OpenTransaction: none such, but a
// producer's transaction that began writing before this event's is still
// open and may yet commit an earlier event of the aggregate; the event is
// not claimed until it ends (docs/DECISIONS.md, "Aggregate order and open
// producer transactions").
struct AggregateBlocker {
    enum class Kind { EarlierEvent, OpenTransaction };
    Kind kind = Kind::EarlierEvent;
    // EarlierEvent
    QUuid id;
    core::Status status = core::Status::Pending;
    qint64 unfinishedBefore = 0; // unfinished events of the aggregate before this one
    // OpenTransaction: the oldest open transaction that writes, its backend
    // and start when pg_stat_activity shows them to the reader (0 / invalid
    // when not).
    quint64 transactionId = 0;
    int backendPid = 0;
    QDateTime transactionStart;
};

// Aggregate order's key, as SQL over two rows of outbox_events (`earlier`
// and `later` are their names or aliases): whether `earlier` comes first
// among the events of one aggregate (sql/013_aggregate_order_open_transactions.sql).
QString aggregateOrderBefore(const QString &earlier, const QString &later);

// Whether no transaction that may still commit an event before `row`'s in
// aggregate order is open: every transaction with a smaller id has ended
// (sql/013_aggregate_order_open_transactions.sql). Read once per statement.
QString aggregateHorizonPassed(const QString &row);

// The blocker of `event` (as read in the caller's transaction); nullopt
// when it has none (no aggregate, delivered, first in line, or aggregate
// order off for the database: those without reading other events). Runs in
// the caller's transaction.
core::Result<std::optional<AggregateBlocker>>
readAggregateBlocker(QSqlDatabase db, const core::OutboxEvent &event, const QString &context);

} // namespace outbox::store
