#include "bench/benchmark.h"
#include "bench/harness.h"
#include "bench/isolation.h"
#include "bench/kafka.h"
#include "bench/paused.h"
#include "bench/report.h"
#include "cli/output.h"
#include "devtools/cli/toolcommands.h"

#include <QJsonArray>
#include <QLoggingCategory>

#include <algorithm>

namespace outbox::cli {

namespace {

QString rate(double perSecond) {
    return QString::number(perSecond, 'f', 0) + QStringLiteral(" /s");
}

QString ms(double value) {
    return QString::number(value, 'f', 2) + QStringLiteral(" ms");
}

void printHuman(QTextStream &out, const bench::BenchResults &r) {
    const auto rounds = [&r](const char *key) { return r.rounds.value(QLatin1String(key)); };
    const auto latency = [&r](const char *key) {
        return ms(r.latency.value(QLatin1String(key)).toDouble());
    };
    Table figures({QStringLiteral("figure"), QStringLiteral("value")});
    figures.setRightAligned(1);
    // Only the phases that ran (--only) have figures.
    if (!rounds("db_ceiling_rounds").isEmpty()) {
        figures.addRow({QStringLiteral("database ceiling (claim+ack loop)"),
                        rate(bench::median(rounds("db_ceiling_rounds")))});
        figures.addRow({QStringLiteral("database only (dispatcher, in-process publisher)"),
                        rate(bench::median(rounds("db_only_rounds")))});
    }
    if (!rounds("http_ceiling_rounds").isEmpty()) {
        figures.addRow({QStringLiteral("HTTP ceiling (QNetworkAccessManager x%1, no database)")
                            .arg(r.httpManagers),
                        rate(bench::median(rounds("http_ceiling_rounds")))});
        figures.addRow({QStringLiteral("end to end (dispatcher, HTTP publisher, per event)"),
                        rate(bench::median(rounds("e2e_rounds")))});
        figures.addRow({QStringLiteral("end to end duplicates at the runner"),
                        QString::number(r.e2eDuplicates)});
    }
    if (!rounds("nginx_e2e_rounds").isEmpty()) {
        figures.addRow({QStringLiteral("HTTP ceiling against nginx (204, no database)"),
                        rate(bench::median(rounds("nginx_http_ceiling_rounds")))});
        figures.addRow(
            {QStringLiteral("end to end to nginx / its ceiling"),
             rate(bench::median(rounds("nginx_e2e_rounds"))) + QStringLiteral(" / ") +
                 QString::number(bench::median(rounds("nginx_e2e_ratio_rounds")) * 100, 'f', 0) +
                 QLatin1Char('%')});
    }
    for (const QStringList &row : bench::deliveryRows(r))
        figures.addRow(row);
    const auto perRound = [](const QList<double> &ratios) {
        QStringList parts;
        for (double value : ratios)
            parts.append(QString::number(value * 100.0, 'f', 0) + QLatin1Char('%'));
        return parts.join(QStringLiteral(" "));
    };
    const auto ratesPerRound = [](const QList<double> &ceilings, const QList<double> &runs) {
        QStringList parts;
        for (qsizetype i = 0; i < std::min(ceilings.size(), runs.size()); ++i)
            parts.append(QString::number(runs.at(i), 'f', 0) + QLatin1Char('/') +
                         QString::number(ceilings.at(i), 'f', 0));
        return parts.join(QStringLiteral(" "));
    };
    if (rounds("db_only_ratio_rounds").size() > 1) {
        figures.addRow({QStringLiteral("database only / ceiling, per round"),
                        perRound(rounds("db_only_ratio_rounds"))});
        figures.addRow({QStringLiteral("  events/s per round (dispatcher/ceiling)"),
                        ratesPerRound(rounds("db_ceiling_rounds"), rounds("db_only_rounds"))});
    }
    if (rounds("e2e_ratio_rounds").size() > 1) {
        figures.addRow({QStringLiteral("end to end / HTTP ceiling, per round"),
                        perRound(rounds("e2e_ratio_rounds"))});
        figures.addRow({QStringLiteral("  events/s per round (dispatcher/ceiling)"),
                        ratesPerRound(rounds("http_ceiling_rounds"), rounds("e2e_rounds"))});
    }
    if (rounds("e2e_db_only_ratio_rounds").size() > 1)
        figures.addRow({QStringLiteral("end to end / database only, per round"),
                        perRound(rounds("e2e_db_only_ratio_rounds"))});
    if (r.latency.value(QLatin1String("latency_events")).toInt() > 0) {
        figures.addRow(
            {QStringLiteral("commit->delivered p50 / p90 (%1 events)")
                 .arg(r.latency.value(QLatin1String("latency_events")).toInt()),
             latency("latency_p50_ms") + QStringLiteral(" / ") + latency("latency_p90_ms")});
        figures.addRow(
            {QStringLiteral("commit->delivered p99 / max"),
             latency("latency_p99_ms") + QStringLiteral(" / ") + latency("latency_max_ms")});
        figures.addRow({QStringLiteral("transaction start->delivered p50 / p99"),
                        latency("latency_from_transaction_start_p50_ms") + QStringLiteral(" / ") +
                            latency("latency_from_transaction_start_p99_ms")});
        figures.addRow({QStringLiteral("HTTP request p50 / p99 (low load)"),
                        latency("latency_http_p50_ms") + QStringLiteral(" / ") +
                            latency("latency_http_p99_ms")});
    }
    const auto burnDownRows = [&](const QJsonObject &b, const QString &label) {
        if (b.isEmpty())
            return;
        const auto at = [&b](const char *key) { return b.value(QLatin1String(key)).toDouble(); };
        figures.addRow({QStringLiteral("%1 (%2 events, %3 s): first / last %4 s")
                            .arg(label)
                            .arg(qint64(at("events")))
                            .arg(at("seconds"), 0, 'f', 1)
                            .arg(at("window_s"), 0, 'f', 1),
                        rate(at("first_window_events_per_s")) + QStringLiteral(" / ") +
                            rate(at("last_window_events_per_s"))});
        figures.addRow({QStringLiteral("%1: RSS start / max / end, autovacuums").arg(label),
                        QStringLiteral("%1 / %2 / %3 MB, %4")
                            .arg(at("rss_mb_start"), 0, 'f', 1)
                            .arg(at("rss_mb_max"), 0, 'f', 1)
                            .arg(at("rss_mb_end"), 0, 'f', 1)
                            .arg(qint64(at("autovacuum_runs")))});
        QStringList rates;
        const QJsonArray windows = b.value(QStringLiteral("window_rates")).toArray();
        for (const QJsonValue &value : windows)
            rates.append(QString::number(value.toDouble(), 'f', 0));
        figures.addRow(
            {QStringLiteral("%1: events/s per %2 s").arg(label).arg(at("window_s"), 0, 'f', 1),
             rates.join(QLatin1Char(' '))});
    };
    burnDownRows(r.burnDown, QStringLiteral("burn-down"));
    if (!r.retention.isEmpty())
        figures.addRow(
            {QStringLiteral("database only without / with retention deleting %1 rows")
                 .arg(r.retention.value(QLatin1String("deleted_during_run")).toInteger()),
             rate(r.retention.value(QLatin1String("without_events_per_s")).toDouble()) +
                 QStringLiteral(" / ") +
                 rate(r.retention.value(QLatin1String("with_events_per_s")).toDouble())});
    if (!r.claimPath.isEmpty()) {
        const auto c = [&r](const char *key) {
            return rate(r.claimPath.value(QLatin1String(key)).toDouble());
        };
        const qint64 burst = r.claimPath.value(QLatin1String("events")).toInteger();
        figures.addRow({QStringLiteral("burst of %1 into stale / fresh statistics").arg(burst),
                        c("stale_statistics_events_per_s") + QStringLiteral(" / ") +
                            c("fresh_statistics_events_per_s")});
        figures.addRow({QStringLiteral("%1 over %2 aggregates: aggregate order / unordered")
                            .arg(burst)
                            .arg(std::max<qint64>(burst / 10, 1)),
                        c("aggregate_order_events_per_s") + QStringLiteral(" / ") +
                            c("unordered_events_per_s")});
        figures.addRow({QStringLiteral("unordered, aggregate-order index off / on (%1)")
                            .arg(bench::percent(
                                r.claimPath.value(QLatin1String("index_off_ratio")).toDouble())),
                        c("unordered_events_per_s") + QStringLiteral(" / ") +
                            c("unordered_indexed_events_per_s")});
    }
    for (const auto &[figure, value] :
         bench::pausedFigures(r.paused) + bench::kafkaFigures(r.kafka))
        figures.addRow({figure, value});
    for (const auto &[figure, value] : bench::isolationFigures(r.isolation))
        figures.addRow({figure, value});
    figures.print(out);
    out << '\n';

    bench::printChecks(
        out, bench::checkTargets(r),
        {QStringLiteral("target"), QStringLiteral("measured"), QStringLiteral("goal"), QString()});
    const QJsonObject env = r.environment;
    out << '\n'
        << bench::describeMachine(env) << ", load average at start "
        << env.value(QStringLiteral("load_average_at_start")).toString() << ", "
        << env.value(QStringLiteral("date")).toString() << '\n';
}

} // namespace

int runBench(CommandContext &context) {
    CommandParser parser(
        context,
        QStringLiteral("Measure the dispatcher on a private PostgreSQL cluster and a development "
                       "runner, in one run: the database ceiling and the database-only "
                       "dispatcher, the HTTP ceilings and the end-to-end dispatcher per event and "
                       "in batches (to the runner and to nginx), request latency by body size, "
                       "commit-to-delivered latency at low load, the claim path "
                       "(a burst into stale statistics, delivery in aggregate order), delivery "
                       "beside a paused backlog, delivery to Kafka (a mock cluster), one "
                       "destination's delivery beside a failing one, and a large burn-down (rate "
                       "and memory). Prints "
                       "each figure with its target and "
                       "PASS/FAIL."),
        CommandParser::Database::NotNeeded);
    // A whole number of at least `min` (and at most a hundred million).
    const auto count = [](const char *spec, const char *help, int &target, qint64 min) {
        return integerOption(spec, help, target, min, 100000000);
    };
    bench::BenchOptions options;
    parser.addOptions({
        option("json", "Print one JSON object with every figure instead of tables."),
        option("quick",
               "CI size: 10000 events per phase, bursts of 5000, 300 latency events, a 50000-event "
               "burn-down and paused backlog."),
        count("events <n>", "Events per throughput phase (default 50000).", options.events, 100),
        count("repeat <n>", "Rounds of the throughput phases; medians are reported (default 1).",
              options.repeat, 1),
        count("burn-down <n>", "Backlog for the burn-down (default 1000000; 0 skips it).",
              options.burnDown, 0),
        count("retention-history <n>",
              "Also measure delivery with retention deleting this many old delivered events "
              "(default 0: skip).",
              options.retentionHistory, 0),
        count("latency-events <n>", "Events in the latency phase (default 1000).",
              options.latencyEvents, 10),
        durationOption("latency-interval <duration>", "Time between latency events (default 10ms).",
                       options.latencyInterval),
        count("concurrency <n>", "HTTP requests in flight (default 64).", options.concurrency, 1),
        count("batch-size <n>", "Rows per claim (default 500, the dispatcher's).",
              options.batchSize, 1),
        option("delivery", "How the latency phase delivers: per-event (default) or batch.", "mode"),
        durationOption("notify-debounce <duration>",
                       "The dispatcher's NOTIFY debounce (default 0ms).", options.notifyDebounce),
        count("burst <n>", "Events of the claim path's bursts (default 100000).", options.burst,
              100),
        count("paused-backlog <n>",
              "Paused events older than the rest in the paused phase (default 1000000).",
              options.pausedBacklog, 1000),
        option("durable", "fsync and synchronous_commit on, as in production (the default)."),
        option("no-durable", "fsync and synchronous_commit off (faster, like the tests)."),
        option("only",
               "Run only these measurements, comma-separated: db, http, nginx, sizes, latency, "
               "claim-path, paused, kafka, isolation, burn-down.",
               "list"),
        option("strict", "Exit 1 when a target is missed."),
    });
    parser.setEpilog(
        QStringLiteral("Example:\n  outboxctl bench            # full run, a few minutes\n"
                       "  outboxctl bench --quick --json"));
    if (const auto stop = parser.parseOptionsOnly())
        return *stop;

    if (parser.isSet(QStringLiteral("quick"))) {
        options.events = 10000;
        options.latencyEvents = 300;
        options.burnDown = 50000;
        options.burst = 5000;
        options.sizeRequests = 30;
        options.pausedBacklog = 50000;
    }
    if (auto read = parser.readOptions(); !read)
        return parser.fail(read.error());
    if (options.latencyInterval.count() < 1)
        return parser.usageError(QStringLiteral("--latency-interval must be at least 1ms"));
    if (parser.isSet(QStringLiteral("only"))) {
        const QStringList known = options.phases;
        options.phases.clear();
        const QStringList wanted =
            parser.value(QStringLiteral("only")).split(QLatin1Char(','), Qt::SkipEmptyParts);
        for (const QString &phase : wanted) {
            const QString name = phase.trimmed().toLower();
            if (!known.contains(name))
                return parser.usageError(QStringLiteral("--only: '%1' is not a measurement; use "
                                                        "some of %2")
                                             .arg(name, known.join(QStringLiteral(", "))));
            options.phases.append(name);
        }
    }
    if (parser.isSet(QStringLiteral("delivery"))) {
        const auto delivery = core::deliveryNamed(parser.value(QStringLiteral("delivery")));
        if (!delivery)
            return parser.usageError(QStringLiteral("--delivery: use per-event or batch"));
        options.delivery = *delivery;
    }
    if (parser.isSet(QStringLiteral("durable")) && parser.isSet(QStringLiteral("no-durable")))
        return parser.usageError(QStringLiteral("--durable and --no-durable contradict each "
                                                "other; give one (durable is the default)"));
    options.durable = !parser.isSet(QStringLiteral("no-durable"));

    // The library's per-event debug lines would drown the figures.
    QLoggingCategory::setFilterRules(QStringLiteral("outbox.*.debug=false\noutbox.*.info=false"));
    QTextStream &err = context.console.err();
    const bool json = parser.isSet(QStringLiteral("json"));
    auto results = bench::runBenchmark(
        options, [&](const QString &line) { err << "bench: " << line << Qt::endl; });
    if (!results)
        return parser.fail(results.error());

    if (json)
        context.console.out() << jsonText(bench::resultsJson(results.value())) << Qt::endl;
    else
        printHuman(context.console.out(), results.value());
    if (parser.isSet(QStringLiteral("strict"))) {
        if (!bench::allPass(bench::checkTargets(results.value())))
            return ExitFailure;
    }
    return ExitOk;
}

} // namespace outbox::cli
