#include "bench/benchmark.h"
#include "bench/harness.h"
#include "bench/report.h"
#include "cli/output.h"
#include "devtools/cli/toolcommands.h"

#include <QLoggingCategory>

namespace outbox::cli {

namespace {

void printHuman(QTextStream &out, const QJsonObject &figures) {
    bench::printChecks(
        out, bench::checkTargets(figures),
        {QStringLiteral("target"), QStringLiteral("measured"), QStringLiteral("goal"), QString()});
    out << '\n';
    // Every figure under its --json key (docs/PERFORMANCE.md says what each is).
    bench::printFigures(out, figures,
                        {QStringLiteral("targets"), QStringLiteral("all_targets_pass"),
                         QStringLiteral("environment")});
    const QJsonObject env = figures.value(QLatin1String("environment")).toObject();
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
        context.console.out() << jsonText(results.value()) << Qt::endl;
    else
        printHuman(context.console.out(), results.value());
    if (parser.isSet(QStringLiteral("strict")) &&
        !results->value(QLatin1String("all_targets_pass")).toBool())
        return ExitFailure;
    return ExitOk;
}

} // namespace outbox::cli
