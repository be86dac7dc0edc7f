#pragma once

#include "bench/benchmark.h"
#include "bench/dispatch.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>

namespace outbox::bench {

// The paused backlog (`--only paused`): `o.events` events of one namespace
// delivered by the database-only dispatcher beside `o.pausedBacklog` older
// events that are paused, against nothing paused; in aggregate order beside
// as many events queued behind dead events of their aggregates, against
// none; and, the reference for what the table's size alone costs, beside as
// many older delivered events. Each in a database of its own (aggregate
// order on in all), the runs alternating for `o.repeat` rounds.
// `plan(target)` is the run's database-only dispatcher.
core::Result<QJsonObject> measurePausedBacklog(BenchCluster &database, const BenchOptions &o,
                                               const std::function<DispatchPlan(qint64)> &plan,
                                               const Progress &progress);

} // namespace outbox::bench
