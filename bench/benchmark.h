#pragma once

#include "bench/harness.h"
#include "bench/report.h"
#include "core/dispatcherconfig.h"
#include "core/duration.h"
#include "core/result.h"
#include "store/benchqueries.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>

// `outboxctl bench`: every figure of the dispatcher's performance targets,
// measured in one run on a throwaway cluster and a development runner.
namespace outbox::bench {

struct BenchOptions {
    int events = 50000;     // per throughput phase (ceilings, db-only, end to end)
    int repeat = 1;         // rounds of the throughput phases (medians are reported)
    int burnDown = 1000000; // backlog for the burn-down; 0 = skip it
    int latencyEvents = 1000;
    core::Millis latencyInterval{10};
    int batchSize = core::DispatcherConfig().batchSize;
    int concurrency = core::DispatcherConfig().concurrency; // HTTP requests in flight
    core::Millis notifyDebounce{0}; // DispatcherOptions::notifyDebounce (as outboxctl dispatch)
    bool durable = true;            // fsync and synchronous_commit on, as in production
    int payloadBytes = 256;
    core::Delivery delivery = core::Delivery::PerEvent; // the latency phase
    // The request latency by body size ("sizes"): up to the batch byte limit.
    QList<int> sizes{300, 3000, 30000, 300000, int(core::DispatcherConfig().batchMaxBytes)};
    int sizeRequests = 100;      // per size and client
    int burst = 100000;          // the claim path's bursts (stale statistics, aggregate order)
    int pausedBacklog = 1000000; // paused events older than the rest (the paused phase)
    // Which measurements to run (see --only).
    QStringList phases{QStringLiteral("db"),        QStringLiteral("http"),
                       QStringLiteral("nginx"),     QStringLiteral("sizes"),
                       QStringLiteral("latency"),   QStringLiteral("claim-path"),
                       QStringLiteral("paused"),    QStringLiteral("kafka"),
                       QStringLiteral("isolation"), QStringLiteral("burn-down")};
};

// The dispatcher's targets, checked against one run's figures (runBenchmark's
// JSON): those of the phases that ran.
QList<Check> checkTargets(const QJsonObject &figures);

// Progress lines for people ("loading 50000 events..."); may be empty.
using Progress = std::function<void(const QString &line)>;

// Runs the phases of `options` and returns every figure they measured, under
// the keys docs/PERFORMANCE.md lists (rates per second, latencies in
// milliseconds): the median of each per-round figure under its name and every
// round under name + "_rounds" (each round's pair runs back to back, so a
// change in the machine's load affects both sides of a ratio alike); an
// object per phase (latency_by_size, claim_path, paused, kafka, isolation,
// burn_down); the verdicts (targets, all_targets_pass) and the environment.
// Needs a QCoreApplication and an event loop-free caller (it runs its own
// loops). Errors name the phase that failed.
core::Result<QJsonObject> runBenchmark(const BenchOptions &options, const Progress &progress);

} // namespace outbox::bench
