#pragma once

#include "bench/benchmark.h"
#include "bench/dispatch.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>
#include <utility>

namespace outbox::bench {

// Isolation between destinations (`--only isolation`): a routing dispatcher
// (core/routes.h) with destination A (an in-process development runner) and
// destination B (the benchmark's runner). B's delivery rate over `o.events`
// events alone, then while A answers 503 to everything, while A answers
// 204 after 2 s (slow, its circuit closed, its 8 slots full) and while A's
// port is closed, A's `o.events` events (its backlog, older than B's)
// pending in the last three; each run in a table that holds only its
// events. `httpPlan(target)` is the run's dispatcher posting to the runner.
// JSON: events, alone_events_per_s, a_503_events_per_s,
// a_closed_events_per_s, a_slow_events_per_s, a_503_ratio, a_closed_ratio,
// a_slow_ratio (over alone): the medians of `o.repeat`
// rounds (each also as <key>_rounds); a_failed_attempts (A's, over the
// runs: the circuit keeps them few), a_returned (A's events handed back
// unattempted) and dead.
core::Result<QJsonObject> measureIsolation(BenchCluster &database, const BenchOptions &o,
                                           const std::function<DispatchPlan(qint64)> &httpPlan,
                                           const Progress &progress);

} // namespace outbox::bench
