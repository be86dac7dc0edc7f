#pragma once

#include "bench/cpumeter.h"
#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "core/result.h"
#include "dispatch/dispatcher.h"
#include "dispatch/dispatcherstats.h"

#include <QList>

#include <functional>

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
    CpuUsage cpu;                    // started() until `target` (with DispatchPlan::meter)
};

struct DispatchPlan {
    core::ConnInfo connInfo;
    core::DispatcherConfig config;
    dispatch::PublisherFactory publisherFactory; // empty = HTTP
    dispatch::DispatcherOptions options;
    qint64 target = 0;             // stop once this many were delivered
    core::Millis sampleEvery{100}; // delivered-count and RSS samples
    core::Millis timeout{1800000};
    core::Millis stallTimeout{60000}; // give up when nothing was delivered for this long
    std::function<void()> onStarted;  // e.g. start a producer (called in this thread)
    const CpuMeter *meter = nullptr;  // measure where the CPU time went
};

// Runs a dispatcher (DispatcherHost: its own thread and connections) until
// `target` events are delivered, then stops it gracefully. Runs an event
// loop in the calling thread.
core::Result<DispatchRun> runDispatcher(const DispatchPlan &plan);

} // namespace outbox::bench
