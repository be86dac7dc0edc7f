#include "bench/benchmark.h"

#include "bench/benchrunner.h"
#include "bench/dispatchrun.h"
#include "bench/harness.h"
#include "bench/httpceiling.h"
#include "bench/producer.h"
#include "core/uuidv7.h"
#include "devtools/inprocesspublisher.h"
#include "store/outboxstore.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QScopeGuard>
#include <QSysInfo>
#include <QThread>

#include <algorithm>

namespace outbox::bench {

namespace {

const QString kThroughputTopic = QStringLiteral("bench.throughput");
const QString kLatencyTopic = QStringLiteral("bench.latency");
const QString kBurnDownTopic = QStringLiteral("bench.burndown");

core::Error phaseError(const QString &phase, const core::Error &error) {
    return core::Error{error.kind, phase + QStringLiteral(": ") + error.message};
}

// A dispatcher configuration for the benchmark; the runner URL is a
// placeholder for the in-process publisher (never contacted).
core::DispatcherConfig dispatcherConfig(const BenchOptions &options, const QUrl &url,
                                        const QString &secret, int concurrency) {
    core::DispatcherConfig config;
    config.runnerUrl = url.isEmpty() ? QUrl(QStringLiteral("http://127.0.0.1:9/unused")) : url;
    if (!secret.isEmpty())
        config.secrets = {secret};
    config.batchSize = options.batchSize;
    config.concurrency = concurrency;
    config.lease = core::Millis(30000);
    config.pollInterval = core::Millis(1000);
    config.requestTimeout = core::Millis(10000);
    return config;
}

dispatch::DispatcherOptions dispatcherOptions(const BenchOptions &options) {
    dispatch::DispatcherOptions result;
    result.statsInterval = core::Millis(10); // the end of a run is seen within 10 ms
    result.notifyDebounce = options.notifyDebounce;
    if (options.flushDelay)
        result.flushDelay = *options.flushDelay;
    result.applicationName = QStringLiteral("outboxctl-bench");
    return result;
}

dispatch::PublisherFactory inProcess() {
    return [] { return std::make_unique<devtools::InProcessPublisher>(); };
}

// Delivered count at `seconds`, interpolated between samples.
double deliveredAt(const QList<DeliverySample> &samples, double seconds) {
    if (samples.isEmpty())
        return 0.0;
    if (seconds <= samples.first().seconds)
        return double(samples.first().delivered);
    for (qsizetype i = 1; i < samples.size(); ++i) {
        const DeliverySample &a = samples.at(i - 1);
        const DeliverySample &b = samples.at(i);
        if (seconds <= b.seconds) {
            const double span = b.seconds - a.seconds;
            const double f = span > 0 ? (seconds - a.seconds) / span : 1.0;
            return double(a.delivered) + f * double(b.delivered - a.delivered);
        }
    }
    return double(samples.last().delivered);
}

// The database ceiling: on one connection, claim `batchSize` rows and ack
// them in one statement, in a plain loop until the outbox is empty; no
// dispatcher, no event loop. Returns rows per second.
core::Result<double> measureDatabaseCeiling(BenchCluster &database, int expected, int batchSize) {
    // The same session setting as the dispatcher's connection (StoreConnection).
    if (auto set = database.sql().forceGenericPlans(true); !set)
        return set.error();
    const auto reset = qScopeGuard([&] { (void)database.sql().forceGenericPlans(false); });
    store::OutboxStore store(database.sql().database());
    const QUuid worker = core::createUuidV7();
    store::ClaimOptions options;
    options.batchSize = batchSize;
    options.lease = core::Millis(30000);
    options.maxAttempts = 10;
    qint64 acknowledged = 0;
    QList<store::Ack> acks;
    acks.reserve(batchSize);
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        auto claimed = store.claimBatch(worker, options);
        if (!claimed)
            return claimed.error();
        if (claimed->isEmpty())
            break;
        acks.clear();
        for (const store::ClaimedEvent &event : claimed.value())
            acks.append(store::Ack{event.id, event.attempts});
        auto acked = store.ack(worker, acks);
        if (!acked)
            return acked.error();
        acknowledged += acked->applied;
    }
    const qint64 elapsed = clock.nsecsElapsed();
    if (acknowledged != expected)
        return failure(QStringLiteral("database ceiling: acknowledged %1 of %2 events")
                           .arg(acknowledged)
                           .arg(expected));
    return double(acknowledged) * 1e9 / double(elapsed);
}

using Pair = std::pair<double, double>; // ceiling, dispatcher

// The database ceiling, then the dispatcher with the in-process publisher
// (the same work plus the dispatcher's machinery).
core::Result<Pair> databasePair(BenchCluster &database, const BenchOptions &options,
                                const Progress &progress, const QString &suffix) {
    progress(QStringLiteral("database ceiling: %1 events, batch %2%3...")
                 .arg(options.events)
                 .arg(options.batchSize)
                 .arg(suffix));
    if (auto loaded =
            database.sql().loadUniform(options.events, kThroughputTopic, options.payloadBytes);
        !loaded)
        return phaseError(QStringLiteral("database ceiling"), loaded.error());
    auto ceiling = measureDatabaseCeiling(database, options.events, options.batchSize);
    if (!ceiling)
        return phaseError(QStringLiteral("database ceiling"), ceiling.error());

    progress(QStringLiteral("database only: the dispatcher with the in-process publisher%1...")
                 .arg(suffix));
    if (auto loaded =
            database.sql().loadUniform(options.events, kThroughputTopic, options.payloadBytes);
        !loaded)
        return phaseError(QStringLiteral("database only"), loaded.error());
    DispatchPlan plan;
    plan.connInfo = database.connInfo();
    plan.config = dispatcherConfig(options, {}, {}, options.dbConcurrency);
    plan.publisherFactory = inProcess();
    plan.options = dispatcherOptions(options);
    plan.target = options.events;
    auto run = runDispatcher(plan);
    if (!run)
        return phaseError(QStringLiteral("database only"), run.error());
    return Pair{ceiling.value(), run->seconds > 0 ? double(options.events) / run->seconds : 0.0};
}

// The HTTP ceiling (the runner, no database), then the dispatcher end to
// end with the HTTP publisher. The events are loaded (and the table vacuumed
// and checkpointed) first, so that the ceiling never runs beside the
// database's clean-up of the previous phase.
core::Result<Pair> httpPair(BenchCluster &database, BenchRunner &runner,
                            const BenchOptions &options, const Progress &progress,
                            const QString &suffix, BenchResults &results) {
    if (auto loaded =
            database.sql().loadUniform(options.events, kThroughputTopic, options.payloadBytes);
        !loaded)
        return phaseError(QStringLiteral("end to end"), loaded.error());
    progress(QStringLiteral("HTTP ceiling: %1 requests, %2 in flight%3...")
                 .arg(options.events)
                 .arg(options.concurrency)
                 .arg(suffix));
    const CpuMeter meter(runner.processId(), database.serverProcessId());
    auto http = measureHttpCeiling(runner.url(), runner.secret(), options.events,
                                   options.concurrency, options.payloadBytes, meter);
    if (!http)
        return phaseError(QStringLiteral("HTTP ceiling"), http.error());
    if (http->failures > 0)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("HTTP ceiling: %1 requests failed").arg(http->failures)};
    results.httpManagers = http->managers;

    progress(QStringLiteral("end to end: the dispatcher posting to the runner%1...").arg(suffix));
    auto before = runner.counts();
    if (!before)
        return phaseError(QStringLiteral("end to end"), before.error());
    DispatchPlan plan;
    plan.connInfo = database.connInfo();
    plan.config = dispatcherConfig(options, runner.url(), runner.secret(), options.concurrency);
    plan.options = dispatcherOptions(options);
    plan.target = options.events;
    plan.meter = &meter;
    auto run = runDispatcher(plan);
    if (!run)
        return phaseError(QStringLiteral("end to end"), run.error());
    results.httpCeilingCpu.append(http->cpu);
    results.e2eCpu.append(run->cpu);
    auto after = runner.counts();
    if (!after)
        return phaseError(QStringLiteral("end to end"), after.error());
    results.e2eDuplicates += after->duplicates - before->duplicates;
    if (after->badSignatures != before->badSignatures)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("end to end: the runner refused %1 signatures")
                               .arg(after->badSignatures - before->badSignatures)};
    return Pair{http->requestsPerSecond,
                run->seconds > 0 ? double(options.events) / run->seconds : 0.0};
}

// Commit -> delivered at low load, HTTP included: a producer commits one
// event every latencyInterval while the dispatcher runs.
core::Result<void> latencyPhase(BenchCluster &database, BenchRunner &runner,
                                const BenchOptions &options, const Progress &progress,
                                BenchResults &results) {
    progress(QStringLiteral("latency: one event every %1 for %2 events...")
                 .arg(core::formatDuration(options.latencyInterval))
                 .arg(options.latencyEvents));
    if (auto emptied = database.sql().truncate(); !emptied)
        return phaseError(QStringLiteral("latency"), emptied.error());
    {
        store::ProduceBatch batch{
            {QStringLiteral("bench")}, {kLatencyTopic}, 1, options.payloadBytes};
        Producer producer(database.connInfo(), batch, options.latencyInterval,
                          options.latencyEvents);
        DispatchPlan plan;
        plan.connInfo = database.connInfo();
        plan.config = dispatcherConfig(options, runner.url(), runner.secret(), options.concurrency);
        plan.options = dispatcherOptions(options);
        plan.target = options.latencyEvents;
        plan.onStarted = [&] { producer.start(); };
        auto run = runDispatcher(plan);
        producer.stop();
        if (!run)
            return phaseError(QStringLiteral("latency"), run.error());
        if (!producer.lastError().isEmpty())
            return phaseError(QStringLiteral("latency"), failure(producer.lastError()));
        results.httpP50 = double(run->stats.httpDuration.p50()) / 1000.0;
        results.httpP99 = double(run->stats.httpDuration.p99()) / 1000.0;
        auto figures = database.sql().latency(producer.events());
        if (!figures)
            return phaseError(QStringLiteral("latency"), figures.error());
        results.latencyCount = int(figures->count);
        results.latencyP50 = figures->p50;
        results.latencyP90 = figures->p90;
        results.latencyP99 = figures->p99;
        results.latencyMax = figures->max;
        results.latencyFromStartP50 = figures->fromStartP50;
        results.latencyFromStartP99 = figures->fromStartP99;
    }
    results.latencyRan = true;
    return {};
}

core::Result<BenchResults::BurnDown> burnDown(BenchCluster &database, const BenchOptions &options,
                                              const QString &vacuumSettings,
                                              const Progress &progress) {
    BenchResults::BurnDown result;
    result.vacuumSettings = vacuumSettings;
    result.events = options.burnDown;
    progress(QStringLiteral("burn-down (%1 vacuum settings): loading %2 events...")
                 .arg(vacuumSettings)
                 .arg(options.burnDown));
    if (auto loaded =
            database.sql().loadUniform(options.burnDown, kBurnDownTopic, options.payloadBytes);
        !loaded)
        return loaded.error();
    auto vacuumsBefore = database.sql().autovacuumCount();
    if (!vacuumsBefore)
        return vacuumsBefore.error();
    progress(QStringLiteral("burn-down: dispatching (database only)..."));
    DispatchPlan plan;
    plan.connInfo = database.connInfo();
    plan.config = dispatcherConfig(options, {}, {}, options.dbConcurrency);
    plan.publisherFactory = inProcess();
    plan.options = dispatcherOptions(options);
    plan.target = options.burnDown;
    plan.sampleEvery = core::Millis(100);
    plan.timeout = core::Millis(1800000);
    auto run = runDispatcher(plan);
    if (!run)
        return run.error();
    QThread::msleep(1100); // pg_stat counters are flushed about once a second
    auto vacuumsAfter = database.sql().autovacuumCount();
    if (!vacuumsAfter)
        return vacuumsAfter.error();

    const double total = run->seconds;
    const double window = std::min(10.0, total / 4.0);
    result.ran = true;
    result.seconds = total;
    result.windowSeconds = window;
    result.averageRate = total > 0 ? double(options.burnDown) / total : 0.0;
    if (window > 0) {
        result.firstRate = deliveredAt(run->samples, window) / window;
        result.lastRate =
            (double(options.burnDown) - deliveredAt(run->samples, total - window)) / window;
        // The whole run in windows of the same length, to see where it slows.
        for (double from = 0; from + window <= total + 1e-9; from += window) {
            result.windowRates.append(
                (deliveredAt(run->samples, from + window) - deliveredAt(run->samples, from)) /
                window);
        }
    }
    result.rssMbStart = run->rssMbStart;
    result.rssMbMax = run->rssMbMax;
    result.rssMbEnd = run->rssMbEnd;
    result.autovacuums = vacuumsAfter.value() - vacuumsBefore.value();
    return result;
}

QJsonObject environment(const BenchOptions &options, const BenchCluster &database) {
    return QJsonObject{
        {QStringLiteral("date"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("cpus"), QThread::idealThreadCount()},
        {QStringLiteral("cpu_model"), cpuModel()},
        {QStringLiteral("load_average_at_start"), loadAverage()},
        {QStringLiteral("kernel"), QSysInfo::kernelVersion()},
        {QStringLiteral("os"), QSysInfo::prettyProductName()},
        {QStringLiteral("qt"), QString::fromLatin1(qVersion())},
        {QStringLiteral("postgresql"), database.serverVersion()},
        {QStringLiteral("durable"), options.durable},
        {QStringLiteral("events"), options.events},
        {QStringLiteral("repeat"), options.repeat},
        {QStringLiteral("batch_size"), options.batchSize},
        {QStringLiteral("concurrency"), options.concurrency},
        {QStringLiteral("db_concurrency"), options.dbConcurrency},
        {QStringLiteral("notify_debounce_ms"), qint64(options.notifyDebounce.count())},
        {QStringLiteral("flush_delay_ms"),
         qint64(options.flushDelay.value_or(dispatch::DispatcherOptions().flushDelay).count())},
        {QStringLiteral("runner"), options.runner == RunnerPlacement::Process
                                       ? QStringLiteral("process")
                                       : QStringLiteral("thread")},
        {QStringLiteral("payload_bytes"), options.payloadBytes},
        {QStringLiteral("phases"), QJsonArray::fromStringList(options.phases)},
    };
}

} // namespace

core::Result<BenchResults> runBenchmark(const BenchOptions &options, const Progress &report) {
    const Progress progress = report ? report : [](const QString &) {};
    BenchResults results;
    results.eventsPerPhase = options.events;

    progress(QStringLiteral("starting a PostgreSQL cluster..."));
    BenchCluster database;
    devtools::EmbeddedPostgres::Options cluster;
    cluster.fastAndUnsafe = !options.durable;
    // Commit times of the producer's transactions, for commit -> delivered.
    cluster.serverSettings << QStringLiteral("track_commit_timestamp=on");
    if (auto started = database.start(cluster); !started)
        return phaseError(QStringLiteral("cluster"), started.error());
    results.environment = environment(options, database);

    progress(QStringLiteral("starting the development runner..."));
    BenchRunner runner;
    if (auto started = runner.start(options.runner, options.runnerProgram); !started)
        return phaseError(QStringLiteral("runner"), started.error());

    // Warm-up: the claim/ack loop on a few thousand rows, so that the first
    // measured phase does not pay for cold caches.
    const int warmUp = std::min(options.events, 5000);
    if (auto loaded = database.sql().loadUniform(warmUp, kThroughputTopic, options.payloadBytes);
        !loaded)
        return phaseError(QStringLiteral("warm-up"), loaded.error());
    if (auto warm = measureDatabaseCeiling(database, warmUp, options.batchSize); !warm)
        return phaseError(QStringLiteral("warm-up"), warm.error());

    // Each pair (ceiling, then the dispatcher) runs back to back, `repeat`
    // times: the machine may be busy with other work, and a pair sees the
    // same conditions on both sides far more often than two distant runs.
    QList<double> dbCeilings, dbOnly, httpCeilings, e2e;
    for (int round = 1; round <= options.repeat; ++round) {
        const QString suffix =
            options.repeat > 1 ? QStringLiteral(" (round %1 of %2)").arg(round).arg(options.repeat)
                               : QString();
        if (options.phases.contains(QLatin1String("db"))) {
            auto db = databasePair(database, options, progress, suffix);
            if (!db)
                return db.error();
            dbCeilings.append(db->first);
            dbOnly.append(db->second);
            results.dbRatios.append(db->first > 0 ? db->second / db->first : 0.0);
            results.dbRan = true;
        }
        if (options.phases.contains(QLatin1String("http"))) {
            auto http = httpPair(database, runner, options, progress, suffix, results);
            if (!http)
                return http.error();
            httpCeilings.append(http->first);
            e2e.append(http->second);
            results.e2eRatios.append(http->first > 0 ? http->second / http->first : 0.0);
            results.httpRan = true;
        }
    }
    results.dbCeilingRounds = dbCeilings;
    results.dbOnlyRounds = dbOnly;
    results.httpCeilingRounds = httpCeilings;
    results.e2eRounds = e2e;
    results.dbCeilingPerSecond = median(dbCeilings);
    results.dbOnlyPerSecond = median(dbOnly);
    results.dbRatio = median(results.dbRatios);
    results.httpCeilingPerSecond = median(httpCeilings);
    results.e2ePerSecond = median(e2e);
    results.e2eRatio = median(results.e2eRatios);

    if (options.phases.contains(QLatin1String("latency"))) {
        if (auto measured = latencyPhase(database, runner, options, progress, results); !measured)
            return measured.error();
    }
    runner.stop();

    // 6. Burn-down of a large backlog, database only: does the rate hold,
    //    does memory stay flat? Then once more without the migration's
    //    vacuum settings, to show what they are for.
    if (options.burnDown > 0 && options.phases.contains(QLatin1String("burn-down"))) {
        auto tuned = burnDown(database, options, QStringLiteral("table"), progress);
        if (!tuned)
            return phaseError(QStringLiteral("burn-down"), tuned.error());
        results.burnDown = tuned.value();
        if (options.compareVacuum) {
            if (auto reset = database.sql().resetVacuumSettings(); !reset)
                return phaseError(QStringLiteral("burn-down"), reset.error());
            auto untuned = burnDown(database, options, QStringLiteral("reset"), progress);
            if (!untuned)
                return phaseError(QStringLiteral("burn-down without vacuum settings"),
                                  untuned.error());
            results.burnDownNoVacuumSettings = untuned.value();
        }
    }
    results.rssMbMax = results.burnDown.ran ? results.burnDown.rssMbMax : residentMb();
    return results;
}

} // namespace outbox::bench
