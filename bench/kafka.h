#pragma once

#include "bench/benchmark.h"
#include "bench/dispatch.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>
#include <utility>

namespace outbox::bench {

// The kafka phase (`--only kafka`): `o.events` events delivered by the
// dispatcher to librdkafka's mock cluster (one broker on loopback, a topic of
// 4 partitions; the real producer, idempotent, acks=all, every record
// acknowledged by a delivery report), against the database-only dispatcher
// (the in-process publisher) on as many events, back to back, for `o.repeat`
// rounds. `plan(target)` is the run's database-only dispatcher; `load(n)`
// queues n events. Figures: kafka_events_per_s, db_only_events_per_s and
// ratio (medians, as roundsJson), maybe_duplicated.
core::Result<QJsonObject> measureKafka(const BenchOptions &o,
                                       const std::function<DispatchPlan(qint64)> &plan,
                                       const std::function<core::Result<void>(int)> &load,
                                       const Progress &progress);

} // namespace outbox::bench
