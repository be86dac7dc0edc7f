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

// What the benchmark measured. Rates are per second; latencies milliseconds.
struct BenchResults {
    bool dbRan = false; // which phases ran (the others' figures are 0)
    bool httpRan = false;

    // Per round under their JSON keys (docs/PERFORMANCE.md): rates per
    // second (db_ceiling_rounds, http_ceiling_rounds, e2e_batch_rounds, ...)
    // and their ratios (db_only_ratio_rounds, e2e_ratio_rounds, ...).
    // Reports give the medians (each round's pair runs back to back, so a
    // change in the machine's load affects both sides of a ratio alike).
    QMap<QString, QList<double>> rounds;
    qint64 e2eDuplicates = 0; // the runner's count: must be 0 when nothing crashed
    int httpManagers = 0;

    // Latencies in milliseconds under their JSON keys: latency_events,
    // latency_p50_ms, _p90_ms, _p99_ms and _max_ms (commit -> delivered),
    // latency_from_transaction_start_p50_ms and _p99_ms, and
    // latency_http_p50_ms and _p99_ms (request duration inside the
    // dispatcher, low load). Empty when it did not run.
    QJsonObject latency;
    // Per body size: bytes, and for "client" (WebhookClient) and "qnam":
    // p50_ms, p99_ms, max_ms, over_20_ms. Empty when it did not run.
    QJsonArray latencyBySize;

    // The burn-down's figures under their JSON keys: events, seconds, window_s (the length of
    // the first and last windows), first_window_events_per_s,
    // last_window_events_per_s, average_events_per_s, ratio (last / first),
    // rss_mb_start, rss_mb_max, rss_mb_end, autovacuum_runs (on
    // outbox_events during the burn-down) and window_rates (events/s in
    // consecutive windows of window_s). Empty when it did not run.
    QJsonObject burnDown;
    // The claim path (database only): events/s of a burst into stale and into
    // fresh statistics, of unordered and aggregate-ordered claims, and the
    // ratios stale_ratio, aggregate_order_ratio. Empty when it did not run.
    QJsonObject claimPath;
    // The paused backlog (bench/paused.h): the rest's rate with nothing and
    // with pausedBacklog events paused, and their ratio; the claim's mean time
    // and an idle dispatcher's database time per second for both; resuming
    // and pausing that backlog. Empty when it did not run.
    QJsonObject paused;
    double rssMbMax = 0; // the benchmark process over the whole run
    QJsonObject kafka;   // bench/kafka.h; empty when it did not run
    // Isolation between destinations (bench/isolation.h). Empty when it did
    // not run.
    QJsonObject isolation;

    QJsonObject environment; // cpus, PostgreSQL version, Qt version, options...
};

// The dispatcher's targets, checked against one run's figures.
QList<Check> checkTargets(const BenchResults &results);

// One JSON object with every figure (keys in snake_case, e.g.
// db_only_events_per_s, latency_p99_ms) and the verdicts.
QJsonObject resultsJson(const BenchResults &results);

// Progress lines for people ("loading 50000 events..."); may be empty.
using Progress = std::function<void(const QString &line)>;

// Runs every phase. Needs a QCoreApplication and an event loop-free caller
// (it runs its own loops). Errors name the phase that failed.
core::Result<BenchResults> runBenchmark(const BenchOptions &options, const Progress &progress);

} // namespace outbox::bench
