#include "bench/benchmark.h"

#include "bench/dispatch.h"
#include "bench/harness.h"
#include "bench/isolation.h"
#include "bench/kafka.h"
#include "bench/paused.h"
#include "core/uuidv7.h"
#include "devtools/httpload.h"
#include "devtools/httpsinks.h"
#include "devtools/inprocesspublisher.h"
#include "store/migrator.h"
#include "store/outboxstore.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QScopeGuard>
#include <QThread>

#include <algorithm>
#include <tuple>

namespace outbox::bench {

namespace {

const QString kThroughputTopic = QStringLiteral("bench.throughput");
const QString kBurnDownTopic = QStringLiteral("bench.burndown");

// Prefixes an error with the phase it happened in.
template <typename T> core::Result<T> in(const QString &phase, core::Result<T> result) {
    if (!result)
        return core::Error{result.error().kind,
                           phase + QStringLiteral(": ") + result.errorMessage()};
    return result;
}

// Delivered count at `seconds`, interpolated between samples.
double deliveredAt(const QList<DeliverySample> &samples, double seconds) {
    for (qsizetype i = 1; i < samples.size(); ++i) {
        const DeliverySample &a = samples.at(i - 1), &b = samples.at(i);
        if (seconds <= b.seconds) {
            const double span = b.seconds - a.seconds;
            const double f = span > 0 ? std::clamp((seconds - a.seconds) / span, 0.0, 1.0) : 1.0;
            return double(a.delivered) + f * double(b.delivered - a.delivered);
        }
    }
    return samples.isEmpty() ? 0.0 : double(samples.last().delivered);
}

double rate(qint64 events, double seconds) {
    return seconds > 0 ? double(events) / seconds : 0.0;
}

// The database ceiling: on one connection, claim `batchSize` rows and ack
// them in one statement, in a plain loop until the outbox is empty; no
// dispatcher, no event loop. Returns rows per second.
core::Result<double> databaseCeiling(BenchCluster &database, int expected, int batchSize) {
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
        return failure(
            QStringLiteral("acknowledged %1 of %2 events").arg(acknowledged).arg(expected));
    return double(acknowledged) * 1e9 / double(elapsed);
}

// One run: the cluster, the runner, and the figures so far.
class Benchmark final {
public:
    Benchmark(const BenchOptions &options, const Progress &report)
        : o(options)
        , progress(report) {}

    core::Result<QJsonObject> run();

private:
    // The dispatcher on the benchmark's cluster: database only (the
    // in-process publisher) or posting to the runner.
    DispatchPlan plan(bool http, qint64 target, const QUrl &url = {}) const;
    core::Result<void> load(int events, const QString &topic) {
        return database.sql().loadUniform(events, topic, o.payloadBytes);
    }
    core::Result<void> databasePair(const QString &suffix);
    core::Result<void> httpPair(const QString &suffix, bool toNginx);
    core::Result<void> latency();
    core::Result<void> latencyBySize();
    core::Result<QJsonObject> burnDown();
    core::Result<QJsonObject> claimPath();
    QJsonObject environment() const;

    const BenchOptions &o;
    const Progress &progress;
    BenchCluster database;
    devtools::RunnerProcess runner;
    devtools::NginxProcess nginx;
    Rounds rounds;    // per-round figures by name (roundsJson)
    QJsonObject json; // the rest of the figures
};

DispatchPlan Benchmark::plan(bool http, qint64 target, const QUrl &url) const {
    DispatchPlan plan;
    plan.connInfo = database.connInfo();
    // Without HTTP the runner URL is a placeholder, never contacted.
    plan.config.runnerUrl = !http           ? QUrl(QStringLiteral("http://127.0.0.1:9/unused"))
                            : url.isEmpty() ? runner.url()
                                            : url;
    if (http)
        plan.config.secrets = {runner.secret()};
    plan.config.batchSize = o.batchSize;
    // The in-process publisher's slots in the database-only phases: at
    // least a claim's worth.
    plan.config.concurrency = http ? o.concurrency : std::max(100, o.batchSize);
    // The dispatcher's own defaults otherwise (batch bounds, timeouts...).
    plan.config.lease = core::Millis(30000);
    plan.config.pollInterval = core::Millis(1000);
    plan.config.requestTimeout = core::Millis(10000);
    if (!http)
        plan.publisherFactory = [] { return std::make_unique<devtools::InProcessPublisher>(); };
    plan.options.statsInterval = core::Millis(10); // the end of a run is seen within 10 ms
    plan.options.notifyDebounce = o.notifyDebounce;
    plan.options.applicationName = QStringLiteral("outboxctl-bench");
    plan.target = target;
    return plan;
}

// The database ceiling, then the dispatcher with the in-process publisher
// (the same work plus the dispatcher's machinery).
core::Result<void> Benchmark::databasePair(const QString &suffix) {
    progress(QStringLiteral("database ceiling: %1 events, batch %2%3...")
                 .arg(o.events)
                 .arg(o.batchSize)
                 .arg(suffix));
    const QString ceilingPhase = QStringLiteral("database ceiling");
    if (auto loaded = in(ceilingPhase, load(o.events, kThroughputTopic)); !loaded)
        return loaded;
    auto ceiling = in(ceilingPhase, databaseCeiling(database, o.events, o.batchSize));
    if (!ceiling)
        return ceiling.error();
    progress(QStringLiteral("database only: the dispatcher with the in-process publisher%1...")
                 .arg(suffix));
    if (auto loaded = in(QStringLiteral("database only"), load(o.events, kThroughputTopic));
        !loaded)
        return loaded;
    auto run = in(QStringLiteral("database only"), runDispatcher(plan(false, o.events)));
    if (!run)
        return run.error();
    const double dbOnly = rate(o.events, run->seconds);
    rounds[QStringLiteral("db_ceiling_events_per_s")] << ceiling.value();
    rounds[QStringLiteral("db_only_events_per_s")] << dbOnly;
    rounds[QStringLiteral("db_only_ratio")].append(ceiling.value() > 0 ? dbOnly / ceiling.value()
                                                                       : 0.0);
    return {};
}

// The HTTP ceilings (the runner, or nginx; no database): QNetworkAccessManager
// alone and the dispatcher's client alone; then the dispatcher end to end,
// per event and in batches. The events are loaded (and the table vacuumed
// and checkpointed) first, so that no ceiling runs beside the database's
// clean-up of the previous phase.
core::Result<void> Benchmark::httpPair(const QString &suffix, bool toNginx) {
    const QUrl url = toNginx ? nginx.url() : runner.url();
    const QString key = toNginx ? QStringLiteral("nginx_") : QString();
    const QString to = (toNginx ? QStringLiteral(" (nginx)") : QString()) + suffix;
    QMap<QString, double> rates;
    for (const bool qnam : {true, false}) {
        const QString phase = qnam ? QStringLiteral("HTTP ceiling, QNetworkAccessManager")
                                   : QStringLiteral("HTTP ceiling, the dispatcher's client");
        if (auto loaded = in(phase, qnam ? load(o.events, kThroughputTopic) : core::Result<void>());
            !loaded)
            return loaded;
        progress(QStringLiteral("%1: %2 requests, %3 in flight%4...")
                     .arg(phase)
                     .arg(o.events)
                     .arg(o.concurrency)
                     .arg(to));
        // The warm-up opens the connections (the dispatcher keeps its own open too).
        auto http =
            in(phase, devtools::postLoad(qnam ? devtools::HttpClientKind::Qnam
                                              : devtools::HttpClientKind::Webhook,
                                         url, runner.secret(), o.payloadBytes, o.concurrency,
                                         std::min(o.events, 2000), o.events));
        if (http && http->failures > 0)
            http = failure(QStringLiteral("%1: %2 requests failed").arg(phase).arg(http->failures));
        if (!http)
            return http.error();
        if (qnam)
            json.insert(QStringLiteral("http_managers"), http->managers);
        rates[qnam ? QStringLiteral("http_only_requests_per_s")
                   : QStringLiteral("client_only_requests_per_s")] =
            rate(o.events, double(http->elapsedNs) / 1e9);
    }
    for (const auto delivery : {core::Delivery::PerEvent, core::Delivery::Batch}) {
        const bool batch = delivery == core::Delivery::Batch;
        const QString phase = QStringLiteral("end to end, ") % core::deliveryName(delivery);
        if (auto loaded =
                in(phase, batch ? load(o.events, kThroughputTopic) : core::Result<void>());
            !loaded)
            return loaded;
        progress(QStringLiteral("%1: the dispatcher posting to it%2...").arg(phase, to));
        auto before = in(phase, runner.counts());
        DispatchPlan e2e = plan(true, o.events, url);
        e2e.config.delivery = delivery;
        auto run = before ? in(phase, runDispatcher(e2e)) : before.error();
        auto after = run ? in(phase, runner.counts()) : run.error();
        if (!after)
            return after.error();
        json.insert(QStringLiteral("e2e_duplicates"),
                    json.value(QLatin1String("e2e_duplicates")).toInteger() + after->duplicates -
                        before->duplicates);
        if (after->badSignatures != before->badSignatures)
            return failure(QStringLiteral("%1: the runner refused %2 signatures")
                               .arg(phase)
                               .arg(after->badSignatures - before->badSignatures));
        rates[batch ? QStringLiteral("e2e_batch_events_per_s")
                    : QStringLiteral("e2e_events_per_s")] = rate(o.events, run->seconds);
    }
    for (auto it = rates.cbegin(); it != rates.cend(); ++it)
        rounds[key + it.key()] << it.value();
    rounds[key + QStringLiteral("e2e_ratio")]
        << rates[QStringLiteral("e2e_events_per_s")] /
               std::max(rates[QStringLiteral("http_only_requests_per_s")], 1e-9);
    if (const QList<double> dbOnly = rounds.value(QStringLiteral("db_only_events_per_s"));
        !toNginx && !dbOnly.isEmpty()) // this round's
        rounds[QStringLiteral("e2e_db_only_ratio")]
            << rates[QStringLiteral("e2e_batch_events_per_s")] / dbOnly.last();
    return {};
}

// For each body size, requests one at a time over a warm connection, through
// the dispatcher's client and QNetworkAccessManager: p50, p99, max and the
// requests of 20 ms or more (a Nagle/delayed-ACK stall costs 40 ms).
core::Result<void> Benchmark::latencyBySize() {
    progress(QStringLiteral("latency by body size: %1 requests per size...").arg(o.sizeRequests));
    QJsonArray rows;
    for (const int bytes : o.sizes) {
        QJsonObject row{{QStringLiteral("bytes"), bytes}};
        for (const auto kind :
             {devtools::HttpClientKind::Webhook, devtools::HttpClientKind::Qnam}) {
            auto load = devtools::postLoad(kind, runner.url(), runner.secret(), bytes, 1, 3,
                                           o.sizeRequests);
            if (load && load->failures > 0)
                load = failure(QStringLiteral("%1 requests of %2 bytes failed")
                                   .arg(load->failures)
                                   .arg(bytes));
            if (!load)
                return load.error();
            const QList<double> &ms = load->latenciesMs;
            const auto stalls =
                std::count_if(ms.begin(), ms.end(), [](double v) { return v >= 20; });
            row.insert(kind == devtools::HttpClientKind::Qnam ? QStringLiteral("qnam")
                                                              : QStringLiteral("client"),
                       QJsonObject{{QStringLiteral("p50_ms"), rounded(percentile(ms, 0.5), 3)},
                                   {QStringLiteral("p99_ms"), rounded(percentile(ms, 0.99), 3)},
                                   {QStringLiteral("max_ms"), rounded(percentile(ms, 1.0), 3)},
                                   {QStringLiteral("over_20_ms"), qint64(stalls)}});
        }
        rows.append(row);
    }
    json.insert(QStringLiteral("latency_by_size"), rows);
    return {};
}

// Commit -> delivered at low load, HTTP included: a producer commits one
// event every latencyInterval while the dispatcher runs.
core::Result<void> Benchmark::latency() {
    progress(QStringLiteral("latency: one event every %1 for %2 events...")
                 .arg(core::formatDuration(o.latencyInterval))
                 .arg(o.latencyEvents));
    const QString phase = QStringLiteral("latency");
    if (auto emptied = in(phase, database.sql().truncate()); !emptied)
        return emptied;
    Producer producer(
        database.connInfo(),
        {{QStringLiteral("bench")}, {QStringLiteral("bench.latency")}, 1, o.payloadBytes},
        o.latencyInterval, o.latencyEvents);
    DispatchPlan latency = plan(true, o.latencyEvents);
    latency.config.delivery = o.delivery;
    latency.onStarted = [&] { producer.start(); };
    auto run = in(phase, runDispatcher(latency));
    producer.stop();
    // A producer that could not enqueue explains a run that stalled.
    if (!producer.lastError().isEmpty())
        return failure(phase + QStringLiteral(": ") + producer.lastError());
    if (!run)
        return run.error();
    auto figures = in(phase, database.sql().latency(producer.events()));
    if (!figures)
        return figures.error();
    QJsonObject measured = figures.value();
    measured.insert(QStringLiteral("latency_http_p50_ms"),
                    double(run->stats.httpDuration.p50()) / 1000.0);
    measured.insert(QStringLiteral("latency_http_p99_ms"),
                    double(run->stats.httpDuration.p99()) / 1000.0);
    for (auto it = measured.begin(); it != measured.end(); ++it)
        json.insert(it.key(), rounded(it.value().toDouble(), 3));
    return {};
}

// A large backlog, database only: does the rate hold, does memory stay flat?
core::Result<QJsonObject> Benchmark::burnDown() {
    progress(QStringLiteral("burn-down: loading %1 events...").arg(o.burnDown));
    if (auto loaded = load(o.burnDown, kBurnDownTopic); !loaded)
        return loaded.error();
    auto vacuumsBefore = database.sql().autovacuumCount();
    if (!vacuumsBefore)
        return vacuumsBefore.error();
    progress(QStringLiteral("burn-down: dispatching (database only)..."));
    auto run = runDispatcher(plan(false, o.burnDown));
    if (!run)
        return run.error();
    QThread::msleep(1100); // pg_stat counters are flushed about once a second
    auto vacuumsAfter = database.sql().autovacuumCount();
    if (!vacuumsAfter)
        return vacuumsAfter.error();

    const double total = run->seconds;
    const double window = std::min(10.0, total / 4.0);
    double first = 0;
    double last = 0;
    QList<double> windows; // the whole run in windows of one length, to see where it slows
    if (window > 0) {
        first = deliveredAt(run->samples, window) / window;
        last = (double(o.burnDown) - deliveredAt(run->samples, total - window)) / window;
        for (double from = 0; from + window <= total + 1e-9; from += window)
            windows.append(
                (deliveredAt(run->samples, from + window) - deliveredAt(run->samples, from)) /
                window);
    }
    return QJsonObject{
        {QStringLiteral("events"), o.burnDown},
        {QStringLiteral("seconds"), rounded(total, 2)},
        {QStringLiteral("window_s"), rounded(window, 2)},
        {QStringLiteral("first_window_events_per_s"), rounded(first, 0)},
        {QStringLiteral("last_window_events_per_s"), rounded(last, 0)},
        {QStringLiteral("average_events_per_s"), rounded(rate(o.burnDown, total), 0)},
        {QStringLiteral("ratio"), rounded(first > 0 ? last / first : 0.0, 3)},
        {QStringLiteral("rss_mb_start"), rounded(run->rssMbStart, 1)},
        {QStringLiteral("rss_mb_max"), rounded(run->rssMbMax, 1)},
        {QStringLiteral("rss_mb_end"), rounded(run->rssMbEnd, 1)},
        {QStringLiteral("autovacuum_runs"), vacuumsAfter.value() - vacuumsBefore.value()},
        {QStringLiteral("window_rates"), roundedArray(windows, 0)},
    };
}

// A burst into statistics taken while nothing was pending (3 x burst
// delivered rows, VACUUM ANALYZE, the dispatcher started in that quiet
// state), against the same burst followed by ANALYZE; then `burst` events
// over burst / 10 aggregates, unordered without and with the index of
// aggregate order (`migrate --aggregate-order`), then in aggregate order.
// Database only; a burst commits in one transaction, its rate counts from there.
core::Result<QJsonObject> Benchmark::claimPath() {
    store::BenchQueries &sql = database.sql();
    const auto insert = [&](bool delivered, int aggregates, qint64 events) {
        return store::inTransaction(sql.database(), QStringLiteral("loading"), [&] {
            return sql.insertEvents(
                {events, kThroughputTopic, o.payloadBytes, delivered, aggregates});
        });
    };
    enum class Load { Burst, BurstThenAnalyze, Aggregates, AggregatesIndexed };
    QJsonObject out;
    for (const auto &[key, load, ordering] :
         {std::tuple{"stale_statistics_events_per_s", Load::Burst, core::Ordering::None},
          {"fresh_statistics_events_per_s", Load::BurstThenAnalyze, core::Ordering::None},
          {"unordered_events_per_s", Load::Aggregates, core::Ordering::None},
          {"unordered_indexed_events_per_s", Load::AggregatesIndexed, core::Ordering::None},
          {"aggregate_order_events_per_s", Load::AggregatesIndexed, core::Ordering::Aggregate}}) {
        progress(
            QStringLiteral("claim path: %1 events, %2...").arg(o.burst).arg(QLatin1String(key)));
        const bool burst = load == Load::Burst || load == Load::BurstThenAnalyze;
        if (load == Load::AggregatesIndexed)
            if (auto on = store::Migrator(sql.database()).enableAggregateOrder(); !on)
                return on.error();
        auto loaded = sql.truncate();
        if (loaded)
            loaded = burst ? insert(true, 0, 3 * qint64(o.burst))
                           : insert(false, std::max(o.burst / 10, 1), o.burst);
        if (loaded)
            loaded = sql.vacuumAndCheckpoint();
        if (!loaded)
            return loaded.error();
        DispatchPlan run = plan(false, o.burst);
        run.config.ordering = ordering;
        core::Result<void> inserted;
        double insertSeconds = 0;
        if (burst)
            run.onStarted = [&] {
                QElapsedTimer clock;
                clock.start();
                inserted = insert(false, 0, o.burst);
                if (inserted && load == Load::BurstThenAnalyze)
                    inserted = sql.exec(QStringLiteral("ANALYZE outbox_events"),
                                        QStringLiteral("analyze after the burst"));
                insertSeconds = double(clock.nsecsElapsed()) / 1e9;
            };
        auto ran = runDispatcher(run);
        if (!ran || !inserted)
            return ran ? inserted.error() : ran.error();
        out.insert(QLatin1String(key), rounded(rate(o.burst, ran->seconds - insertSeconds), 0));
    }
    for (const auto &[key, a, b] :
         {std::tuple{"stale_ratio", "stale_statistics_events_per_s",
                     "fresh_statistics_events_per_s"},
          {"aggregate_order_ratio", "aggregate_order_events_per_s", "unordered_events_per_s"},
          {"index_off_ratio", "unordered_events_per_s", "unordered_indexed_events_per_s"}}) {
        const double below = out.value(QLatin1String(b)).toDouble();
        out.insert(QLatin1String(key),
                   rounded(below > 0 ? out.value(QLatin1String(a)).toDouble() / below : 0.0, 3));
    }
    out.insert(QStringLiteral("events"), o.burst);
    auto off = sql.exec(QStringLiteral("DROP INDEX outbox_events_aggregate_idx"), QString());
    return off ? core::Result<QJsonObject>(out) : off.error();
}

QJsonObject Benchmark::environment() const {
    return machineJson(database.serverVersion(),
                       {
                           {QStringLiteral("load_average_at_start"), loadAverage()},
                           {QStringLiteral("durable"), o.durable},
                           {QStringLiteral("events"), o.events},
                           {QStringLiteral("repeat"), o.repeat},
                           {QStringLiteral("batch_size"), o.batchSize},
                           {QStringLiteral("concurrency"), o.concurrency},
                           {QStringLiteral("notify_debounce_ms"), qint64(o.notifyDebounce.count())},
                           {QStringLiteral("flush_delay_ms"),
                            qint64(dispatch::DispatcherOptions().flushDelay.count())},
                           {QStringLiteral("payload_bytes"), o.payloadBytes},
                           {QStringLiteral("delivery"), core::deliveryName(o.delivery)},
                           {QStringLiteral("phases"), QJsonArray::fromStringList(o.phases)},
                       });
}

core::Result<QJsonObject> Benchmark::run() {
    progress(QStringLiteral("starting a PostgreSQL cluster..."));
    devtools::EmbeddedPostgres::Options cluster;
    cluster.fastAndUnsafe = !o.durable;
    // Commit times of the producer's transactions, for commit -> delivered.
    cluster.serverSettings << QStringLiteral("track_commit_timestamp=on");
    if (auto started = in(QStringLiteral("cluster"), database.start(cluster)); !started)
        return started.error();
    json.insert(QStringLiteral("environment"), environment()); // the load average at the start

    progress(QStringLiteral("starting the development runner..."));
    if (auto started = in(QStringLiteral("runner"), runner.start()); !started)
        return started.error();
    const bool nginxRan = o.phases.contains(QLatin1String("nginx"));
    if (nginxRan) {
        progress(QStringLiteral("starting nginx..."));
        if (auto started = in(QStringLiteral("nginx"), nginx.start()); !started)
            return started.error();
    }

    // Warm-up: the claim/ack loop on a few thousand rows, so that the first
    // measured phase does not pay for cold caches.
    const int warmUp = std::min(o.events, 5000);
    if (auto loaded = in(QStringLiteral("warm-up"), load(warmUp, kThroughputTopic)); !loaded)
        return loaded.error();
    if (auto warm = in(QStringLiteral("warm-up"), databaseCeiling(database, warmUp, o.batchSize));
        !warm)
        return warm.error();

    // Each pair (ceiling, then the dispatcher) runs back to back, `repeat`
    // times: the machine may be busy with other work, and a pair sees the
    // same conditions on both sides far more often than two distant runs.
    const bool dbRan = o.phases.contains(QLatin1String("db"));
    const bool httpRan = o.phases.contains(QLatin1String("http"));
    for (int round = 1; round <= o.repeat; ++round) {
        const QString suffix =
            o.repeat > 1 ? QStringLiteral(" (round %1 of %2)").arg(round).arg(o.repeat) : QString();
        if (dbRan) {
            if (auto done = databasePair(suffix); !done)
                return done.error();
        }
        for (const bool toNginx : {false, true}) {
            if (!(toNginx ? nginxRan : httpRan))
                continue;
            if (auto done = httpPair(suffix, toNginx); !done)
                return done.error();
        }
    }
    if (o.phases.contains(QLatin1String("sizes"))) {
        if (auto measured = in(QStringLiteral("latency by body size"), latencyBySize()); !measured)
            return measured.error();
    }
    if (o.phases.contains(QLatin1String("latency"))) {
        if (auto measured = latency(); !measured)
            return measured.error();
    }
    // The phases reporting one object each: `name` of --only, in order.
    const auto phase = [&](const char *name, const QString &what, const QString &key,
                           const std::function<core::Result<QJsonObject>()> &measure) {
        if (!o.phases.contains(QLatin1String(name)))
            return core::Result<void>();
        auto measured = in(what, measure());
        if (measured)
            json.insert(key, measured.value());
        return measured ? core::Result<void>() : measured.error();
    };
    const auto dbOnly = [this](qint64 target) { return plan(false, target); };
    auto done = phase("isolation", QStringLiteral("isolation"), QStringLiteral("isolation"), [&] {
        return measureIsolation(
            database, o, [this](qint64 target) { return plan(true, target); }, progress);
    });
    runner.stop();
    nginx.stop();
    if (done)
        done = phase("claim-path", QStringLiteral("claim path"), QStringLiteral("claim_path"),
                     [this] { return claimPath(); });
    if (done)
        done = phase("paused", QStringLiteral("paused backlog"), QStringLiteral("paused"),
                     [&] { return measurePausedBacklog(database, o, dbOnly, progress); });
    if (done)
        done = phase("kafka", QStringLiteral("kafka"), QStringLiteral("kafka"), [&] {
            return measureKafka(
                o, dbOnly, [this](int events) { return load(events, kThroughputTopic); }, progress);
        });
    if (done && o.burnDown > 0)
        done = phase("burn-down", QStringLiteral("burn-down"), QStringLiteral("burn_down"),
                     [this] { return burnDown(); });
    if (!done)
        return done.error();
    QJsonObject out = roundsJson(rounds);
    for (auto it = json.begin(); it != json.end(); ++it)
        out.insert(it.key(), it.value());
    // The main burn-down figures at the top level too, as before the
    // burn-down had an object of its own.
    const QJsonObject burnDown = json.value(QLatin1String("burn_down")).toObject();
    for (const auto &[key, figure] : {std::pair{"burn_down_events", "events"},
                                      {"burn_down_first_events_per_s", "first_window_events_per_s"},
                                      {"burn_down_last_events_per_s", "last_window_events_per_s"},
                                      {"burn_down_ratio", "ratio"}})
        if (!burnDown.isEmpty())
            out.insert(QLatin1String(key), burnDown.value(QLatin1String(figure)));
    out.insert(QStringLiteral("rss_mb_max"), burnDown.isEmpty()
                                                 ? rounded(residentMb(), 1)
                                                 : burnDown.value(QLatin1String("rss_mb_max")));
    const QList<Check> checks = checkTargets(out);
    out.insert(QStringLiteral("targets"),
               checksJson(checks, QStringLiteral("name"), QStringLiteral("value")));
    out.insert(QStringLiteral("all_targets_pass"), allPass(checks));
    return out;
}

} // namespace

core::Result<QJsonObject> runBenchmark(const BenchOptions &options, const Progress &report) {
    const Progress progress = report ? report : [](const QString &) {};
    return Benchmark(options, progress).run();
}

} // namespace outbox::bench
