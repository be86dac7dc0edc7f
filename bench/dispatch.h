#pragma once

#include "bench/benchmark.h"
#include "bench/harness.h"
#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "core/result.h"
#include "dispatch/dispatcher.h"
#include "dispatch/dispatcherstats.h"

#include <QList>
#include <QString>
#include <QUrl>

#include <functional>
#include <memory>

namespace outbox::bench {

struct DeliverySample {
    double seconds = 0; // since the dispatcher reported started()
    qint64 delivered = 0;
};

struct DispatchRun {
    double seconds = 0; // started() until `target` events were delivered
    QList<DeliverySample> samples;
    double rssMbStart = 0;
    double rssMbMax = 0;
    double rssMbEnd = 0;
    dispatch::DispatcherStats stats; // the last snapshot
};

struct DispatchPlan {
    core::ConnInfo connInfo;
    core::DispatcherConfig config;
    dispatch::PublisherFactory publisherFactory; // empty = HTTP
    dispatch::DispatcherOptions options;
    qint64 target = 0;               // stop once this many were delivered
    std::function<void()> onStarted; // e.g. start a producer (called in this thread)
};

// Runs a dispatcher (DispatcherHost: its own thread and connections) until
// `target` events are delivered, then stops it gracefully, sampling the
// delivered count and RSS every 100 ms. Fails after 30 minutes, or after a
// minute without a delivery. Runs an event loop in the calling thread.
core::Result<DispatchRun> runDispatcher(const DispatchPlan &plan);

} // namespace outbox::bench
