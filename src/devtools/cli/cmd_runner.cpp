#include "cli/logging.h"
#include "cli/output.h"
#include "cli/serviceutil.h"
#include "core/logline.h"
#include "devtools/cli/toolcommands.h"
#include "devtools/devrunner.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonObject>
#include <QLoggingCategory>

namespace outbox::cli {

namespace {

struct ModeName {
    QLatin1StringView name;
    devtools::DevRunnerSettings::Mode mode;
};

constexpr ModeName kModes[] = {
    {QLatin1StringView("normal"), devtools::DevRunnerSettings::Mode::Normal},
    {QLatin1StringView("redirect"), devtools::DevRunnerSettings::Mode::Redirect},
    {QLatin1StringView("close"), devtools::DevRunnerSettings::Mode::CloseWithoutResponse},
    {QLatin1StringView("reset"), devtools::DevRunnerSettings::Mode::ResetMidResponse},
    {QLatin1StringView("never"), devtools::DevRunnerSettings::Mode::NeverRespond},
};

// The runner's counters under their names in the log lines (statsJson() uses
// the same names).
struct StatsCounter {
    core::LogKey name;
    qint64 devtools::DevRunnerStats::*value;
};

constexpr StatsCounter kStatsCounters[] = {
    {"received", &devtools::DevRunnerStats::received},
    {"delivered", &devtools::DevRunnerStats::delivered},
    {"failed", &devtools::DevRunnerStats::failed},
    {"bad_signatures", &devtools::DevRunnerStats::badSignatures},
    {"duplicates", &devtools::DevRunnerStats::duplicates},
    {"unique", &devtools::DevRunnerStats::uniqueIds},
    {"connections", &devtools::DevRunnerStats::connections},
    {"batches", &devtools::DevRunnerStats::batches},
};

QJsonObject statsJson(const devtools::DevRunnerStats &stats) {
    return QJsonObject{
        {QStringLiteral("connections"), stats.connections},
        {QStringLiteral("received"), stats.received},
        {QStringLiteral("delivered"), stats.delivered},
        {QStringLiteral("failed"), stats.failed},
        {QStringLiteral("bad_signatures"), stats.badSignatures},
        {QStringLiteral("duplicates"), stats.duplicates},
        {QStringLiteral("unique"), stats.uniqueIds},
        {QStringLiteral("batches"), stats.batches},
    };
}

core::LogLine statsFields(const devtools::DevRunnerStats &stats) {
    core::LogLine fields;
    for (const StatsCounter &counter : kStatsCounters)
        fields.add(counter.name, stats.*counter.value);
    return fields;
}

core::Result<devtools::DevRunnerSettings::Mode> parseMode(const QString &text) {
    const QString name = text.trimmed().toLower();
    QStringList names;
    for (const ModeName &mode : kModes) {
        if (name == mode.name)
            return mode.mode;
        names.append(QString(mode.name));
    }
    return usage(QStringLiteral("--mode '%1' is unknown; use one of %2")
                     .arg(name, names.join(QStringLiteral(", "))));
}

// The runner's behaviour beyond a plain value; errors name the flag.
core::Result<void> readFailRate(const CommandParser &parser,
                                devtools::DevRunnerSettings &settings) {
    auto failRate = parser.number(QStringLiteral("fail-rate"), 0.0, 0.0);
    if (!failRate)
        return failRate.error();
    if (failRate.value() > 1.0)
        return usage(QStringLiteral("--fail-rate must be between 0 and 1 (e.g. 0.2 fails one "
                                    "request in five)"));
    settings.failRate = failRate.value();
    return {};
}

core::Result<QByteArray> parseRetryAfter(const QString &text) {
    const QString value = text.trimmed();
    if (value.isEmpty() || value.contains(QLatin1Char('\n')))
        return usage(QStringLiteral("--retry-after needs a value such as 5 (seconds) or an "
                                    "HTTP date"));
    return value.toLatin1();
}

QLatin1StringView modeName(devtools::DevRunnerSettings::Mode mode) {
    for (const ModeName &entry : kModes) {
        if (entry.mode == mode)
            return entry.name;
    }
    return QLatin1StringView("normal");
}

// The options and the epilog `outboxctl runner --help` prints; all but
// --listen are read into `settings` and `statsInterval`.
void addRunnerOptions(CommandParser &parser, devtools::DevRunnerSettings &settings,
                      core::Millis &statsInterval) {
    parser.addOptions({
        QCommandLineOption(QStringLiteral("listen"),
                           QStringLiteral("Address to listen on (default 127.0.0.1:8080; port 0 "
                                          "picks a free port, printed on stdout)."),
                           QStringLiteral("host:port"), QStringLiteral("127.0.0.1:8080")),
        option("secret",
               "Standard Webhooks secret (whsec_...) to verify signatures with; repeat during a "
               "rotation. Visible in `ps`: prefer --secret-file. Default: $OUTBOX_RUNNER_SECRET "
               "(space-separated); none = no verification.",
               "secret"),
        secretFileOption("Read the secrets from a file, one per line.", settings.secrets,
                         QStringLiteral("secret")),
        customOption("fail-rate <p>",
                     "Share of requests (0..1) answered with --fail-status; in a batch, share of "
                     "its events listed as failed.",
                     settings, readFailRate),
        flagOption("fail-permanent", "A batch lists its failed events as permanent (dead at once).",
                   settings.failPermanent),
        integerOption("fail-status <code>", "Status of the failures (default 503).",
                      settings.failStatus, 300, 599),
        integerOption("status <code>",
                      "Answer every verified request with this status (e.g. 500 or 410).",
                      settings.fixedStatus, 100, 599),
        timerOption("latency <duration>",
                    "Delay before each answer, e.g. 20ms (requests are not blocked).",
                    settings.latency),
        parsedOption("retry-after <value>",
                     "Retry-After value sent with every non-2xx answer, e.g. 5.",
                     settings.retryAfter, parseRetryAfter),
        parsedOption("mode <mode>",
                     "normal (default), redirect (302), close (drop the connection without an "
                     "answer), reset (half an answer, then drop), never (no answer: timeouts).",
                     settings.mode, parseMode),
        timerOption("stats-interval <duration>",
                    "How often to log the counters (default 10s; 0s = only at exit).",
                    statsInterval),
        option("stats-json", "On exit print the counters as one JSON object on stdout."),
        option("verbose", "Log every request."),
    });
    parser.setEpilog(QStringLiteral(
        "GET on any path answers the counters as text (received=... delivered=... "
        "duplicates=... unique_ids=...).\n"
        "A request with the header Outbox-Batch is a batch ({\"events\": [...]}, see "
        "docs/RUNNER-CONTRACT.md): it is\nanswered {\"failed\": [...]}, --fail-rate applying to "
        "each event, and counted per event.\n"
        "SIGINT or SIGTERM stops the runner and logs the final counters (exit 0).\n"
        "\n"
        "Example:\n"
        "  outboxctl runner --listen 127.0.0.1:8080 --secret-file secret.txt --fail-rate 0.1 "
        "--latency 20ms"));
}

void logReady(const devtools::DevRunner &runner, const devtools::DevRunnerSettings &s) {
    qCInfo(lcCli) << core::LogLine("runner_ready")
                         .add("url", runner.url().toString())
                         .add("signatures", s.secrets.isEmpty()
                                                ? QStringLiteral("off")
                                                : QStringLiteral("on(%1)").arg(s.secrets.size()))
                         .add("fail_rate", QString::number(s.failRate))
                         .add("fail_status", s.failStatus)
                         .add("status", s.fixedStatus)
                         .add("latency", core::formatDuration(s.latency))
                         .add("mode", modeName(s.mode));
}

// Serves until SIGINT or SIGTERM, logging the counters and the request rate
// since the previous line every `statsEvery` (0 = never).
void serveUntilInterrupted(const devtools::DevRunner &runner, core::Millis statsEvery) {
    QEventLoop loop;
    QElapsedTimer clock;
    clock.start();
    qint64 lastReceived = 0;
    qint64 lastAt = 0;
    QTimer statsTimer;
    QObject::connect(&statsTimer, &QTimer::timeout, &loop, [&] {
        const devtools::DevRunnerStats now = runner.stats();
        const qint64 at = clock.elapsed();
        const double rate =
            at > lastAt ? double(now.received - lastReceived) * 1000.0 / double(at - lastAt) : 0.0;
        lastReceived = now.received;
        lastAt = at;
        qCInfo(lcCli) << core::LogLine("runner_stats")
                             .add(statsFields(now))
                             .add("rate_per_s", QString::number(rate, 'f', 1));
    });
    if (statsEvery.count() > 0)
        statsTimer.start(statsEvery);

    InterruptWatcher interrupt([&] {
        qCInfo(lcCli) << core::LogLine("signal").add("action", "stop");
        loop.quit();
    });
    loop.exec();
}

} // namespace

int runRunner(CommandContext &context) {
    CommandParser parser(
        context,
        QStringLiteral("Run a development runner: an HTTP endpoint that receives events from "
                       "`outboxctl dispatch`, verifies their Standard Webhooks signatures (401 "
                       "on a bad one), counts deliveries and duplicates per webhook-id, and can "
                       "fail on purpose. For local development, tests and benchmarks; not for "
                       "production."),
        CommandParser::Database::NotNeeded);
    devtools::DevRunnerSettings settings;
    core::Millis statsInterval(10000);
    addRunnerOptions(parser, settings, statsInterval);
    if (const auto stop = parser.parseOptionsOnly())
        return *stop;

    auto address =
        parseListenAddress(QStringLiteral("listen"), parser.value(QStringLiteral("listen")));
    if (!address)
        return parser.usageError(address.errorMessage());
    if (auto read = parser.readOptions(); !read)
        return parser.fail(read.error());

    installServiceLogging(parser.isSet(QStringLiteral("verbose")));
    devtools::DevRunner runner;
    if (auto applied = runner.setSettings(settings); !applied)
        return parser.fail(core::Error{core::ErrorKind::Invalid, applied.errorMessage()});
    if (auto listening = runner.listen(address->first, address->second); !listening)
        return parser.fail(core::Error{core::ErrorKind::Failed, listening.errorMessage()});
    logReady(runner, settings);
    // The URL on stdout, for scripts and tests that asked for port 0.
    context.console.out() << "url=" << runner.url().toString() << Qt::endl;

    serveUntilInterrupted(runner, statsInterval);

    runner.close();
    const devtools::DevRunnerStats final = runner.stats();
    qCInfo(lcCli) << core::LogLine("runner_stopped").add(statsFields(final));
    if (parser.isSet(QStringLiteral("stats-json")))
        context.console.out() << jsonText(statsJson(final)) << Qt::endl;
    return ExitOk;
}

} // namespace outbox::cli
