#pragma once

#include "bench/benchmark.h"
#include "bench/dispatch.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>
#include <utility>

namespace outbox::bench {

// The paused backlog (`--only paused`): `o.events` events of one namespace
// delivered by the database-only dispatcher beside `o.pausedBacklog` older
// events that are paused, against nothing paused; and in aggregate order
// beside as many events queued behind dead events of their aggregates,
// against none; and, as the reference for what the table's size alone
// costs, beside as many older delivered events. Each in a database of its own (aggregate order on
// in all), the runs alternating for `o.repeat` rounds; for each run the claim's mean database time
// (pg_stat_statements, which the run loads for this phase) and the database time per second of the
// dispatcher left idle afterwards (its delivery loop: the registry, whose once-a-minute backlog
// sample counts pending events, is off). Then the paused backlog is resumed while a dispatcher runs
// (how soon and how fast it is delivered, how long the release took) and what is left of it is
// paused again (how long holding an existing backlog takes). `plan(target)` is the run's
// database-only dispatcher.
core::Result<QJsonObject> measurePausedBacklog(BenchCluster &database, const BenchOptions &o,
                                               const std::function<DispatchPlan(qint64)> &plan,
                                               const Progress &progress);

// The phase's rows of the printed report: (figure, value).
QList<std::pair<QString, QString>> pausedFigures(const QJsonObject &paused);

} // namespace outbox::bench
