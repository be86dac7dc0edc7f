#include "bench/benchmark.h"
#include "bench/harness.h"
#include "cli/commands.h"
#include "cli/output.h"

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
    figures.addRow({QStringLiteral("database ceiling (claim+ack loop)"),
                    rate(bench::median(rounds("db_ceiling_rounds")))});
    figures.addRow({QStringLiteral("database only (dispatcher, in-process publisher)"),
                    rate(bench::median(rounds("db_only_rounds")))});
    figures.addRow({QStringLiteral("HTTP ceiling (QNetworkAccessManager x%1, no database)")
                        .arg(r.httpManagers),
                    rate(bench::median(rounds("http_ceiling_rounds")))});
    figures.addRow({QStringLiteral("end to end (dispatcher, HTTP publisher)"),
                    rate(bench::median(rounds("e2e_rounds")))});
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
    figures.addRow(
        {QStringLiteral("end to end duplicates at the runner"), QString::number(r.e2eDuplicates)});
    figures.addRow({QStringLiteral("commit->delivered p50 / p90 (%1 events)")
                        .arg(r.latency.value(QLatin1String("latency_events")).toInt()),
                    latency("latency_p50_ms") + QStringLiteral(" / ") + latency("latency_p90_ms")});
    figures.addRow({QStringLiteral("commit->delivered p99 / max"),
                    latency("latency_p99_ms") + QStringLiteral(" / ") + latency("latency_max_ms")});
    figures.addRow({QStringLiteral("transaction start->delivered p50 / p99"),
                    latency("latency_from_transaction_start_p50_ms") + QStringLiteral(" / ") +
                        latency("latency_from_transaction_start_p99_ms")});
    figures.addRow(
        {QStringLiteral("HTTP request p50 / p99 (low load)"),
         latency("latency_http_p50_ms") + QStringLiteral(" / ") + latency("latency_http_p99_ms")});
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
                       "dispatcher, the HTTP ceiling and the end-to-end dispatcher, "
                       "commit-to-delivered latency at low load, and a large burn-down (rate and "
                       "memory). Prints each figure with its target and PASS/FAIL."),
        CommandParser::Database::NotNeeded);
    const auto option = [](const char *name, const char *help, const char *value = nullptr) {
        return value ? QCommandLineOption(QLatin1String(name), QLatin1String(help),
                                          QLatin1String(value))
                     : QCommandLineOption(QLatin1String(name), QLatin1String(help));
    };
    parser.addOptions({
        option("json", "Print one JSON object with every figure instead of tables."),
        option("quick",
               "CI size: 10000 events per phase, 300 latency events, a 50000-event burn-down."),
        option("events", "Events per throughput phase (default 50000).", "n"),
        option("repeat", "Rounds of the throughput phases; medians are reported (default 1).", "n"),
        option("burn-down", "Backlog for the burn-down (default 1000000; 0 skips it).", "n"),
        option("latency-events", "Events in the latency phase (default 1000).", "n"),
        option("latency-interval", "Time between latency events (default 10ms).", "duration"),
        option("concurrency", "HTTP requests in flight (default 64).", "n"),
        option("batch-size", "Rows per claim (default 100).", "n"),
        option("notify-debounce", "The dispatcher's NOTIFY debounce (default 0ms).", "duration"),
        option("durable", "fsync and synchronous_commit on (default off, like the tests)."),
        option("only",
               "Run only these measurements, comma-separated: db, http, latency, burn-down.",
               "list"),
        option("strict", "Exit 1 when a target is missed."),
    });
    parser.setEpilog(
        QStringLiteral("Example:\n  outboxctl bench            # full run, a few minutes\n"
                       "  outboxctl bench --quick --json"));
    if (const auto stop = parser.parse())
        return *stop;
    if (!parser.positionalArguments().isEmpty())
        return parser.usageError(
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));

    bench::BenchOptions options;
    if (parser.isSet(QStringLiteral("quick"))) {
        options.events = 10000;
        options.latencyEvents = 300;
        options.burnDown = 50000;
    }
    for (auto [name, target, min] :
         {std::tuple{QStringLiteral("events"), &options.events, 100},
          std::tuple{QStringLiteral("repeat"), &options.repeat, 1},
          std::tuple{QStringLiteral("burn-down"), &options.burnDown, 0},
          std::tuple{QStringLiteral("latency-events"), &options.latencyEvents, 10},
          std::tuple{QStringLiteral("concurrency"), &options.concurrency, 1},
          std::tuple{QStringLiteral("batch-size"), &options.batchSize, 1}}) {
        auto value = parser.integer(name, *target, min, 100000000);
        if (!value)
            return parser.fail(value.error());
        *target = int(value.value());
    }
    for (auto [name, target] :
         {std::pair{QStringLiteral("latency-interval"), &options.latencyInterval},
          std::pair{QStringLiteral("notify-debounce"), &options.notifyDebounce}}) {
        auto value = parser.duration(name);
        if (!value)
            return parser.fail(value.error());
        if (value.value())
            *target = *value.value();
    }
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
    options.durable = parser.isSet(QStringLiteral("durable"));

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
