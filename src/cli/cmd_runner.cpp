#include "cli/commands.h"
#include "cli/output.h"
#include "cli/serviceutil.h"
#include "devtools/devrunner.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcessEnvironment>

namespace outbox::cli {

namespace {

Q_LOGGING_CATEGORY(lcRunnerCmd, "outbox.cli.runner")

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

QJsonObject statsJson(const devtools::DevRunnerStats &stats) {
    return QJsonObject{
        {QStringLiteral("connections"), stats.connections},
        {QStringLiteral("received"), stats.received},
        {QStringLiteral("delivered"), stats.delivered},
        {QStringLiteral("failed"), stats.failed},
        {QStringLiteral("bad_signatures"), stats.badSignatures},
        {QStringLiteral("duplicates"), stats.duplicates},
        {QStringLiteral("unique"), stats.uniqueIds},
    };
}

QString statsLine(const devtools::DevRunnerStats &stats) {
    return QStringLiteral("received=%1 delivered=%2 failed=%3 bad_signatures=%4 duplicates=%5 "
                          "unique=%6 connections=%7")
        .arg(stats.received)
        .arg(stats.delivered)
        .arg(stats.failed)
        .arg(stats.badSignatures)
        .arg(stats.duplicates)
        .arg(stats.uniqueIds)
        .arg(stats.connections);
}

// Reads the runner's behaviour from the command line.
core::Result<devtools::DevRunnerSettings> readSettings(CommandParser &parser) {
    devtools::DevRunnerSettings settings;

    QStringList secrets = parser.values(QStringLiteral("secret"));
    if (parser.isSet(QStringLiteral("secret-file"))) {
        auto lines = readSecretLines(QStringLiteral("secret-file"),
                                     parser.value(QStringLiteral("secret-file")));
        if (!lines)
            return lines.error();
        secrets += lines.value();
    }
    if (secrets.isEmpty()) {
        const QString fromEnvironment = QProcessEnvironment::systemEnvironment()
                                            .value(QStringLiteral("OUTBOX_RUNNER_SECRET"))
                                            .trimmed();
        if (!fromEnvironment.isEmpty())
            secrets = fromEnvironment.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    }
    settings.secrets = secrets;

    auto failRate = parser.number(QStringLiteral("fail-rate"), 0.0, 0.0);
    if (!failRate)
        return failRate.error();
    if (failRate.value() > 1.0)
        return usage(QStringLiteral("--fail-rate must be between 0 and 1 (e.g. 0.2 fails one "
                                    "request in five)"));
    settings.failRate = failRate.value();

    auto failStatus = parser.integer(QStringLiteral("fail-status"), 503, 300, 599);
    if (!failStatus)
        return failStatus.error();
    settings.failStatus = int(failStatus.value());

    auto status = parser.integer(QStringLiteral("status"), 0, 100, 599);
    if (!status)
        return status.error();
    settings.fixedStatus = int(status.value());

    auto latency = parser.duration(QStringLiteral("latency"));
    if (!latency)
        return latency.error();
    if (latency.value())
        settings.latency = *latency.value();

    if (parser.isSet(QStringLiteral("retry-after"))) {
        const QString value = parser.value(QStringLiteral("retry-after")).trimmed();
        if (value.isEmpty() || value.contains(QLatin1Char('\n')))
            return usage(QStringLiteral("--retry-after needs a value such as 5 (seconds) or an "
                                        "HTTP date"));
        settings.retryAfter = value.toLatin1();
    }

    if (parser.isSet(QStringLiteral("mode"))) {
        const QString name = parser.value(QStringLiteral("mode")).trimmed().toLower();
        bool found = false;
        QStringList names;
        for (const ModeName &mode : kModes) {
            names.append(QString(mode.name));
            if (name == mode.name) {
                settings.mode = mode.mode;
                found = true;
            }
        }
        if (!found)
            return usage(QStringLiteral("--mode '%1' is unknown; use one of %2")
                             .arg(name, names.join(QStringLiteral(", "))));
    }
    return settings;
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
    const QCommandLineOption listen(
        QStringLiteral("listen"),
        QStringLiteral("Address to listen on (default 127.0.0.1:8080; port 0 picks a free "
                       "port, printed on stdout)."),
        QStringLiteral("host:port"), QStringLiteral("127.0.0.1:8080"));
    const QCommandLineOption secret(
        QStringLiteral("secret"),
        QStringLiteral("Standard Webhooks secret (whsec_...) to verify signatures with; repeat "
                       "during a rotation. Visible in `ps`: prefer --secret-file. Default: "
                       "$OUTBOX_RUNNER_SECRET (space-separated); none = no verification."),
        QStringLiteral("secret"));
    const QCommandLineOption secretFile(
        QStringLiteral("secret-file"),
        QStringLiteral("Read the secrets from a file, one per line."), QStringLiteral("file"));
    const QCommandLineOption failRate(
        QStringLiteral("fail-rate"),
        QStringLiteral("Share of requests (0..1) answered with --fail-status."),
        QStringLiteral("p"));
    const QCommandLineOption failStatus(QStringLiteral("fail-status"),
                                        QStringLiteral("Status of the failures (default 503)."),
                                        QStringLiteral("code"));
    const QCommandLineOption status(
        QStringLiteral("status"),
        QStringLiteral("Answer every verified request with this status (e.g. 500 or 410)."),
        QStringLiteral("code"));
    const QCommandLineOption latency(
        QStringLiteral("latency"),
        QStringLiteral("Delay before each answer, e.g. 20ms (requests are not blocked)."),
        QStringLiteral("duration"));
    const QCommandLineOption retryAfter(
        QStringLiteral("retry-after"),
        QStringLiteral("Retry-After value sent with every non-2xx answer, e.g. 5."),
        QStringLiteral("value"));
    const QCommandLineOption mode(
        QStringLiteral("mode"),
        QStringLiteral("normal (default), redirect (302), close (drop the connection without "
                       "an answer), reset (half an answer, then drop), never (no answer: "
                       "timeouts)."),
        QStringLiteral("mode"));
    const QCommandLineOption statsInterval(
        QStringLiteral("stats-interval"),
        QStringLiteral("How often to log the counters (default 10s; 0s = only at exit)."),
        QStringLiteral("duration"));
    const QCommandLineOption statsJsonOption(
        QStringLiteral("stats-json"),
        QStringLiteral("On exit print the counters as one JSON object on stdout."));
    const QCommandLineOption verbose(QStringLiteral("verbose"),
                                     QStringLiteral("Log every request."));
    parser.addOptions({listen, secret, secretFile, failRate, failStatus, status, latency,
                       retryAfter, mode, statsInterval, statsJsonOption, verbose});
    parser.setEpilog(QStringLiteral(
        "GET on any path answers the counters as text (received=... delivered=... "
        "duplicates=... unique_ids=...).\n"
        "SIGINT or SIGTERM stops the runner and logs the final counters (exit 0).\n"
        "\n"
        "Example:\n"
        "  outboxctl runner --listen 127.0.0.1:8080 --secret-file secret.txt --fail-rate 0.1 "
        "--latency 20ms"));
    if (const auto stop = parser.parse())
        return *stop;
    if (!parser.positionalArguments().isEmpty())
        return parser.usageError(
            QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().first()));

    auto address = parseListenAddress(QStringLiteral("listen"), parser.value(listen));
    if (!address)
        return parser.usageError(address.errorMessage());
    auto settings = readSettings(parser);
    if (!settings)
        return parser.fail(settings.error());
    auto interval = parser.duration(QStringLiteral("stats-interval"));
    if (!interval)
        return parser.fail(interval.error());
    const core::Millis statsEvery = interval.value().value_or(core::Millis(10000));

    installServiceLogging(parser.isSet(verbose));
    devtools::DevRunner runner;
    if (auto applied = runner.setSettings(settings.value()); !applied)
        return parser.fail(core::Error{core::ErrorKind::Invalid, applied.errorMessage()});
    if (auto listening = runner.listen(address->first, address->second); !listening)
        return parser.fail(core::Error{core::ErrorKind::Failed, listening.errorMessage()});

    const devtools::DevRunnerSettings &s = settings.value();
    qCInfo(lcRunnerCmd).noquote()
        << QStringLiteral("event=runner_ready url=%1 signatures=%2 fail_rate=%3 fail_status=%4 "
                          "status=%5 latency=%6 mode=%7")
               .arg(runner.url().toString(), s.secrets.isEmpty()
                                                 ? QStringLiteral("off")
                                                 : QStringLiteral("on(%1)").arg(s.secrets.size()))
               .arg(s.failRate)
               .arg(s.failStatus)
               .arg(s.fixedStatus)
               .arg(core::formatDuration(s.latency), parser.value(mode).isEmpty()
                                                         ? QStringLiteral("normal")
                                                         : parser.value(mode).toLower());
    // The URL on stdout, for scripts and tests that asked for port 0.
    context.console.out() << "url=" << runner.url().toString() << Qt::endl;

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
        qCInfo(lcRunnerCmd).noquote() << QStringLiteral("event=runner_stats ") % statsLine(now) %
                                             QStringLiteral(" rate_per_s=") %
                                             QString::number(rate, 'f', 1);
    });
    if (statsEvery.count() > 0)
        statsTimer.start(statsEvery);

    InterruptWatcher interrupt([&] {
        qCInfo(lcRunnerCmd).noquote() << QStringLiteral("event=signal action=stop");
        loop.quit();
    });
    loop.exec();

    statsTimer.stop();
    runner.close();
    const devtools::DevRunnerStats final = runner.stats();
    qCInfo(lcRunnerCmd).noquote() << QStringLiteral("event=runner_stopped ") % statsLine(final);
    if (parser.isSet(statsJsonOption))
        context.console.out() << jsonText(statsJson(final)) << Qt::endl;
    return ExitOk;
}

} // namespace outbox::cli
