#include "cli/commands.h"
#include "cli/housekeepingflags.h"
#include "cli/kafkaflags.h"
#include "cli/logging.h"
#include "cli/routesfile.h"
#include "cli/serviceutil.h"
#include "core/dispatcherconfig.h"
#include "core/displaytext.h"
#include "core/logline.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/metricsserver.h"
#include "dispatch/storeconnection.h"
#include "store/session.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QLoggingCategory>

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace outbox::cli {

namespace {

struct DispatchOptions {
    core::DispatcherConfig config;
    QString routesFile; // --routes, or $OUTBOX_ROUTES
    std::optional<std::pair<QHostAddress, quint16>> metricsAddress;
    core::Millis statsInterval{10000};
    bool noListen = false;
    bool unsignedIntended = false;              // --unsigned: no secret, and that is on purpose
    dispatch::HousekeepingOptions housekeeping; // registry, retention
    std::optional<core::KafkaSettings> kafka;   // --kafka-*: Kafka instead of a runner
};

// --runner-url, or $OUTBOX_RUNNER_URL (where the systemd unit keeps it: the
// URL may carry an API key, and `ps` shows every command line). Shown in
// messages without user info and query, and with control characters escaped.
core::Result<QUrl> parseRunnerUrl(const QString &what, const QString &text) {
    const QString trimmed = text.trimmed();
    const QString shown = core::redactedUrlText(trimmed);
    if (core::escapeControls(trimmed) != trimmed)
        return usage(QStringLiteral("%1 \"%2\" contains control characters (a line break?); "
                                    "give the URL on one line, e.g. "
                                    "https://runner.internal/events")
                         .arg(what, shown));
    const QUrl url(trimmed, QUrl::StrictMode);
    if (!trimmed.isEmpty() && !url.isValid())
        return usage(
            QStringLiteral("%1 \"%2\" is not a valid URL (%3); use e.g. "
                           "https://runner.internal/events")
                .arg(what, shown,
                     core::escapeControls(url.errorString().section(QLatin1Char(';'), 0, 0))));
    return url;
}

core::Result<QList<int>> parseStatuses(const QString &text) {
    QList<int> statuses;
    if (text.trimmed().compare(QLatin1String("none"), Qt::CaseInsensitive) == 0)
        return statuses;
    const QStringList parts = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString &part : parts) {
        bool ok = false;
        const int status = part.trimmed().toInt(&ok);
        if (!ok)
            return usage(QStringLiteral("--permanent-status: '%1' is not an HTTP status; give a "
                                        "comma-separated list such as 410,422, or none")
                             .arg(part.trimmed()));
        statuses.append(status);
    }
    if (statuses.isEmpty())
        return usage(QStringLiteral("--permanent-status is empty; give e.g. 410,422, or none"));
    return statuses;
}

// The values that need more than a type to read; errors name the flag.
// Secrets are read from files (never taken on the command line, where `ps`
// would show them).
core::Result<QString> readBearerToken(const QString &path) {
    auto token = readSecretLines(QStringLiteral("bearer-token-file"), path);
    if (!token)
        return token.error();
    if (token->size() != 1)
        return usage(QStringLiteral("--bearer-token-file: the file must hold one token on "
                                    "one line"));
    return token->first();
}

core::Result<core::Delivery> parseDelivery(const QString &text) {
    if (const auto delivery = core::deliveryNamed(text))
        return *delivery;
    return usage(QStringLiteral("--delivery '%1' is unknown; use per-event (one request "
                                "per event) or batch (many events per request)")
                     .arg(text.trimmed()));
}

core::Result<QString> parseNamespace(const QString &text) {
    if (!text.trimmed().isEmpty())
        return text.trimmed();
    return usage(QStringLiteral("--namespace is empty; give a namespace, or leave the "
                                "option out to dispatch every namespace"));
}

core::Result<core::Ordering> parseOrdering(const QString &text) {
    if (const auto ordering = core::orderingNamed(text))
        return *ordering;
    return usage(QStringLiteral("--ordering: '%1' is not an ordering; give 'none' or 'aggregate'")
                     .arg(text));
}

// ":PORT" means loopback here: the endpoint tells anyone who reaches it
// about the queue, so every other interface must be asked for by address
// (0.0.0.0:PORT, [::]:PORT or *:PORT).
core::Result<std::pair<QHostAddress, quint16>> parseMetricsAddress(const QString &text) {
    const QString trimmed = text.trimmed();
    return parseListenAddress(
        QStringLiteral("metrics-addr"),
        trimmed.startsWith(QLatin1Char(':')) ? QStringLiteral("127.0.0.1") + trimmed : trimmed);
}

QString percentileMs(const dispatch::Histogram &histogram, double quantile) {
    return histogram.count() == 0
               ? QStringLiteral("-")
               : QString::number(double(histogram.percentile(quantile)) / 1000.0, 'f', 1);
}

// Latency and rate over the interval between two stats lines (the
// snapshots' "recent" histograms cover only the time since the previous
// snapshot, so they are merged here).
struct Interval {
    dispatch::Histogram commitToDelivered;
    dispatch::Histogram httpDuration;
    qint64 deliveredAtStart = 0;
    QElapsedTimer clock;
};

core::LogLine statsFields(const dispatch::DispatcherStats &stats, const Interval &interval) {
    const qint64 elapsed = interval.clock.isValid() ? interval.clock.elapsed() : 0;
    const double rate =
        elapsed > 0 ? double(stats.delivered - interval.deliveredAtStart) * 1000.0 / double(elapsed)
                    : 0.0;
    return core::LogLine()
        .add("state", dispatch::stateName(stats.state))
        .add("delivered", stats.delivered)
        .add("retried", stats.retried)
        .add("dead", stats.dead)
        .add("claimed", stats.claimed)
        .add("in_flight", QString(QString::number(stats.inFlight) % QLatin1Char('/') %
                                  QString::number(stats.concurrency)))
        .add("fenced_out", stats.fencedOut)
        .add("released", stats.released)
        .add("swept", stats.swept)
        .add("reconnects", stats.reconnects)
        .add("errors", stats.errors)
        .add("listening", stats.listening)
        .add("delivered_per_s", QString::number(rate, 'f', 1))
        .add("latency_p50_ms", percentileMs(interval.commitToDelivered, 0.5))
        .add("latency_p99_ms", percentileMs(interval.commitToDelivered, 0.99))
        .add("http_p50_ms", percentileMs(interval.httpDuration, 0.5))
        .add("http_p99_ms", percentileMs(interval.httpDuration, 0.99));
}

// One connection before the dispatcher starts, to tell "wrong password,
// missing schema" (will not fix itself: exit now) from "server not reachable
// yet" (a daemon waits for it).
int preflight(CommandParser &parser, const core::ConnInfo &info, core::Ordering ordering) {
    store::Session session(info, {.applicationName = QStringLiteral("outbox-dispatch-check")});
    if (const auto opened = session.open(); !opened) {
        if (opened.errorKind() != core::ErrorKind::Unavailable)
            return parser.fail(opened.error());
        qCWarning(lcCli) << core::LogLine("database_unavailable")
                                .add("will_retry", true)
                                .add("error", opened.errorMessage());
        return ExitOk;
    }
    // A login without the privileges will not get them by retrying: exit 2
    // like any other setup mistake.
    const auto setupError = [&parser](const core::Error &error) {
        return parser.fail(error.kind == core::ErrorKind::PermissionDenied
                               ? core::Error{core::ErrorKind::Invalid, error.message}
                               : error);
    };
    if (const auto ready = dispatch::checkDispatchSetup(session, ordering); !ready)
        return setupError(ready.error());
    return ExitOk;
}

// Everything from the command line and the environment. Sizes below 1 are
// left to DispatcherConfig::validate(), whose message names the fix.
void addDispatchOptions(CommandParser &parser, DispatchOptions &options) {
    core::DispatcherConfig &config = options.config;
    constexpr qint64 anySize = std::numeric_limits<int>::min();
    constexpr qint64 maxSize = 1000000;
    parser.addOptions({
        parsedOption(
            "runner-url <url>",
            "The runner endpoint, e.g. https://runner.internal/events (required; "
            "default: $OUTBOX_RUNNER_URL).",
            config.runnerUrl,
            [](const QString &url) { return parseRunnerUrl(QStringLiteral("--runner-url"), url); }),
        secretFileOption(
            "Standard Webhooks secrets (whsec_...), one per line; two lines while a "
            "secret is rotated. Default: $OUTBOX_RUNNER_SECRET (space-separated), then the "
            "systemd credential webhook-secret; none = unsigned (see --unsigned).",
            config.secrets),
        parsedOption("bearer-token-file <file>",
                     "Send 'Authorization: Bearer <token>' with the token read from this file "
                     "(default: the systemd credential bearer-token, if any).",
                     config.bearerToken, readBearerToken),
        flagOption("unsigned",
                   "Deliver without signatures on purpose (otherwise a missing secret is "
                   "warned about at every start).",
                   options.unsignedIntended),
        valueOption("ca-file <file>", "Extra CA bundle (PEM) for an https runner.", config.caFile),
        integerOption("batch-size <n>", "Most rows claimed per statement (default 500).",
                      config.batchSize, anySize, maxSize),
        integerOption("concurrency <n>",
                      "Most requests in flight (default 64): one event each, or with "
                      "--delivery batch up to --batch-max-events each.",
                      config.concurrency, anySize, maxSize),
        parsedOption("delivery <mode>",
                     "per-event (default: one request per event) or batch (many events per "
                     "request, for runners that accept the batch format of "
                     "docs/RUNNER-CONTRACT.md).",
                     config.delivery, parseDelivery),
        integerOption("batch-max-events <n>",
                      "With --delivery batch: most events per request (default 100).",
                      config.batchMaxEvents, anySize, maxSize),
        integerOption("batch-max-bytes <bytes>",
                      "With --delivery batch: most bytes of body per request (default 1048576); "
                      "a larger event travels alone.",
                      config.batchMaxBytes, std::numeric_limits<qint64>::min(), qint64(1) << 30),
        durationOption("lease <duration>", "How long a claimed row stays reserved (default 30s).",
                       config.lease),
        durationOption("poll-interval <duration>",
                       "Watchdog poll when no NOTIFY arrives (default 1s; at most lease/3).",
                       config.pollInterval),
        integerOption("max-attempts <n>", "Attempts before an event is dead (default 10).",
                      config.maxAttempts, anySize, maxSize),
        durationOption("base-delay <duration>",
                       "First retry delay; doubles per attempt (default 1s).", config.baseDelay),
        durationOption("max-delay <duration>", "Longest retry delay (default 5m).",
                       config.maxDelay),
        durationOption("request-timeout <duration>",
                       "HTTP request timeout (default 10s; below the lease).",
                       config.requestTimeout),
        durationOption("shutdown-grace <duration>",
                       "On SIGTERM, how long requests in flight may finish (default 10s).",
                       config.shutdownGrace),
        integerOption("max-response-bytes <n>",
                      "Most bytes of a runner's reply read; a longer reply is cut and retried "
                      "(default 65536).",
                      config.maxResponseBytes, std::numeric_limits<qint64>::min(),
                      std::numeric_limits<qint64>::max()),
        uuidOption("worker-id <uuid>", "This dispatcher's id (a UUID; default: a new one per run).",
                   config.workerId),
        parsedOption("namespace <ns>", "Dispatch only this namespace (default: all).",
                     config.nameSpace, parseNamespace),
        parsedOption("ordering <mode>",
                     "'aggregate': events of one (aggregate_type, aggregate_id) one at a time, "
                     "oldest first; an event waits while an earlier one is pending, processing "
                     "or dead (default 'none').",
                     config.ordering, parseOrdering),
        parsedOption("permanent-status <list>",
                     "HTTP statuses that dead-letter at once, comma-separated (default 410; "
                     "'none').",
                     config.permanentStatuses, parseStatuses),
        valueOption("routes <file>",
                    "Deliver by a routes file: several destinations chosen per event by "
                    "namespace and topic (README, \"Routing\"; check it with `outboxctl routes "
                    "check FILE`). Instead of --runner-url. Default: $OUTBOX_ROUTES.",
                    options.routesFile),
        parsedOption("metrics-addr <host:port>",
                     "Serve Prometheus metrics at http://HOST:PORT/metrics (GET only). :PORT "
                     "is 127.0.0.1:PORT; give 0.0.0.0:PORT to serve every interface.",
                     options.metricsAddress, parseMetricsAddress),
        timerOption("stats-interval <duration>",
                    "How often to log a stats line (default 10s; 0s = never).",
                    options.statsInterval),
        flagOption("no-listen", "Do not LISTEN for NOTIFY; find work by polling only.",
                   options.noListen),
        option("verbose", "Log every claim and failed attempt."),
    });
    parser.addOptions(housekeepingFlags(options.housekeeping));
    parser.addOptions(kafkaFlags(options.kafka));
    parser.setEpilog(QStringLiteral(
        "Logs are one line each on stderr (ts=... level=... event=... key=value).\n"
        "SIGINT or SIGTERM stops gracefully: no more claims, requests in flight finish within\n"
        "--shutdown-grace and are acknowledged, unfinished leases are released so another\n"
        "dispatcher takes them at once; exit 0. A second signal exits immediately.\n"
        "A database that is not reachable yet is retried; a wrong password or a database\n"
        "without the outbox schema ends the command (exit 2 or 1).\n"
        "\n"
        "Example:\n"
        "  outboxctl --db \"host=db dbname=app\" dispatch --runner-url "
        "https://runner.internal/events \\\n"
        "      --secret-file /etc/outbox/webhook-secret --concurrency 64 --metrics-addr "
        "127.0.0.1:9464"));
}

// --routes (or $OUTBOX_ROUTES): the file read and checked, its destinations
// the dispatcher's (cli/routesfile.h).
core::Result<void> readRoutes(const CommandParser &parser, DispatchOptions &options) {
    if (options.routesFile.isEmpty())
        options.routesFile = qEnvironmentVariable("OUTBOX_ROUTES").trimmed();
    if (options.routesFile.isEmpty())
        return {};
    if (options.kafka)
        return usage(QStringLiteral("--routes and --kafka-brokers both given; a routes file names "
                                    "its destinations: put the Kafka destination in the file "
                                    "(kind = kafka) and leave out the --kafka-* options"));
    if (parser.isSet(QStringLiteral("runner-url")))
        return usage(QStringLiteral("--routes and --runner-url both given; a routes file names "
                                    "its destinations' URLs: leave out --runner-url"));
    return loadDispatchRoutes(options.config, options.routesFile);
}

// The options, then what comes from elsewhere when they are not given: the
// runner URL from $OUTBOX_RUNNER_URL, the bearer token from the systemd
// credential bearer-token.
core::Result<void> readDispatchOptions(CommandParser &parser, DispatchOptions &options) {
    if (auto read = parser.readOptions(); !read)
        return read;
    core::DispatcherConfig &config = options.config;
    if (!parser.isSet(QStringLiteral("runner-url"))) {
        const QString fromEnvironment = qEnvironmentVariable("OUTBOX_RUNNER_URL");
        if (!fromEnvironment.trimmed().isEmpty()) {
            auto url = parseRunnerUrl(QStringLiteral("$OUTBOX_RUNNER_URL"), fromEnvironment);
            if (!url)
                return url.error();
            config.runnerUrl = url.value();
        }
    }
    if (const QString token = credentialFile(QStringLiteral("bearer-token"));
        !parser.isSet(QStringLiteral("bearer-token-file")) && !token.isEmpty()) {
        auto read = readBearerToken(token);
        if (!read)
            return read.error();
        config.bearerToken = read.value();
    }
    if (options.kafka) {
        if (parser.isSet(QStringLiteral("runner-url")))
            return usage(QStringLiteral("--runner-url and --kafka-brokers are both given; a "
                                        "dispatcher delivers to one of them, leave out the other"));
        // Not used: the configuration wants a runner URL until routes name
        // their destinations.
        config.runnerUrl = QUrl(QStringLiteral("http://kafka.invalid/"));
    }
    if (auto routed = readRoutes(parser, options); !routed)
        return routed;
    if (options.unsignedIntended && !config.secrets.isEmpty())
        return usage(QStringLiteral("--unsigned, yet a signing secret is given (--secret-file, "
                                    "$OUTBOX_RUNNER_SECRET or the webhook-secret credential); "
                                    "leave out one of them"));
    return {};
}

// A stats line every `every` (never when 0), each covering the time since
// the previous one, and a last line over the whole run.
class StatsLog final {
public:
    StatsLog(dispatch::DispatcherHost &host, core::Millis every)
        : m_host(host) {
        m_interval.clock.start();
        m_sinceStart.start();
        QObject::connect(&host, &dispatch::DispatcherHost::statsSnapshot, &m_timer,
                         [this](const dispatch::DispatcherStats &stats) {
                             m_interval.commitToDelivered.merge(stats.recentCommitToDelivered);
                             m_interval.httpDuration.merge(stats.recentHttpDuration);
                         });
        QObject::connect(&m_timer, &QTimer::timeout, [this] { logInterval(); });
        if (every.count() > 0)
            m_timer.start(every);
    }
    Q_DISABLE_COPY_MOVE(StatsLog)

    void stop() { m_timer.stop(); }

    void logExit(bool bySignal) const {
        const dispatch::DispatcherStats &stats = m_host.lastStats();
        Interval whole;
        whole.commitToDelivered = stats.commitToDelivered;
        whole.httpDuration = stats.httpDuration;
        whole.clock = m_sinceStart;
        qCInfo(lcCli) << core::LogLine("exit")
                             .add("reason",
                                  bySignal ? QLatin1String("signal") : QLatin1String("stopped"))
                             .add(statsFields(stats, whole));
    }

private:
    void logInterval() {
        const dispatch::DispatcherStats &stats = m_host.lastStats();
        qCInfo(lcCli) << core::LogLine("stats").add(statsFields(stats, m_interval));
        m_interval = Interval();
        m_interval.deliveredAtStart = stats.delivered;
        m_interval.clock.start();
    }

    dispatch::DispatcherHost &m_host;
    Interval m_interval;
    QElapsedTimer m_sinceStart;
    QTimer m_timer;
};

// Ends the process when a graceful stop does not finish in time. The
// dispatcher's thread can be stuck in a statement on a server process that
// is alive but frozen (keepalives and tcp_user_timeout see a healthy peer,
// its statement_timeout cannot fire): it then never gets to its own
// stop. Acks already committed are kept; rows whose acks were not written
// are redelivered when their leases expire (at-least-once).
class StopDeadline final {
public:
    explicit StopDeadline(core::Millis stopBudget)
        : m_limit(stopBudget + Margin) {
        m_timer.setSingleShot(true);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            qCCritical(lcCli) << core::LogLine("stop_timeout")
                                     .add("waited", core::formatDuration(m_limit))
                                     .add("error", u"the dispatcher did not stop in time: the "
                                                   u"database is not answering; exiting without "
                                                   u"it (rows not acknowledged are redelivered "
                                                   u"when their leases expire)");
            std::fflush(stderr);
            std::_Exit(ExitUnavailable); // the stuck thread cannot be joined
        });
    }
    Q_DISABLE_COPY_MOVE(StopDeadline)

    void start() { m_timer.start(m_limit); }

private:
    // Covers one connection attempt (connect_timeout, 5 s) begun at the end
    // of the final flush budget, and a little more.
    static constexpr core::Millis Margin{6000};
    core::Millis m_limit;
    QTimer m_timer;
};

// Runs the dispatcher (and the metrics endpoint) until it stops: gracefully
// after SIGINT or SIGTERM, or because it failed.
int serve(CommandParser &parser, const core::ConnInfo &connInfo, const DispatchOptions &options) {
    dispatch::DispatcherOptions dispatcherOptions;
    dispatcherOptions.listen = !options.noListen;
    dispatcherOptions.applicationName = QStringLiteral("outboxctl-dispatch");
    dispatcherOptions.housekeeping = options.housekeeping;
    // A zero debounce still folds the NOTIFYs that arrive together (they are
    // handled in one event-loop pass) but adds no delay; a few milliseconds
    // of debounce cost as much in commit->delivered latency (measured with
    // `outboxctl bench --notify-debounce`, docs/PERFORMANCE.md).
    dispatcherOptions.notifyDebounce = core::Millis(0);
    dispatch::DispatcherHost host(connInfo, options.config,
                                  options.kafka ? kafkaPublisherFactory(*options.kafka)
                                                : dispatch::PublisherFactory(),
                                  dispatcherOptions);

    std::unique_ptr<dispatch::MetricsServer> metrics;
    if (options.metricsAddress) {
        metrics = std::make_unique<dispatch::MetricsServer>();
        const auto &[address, port] = *options.metricsAddress;
        if (auto listening = metrics->listen(address, port); !listening)
            return parser.fail(core::Error{core::ErrorKind::Failed, listening.errorMessage()});
        QObject::connect(&host, &dispatch::DispatcherHost::statsSnapshot, metrics.get(),
                         &dispatch::MetricsServer::update);
        metrics->enableQueueGauges(connInfo, options.housekeeping.gaugesInterval);
    }

    QEventLoop loop;
    std::optional<QString> failure;
    QObject::connect(&host, &dispatch::DispatcherHost::failed, &loop,
                     [&](const QString &message) { failure = message; });
    QObject::connect(&host, &dispatch::DispatcherHost::stopped, &loop, &QEventLoop::quit);
    StatsLog stats(host, options.statsInterval);
    bool stopping = false;
    StopDeadline deadline(options.config.shutdownGrace + dispatcherOptions.stopFlushTimeout);
    InterruptWatcher interrupt([&] {
        stopping = true;
        qCInfo(lcCli) << core::LogLine("signal")
                             .add("action", "graceful_stop")
                             .add("grace", core::formatDuration(options.config.shutdownGrace));
        deadline.start();
        host.stop();
    });
    host.start();
    loop.exec();
    stats.stop();

    // The dispatcher fails only on what retrying cannot fix (configuration,
    // credentials, schema, privileges): exit 2 like any other setup mistake.
    if (failure)
        return parser.fail(core::Error{core::ErrorKind::Invalid, *failure});
    stats.logExit(stopping);
    return ExitOk;
}

} // namespace

int runDispatch(CommandContext &context) {
    CommandParser parser(
        context,
        QStringLiteral("Run a dispatcher: claim due events, POST them to the runner with "
                       "Standard Webhooks signatures (or produce them to Kafka: "
                       "--kafka-brokers), and acknowledge, retry (exponential "
                       "backoff with jitter) or dead-letter them. Run several on one database "
                       "to scale out."));
    DispatchOptions options;
    addDispatchOptions(parser, options);
    if (const auto stop = parser.parseOptionsOnly())
        return *stop;
    // Before the options are read: reading secret files may warn.
    installServiceLogging(parser.isSet(QStringLiteral("verbose")));
    if (auto read = readDispatchOptions(parser, options); !read)
        return parser.fail(read.error());
    if (const auto valid = options.config.validate(); !valid)
        return parser.fail(valid.error());
    auto connInfo = resolveConnInfo(parser.databaseOption());
    if (!connInfo)
        return parser.fail(connInfo.error());
    // The systemd credential db-password, when the connection string has no
    // password: the unit's throwaway user has no home for a ~/.pgpass, and
    // libpq refuses a password file whose mode shows group bits (a
    // credential's ACL mask does).
    if (const QString password = credentialFile(QStringLiteral("db-password"));
        connInfo->password.isEmpty() && !password.isEmpty()) {
        auto lines = readSecretLines(QStringLiteral("db-password"), password);
        if (!lines)
            return parser.fail(lines.error());
        connInfo.value().password = lines->first();
    }

    for (const QString &warning :
         options.kafka ? QStringList() : options.config.warnings(options.unsignedIntended))
        qCWarning(lcCli) << core::LogLine("unsafe_setting").add("error", warning);
    if (const int code = preflight(parser, connInfo.value(), options.config.ordering);
        code != ExitOk)
        return code;
    return serve(parser, connInfo.value(), options);
}

} // namespace outbox::cli
