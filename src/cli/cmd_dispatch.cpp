#include "cli/commands.h"
#include "cli/housekeepingflags.h"
#include "cli/logging.h"
#include "cli/serviceutil.h"
#include "core/dispatcherconfig.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/metricsserver.h"
#include "dispatch/storeconnection.h"
#include "store/migrator.h"
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
    std::optional<std::pair<QHostAddress, quint16>> metricsAddress;
    core::Millis statsInterval{10000};
    bool listen = true;
    dispatch::HousekeepingOptions housekeeping; // registry, retention
};

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

// --delivery and the batch bounds.
core::Result<void> readDelivery(CommandParser &parser, core::DispatcherConfig &config) {
    if (parser.isSet(QStringLiteral("delivery"))) {
        const auto delivery = core::deliveryNamed(parser.value(QStringLiteral("delivery")));
        if (!delivery)
            return usage(QStringLiteral("--delivery '%1' is unknown; use per-event (one request "
                                        "per event) or batch (many events per request)")
                             .arg(parser.value(QStringLiteral("delivery")).trimmed()));
        config.delivery = *delivery;
    }
    auto bytes = parser.integer(QStringLiteral("batch-max-bytes"), config.batchMaxBytes,
                                std::numeric_limits<qint64>::min(), qint64(1) << 30);
    if (!bytes)
        return bytes.error();
    config.batchMaxBytes = bytes.value();
    return {};
}

// Everything from the command line and the environment; secrets are read
// from files (never taken on the command line, where `ps` would show them).
core::Result<DispatchOptions> readOptions(CommandParser &parser) {
    DispatchOptions options;
    core::DispatcherConfig &config = options.config;

    const QString url = parser.value(QStringLiteral("runner-url")).trimmed();
    config.runnerUrl = QUrl(url, QUrl::StrictMode);

    auto secrets = webhookSecrets(parser);
    if (!secrets)
        return secrets.error();
    config.secrets = secrets.value();
    if (parser.isSet(QStringLiteral("bearer-token-file"))) {
        auto token = readSecretLines(QStringLiteral("bearer-token-file"),
                                     parser.value(QStringLiteral("bearer-token-file")));
        if (!token)
            return token.error();
        if (token->size() != 1)
            return usage(QStringLiteral("--bearer-token-file: the file must hold one token on "
                                        "one line"));
        config.bearerToken = token->first();
    }
    if (parser.isSet(QStringLiteral("ca-file")))
        config.caFile = parser.value(QStringLiteral("ca-file"));

    // Sizes below 1 are left to DispatcherConfig::validate(), whose message
    // names the fix.
    constexpr qint64 maxSize = 1000000;
    for (auto [name, target] :
         {std::pair{QStringLiteral("batch-size"), &config.batchSize},
          std::pair{QStringLiteral("concurrency"), &config.concurrency},
          std::pair{QStringLiteral("max-attempts"), &config.maxAttempts},
          std::pair{QStringLiteral("batch-max-events"), &config.batchMaxEvents}}) {
        auto value = parser.integer(name, *target, std::numeric_limits<int>::min(), maxSize);
        if (!value)
            return value.error();
        *target = int(value.value());
    }
    auto maxResponse =
        parser.integer(QStringLiteral("max-response-bytes"), config.maxResponseBytes,
                       std::numeric_limits<qint64>::min(), std::numeric_limits<qint64>::max());
    if (!maxResponse)
        return maxResponse.error();
    config.maxResponseBytes = maxResponse.value();
    for (auto [name, target] :
         {std::pair{QStringLiteral("lease"), &config.lease},
          std::pair{QStringLiteral("poll-interval"), &config.pollInterval},
          std::pair{QStringLiteral("base-delay"), &config.baseDelay},
          std::pair{QStringLiteral("max-delay"), &config.maxDelay},
          std::pair{QStringLiteral("request-timeout"), &config.requestTimeout},
          std::pair{QStringLiteral("shutdown-grace"), &config.shutdownGrace}}) {
        auto value = parser.duration(name);
        if (!value)
            return value.error();
        if (value.value())
            *target = *value.value();
    }
    if (const auto delivery = readDelivery(parser, config); !delivery)
        return delivery.error();
    auto workerId = parser.uuid(QStringLiteral("worker-id"));
    if (!workerId)
        return workerId.error();
    if (workerId.value())
        config.workerId = *workerId.value();
    if (parser.isSet(QStringLiteral("namespace"))) {
        config.nameSpace = parser.value(QStringLiteral("namespace")).trimmed();
        if (config.nameSpace.isEmpty())
            return usage(QStringLiteral("--namespace is empty; give a namespace, or leave the "
                                        "option out to dispatch every namespace"));
    }
    if (parser.isSet(QStringLiteral("ordering"))) {
        const auto ordering = core::orderingNamed(parser.value(QStringLiteral("ordering")));
        if (!ordering)
            return usage(QStringLiteral("--ordering: '%1' is not an ordering; give 'none' or "
                                        "'aggregate'")
                             .arg(parser.value(QStringLiteral("ordering"))));
        config.ordering = *ordering;
    }
    if (parser.isSet(QStringLiteral("permanent-status"))) {
        auto statuses = parseStatuses(parser.value(QStringLiteral("permanent-status")));
        if (!statuses)
            return statuses.error();
        config.permanentStatuses = statuses.value();
    }
    if (parser.isSet(QStringLiteral("metrics-addr"))) {
        auto address = parseListenAddress(QStringLiteral("metrics-addr"),
                                          parser.value(QStringLiteral("metrics-addr")));
        if (!address)
            return address.error();
        options.metricsAddress = address.value();
    }
    auto interval = parser.timerDuration(QStringLiteral("stats-interval"));
    if (!interval)
        return interval.error();
    if (interval.value())
        options.statsInterval = *interval.value();
    options.listen = !parser.isSet(QStringLiteral("no-listen"));
    auto housekeeping = readHousekeepingFlags(parser);
    if (!housekeeping)
        return housekeeping.error();
    options.housekeeping = housekeeping.value();

    if (const auto valid = config.validate(); !valid)
        return valid.error();
    return options;
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

QString statsLine(const dispatch::DispatcherStats &stats, const Interval &interval) {
    const qint64 elapsed = interval.clock.isValid() ? interval.clock.elapsed() : 0;
    const double rate =
        elapsed > 0 ? double(stats.delivered - interval.deliveredAtStart) * 1000.0 / double(elapsed)
                    : 0.0;
    return QStringLiteral("state=%1 delivered=%2 retried=%3 dead=%4 claimed=%5 in_flight=%6/%7 "
                          "fenced_out=%8 released=%9 swept=%10 reconnects=%11 errors=%12 "
                          "listening=%13 delivered_per_s=%14 latency_p50_ms=%15 "
                          "latency_p99_ms=%16 http_p50_ms=%17 http_p99_ms=%18")
        .arg(dispatch::stateName(stats.state))
        .arg(stats.delivered)
        .arg(stats.retried)
        .arg(stats.dead)
        .arg(stats.claimed)
        .arg(stats.inFlight)
        .arg(stats.concurrency)
        .arg(stats.fencedOut)
        .arg(stats.released)
        .arg(stats.swept)
        .arg(stats.reconnects)
        .arg(stats.errors)
        .arg(stats.listening ? QStringLiteral("true") : QStringLiteral("false"),
             QString::number(rate, 'f', 1), percentileMs(interval.commitToDelivered, 0.5),
             percentileMs(interval.commitToDelivered, 0.99),
             percentileMs(interval.httpDuration, 0.5), percentileMs(interval.httpDuration, 0.99));
}

// One connection before the dispatcher starts, to tell "wrong password,
// missing schema" (will not fix itself: exit now) from "server not reachable
// yet" (a daemon waits for it).
int preflight(CommandParser &parser, const core::ConnInfo &info) {
    store::Session session(info, {.applicationName = QStringLiteral("outbox-dispatch-check")});
    if (const auto opened = session.open(); !opened) {
        if (opened.errorKind() != core::ErrorKind::Unavailable)
            return parser.fail(opened.error());
        qCWarning(lcCli).noquote()
            << QStringLiteral("event=database_unavailable will_retry=true error=\"") %
                   opened.errorMessage() % QLatin1Char('"');
        return ExitOk;
    }
    // A login without the privileges will not get them by retrying: exit 2
    // like any other setup mistake.
    const auto setupError = [&parser](const core::Error &error) {
        return parser.fail(error.kind == core::ErrorKind::PermissionDenied
                               ? core::Error{core::ErrorKind::Invalid, error.message}
                               : error);
    };
    if (const auto allowed = dispatch::checkDispatchPrivileges(session); !allowed)
        return setupError(allowed.error());
    if (const auto current = store::Migrator(session).checkCurrent(); !current)
        return setupError(current.error());
    return ExitOk;
}

void addDispatchOptions(CommandParser &parser) {
    parser.addOptions({
        option("runner-url", "The runner endpoint, e.g. https://runner.internal/events (required).",
               "url"),
        option("secret-file",
               "Standard Webhooks secrets (whsec_...), one per line; two lines while a secret is "
               "rotated. Default: $OUTBOX_RUNNER_SECRET (space-separated); none = unsigned.",
               "file"),
        option("bearer-token-file",
               "Send 'Authorization: Bearer <token>' with the token read "
               "from this file.",
               "file"),
        option("ca-file", "Extra CA bundle (PEM) for an https runner.", "file"),
        option("batch-size", "Most rows claimed per statement (default 100).", "n"),
        option("concurrency",
               "Most events in flight (default 64): one request each, or shared by batches with "
               "--delivery batch.",
               "n"),
        option("delivery",
               "per-event (default: one request per event) or batch (many events per request, "
               "for runners that accept the batch format; see the README).",
               "mode"),
        option("batch-max-events", "With --delivery batch: most events per request (default 100).",
               "n"),
        option("batch-max-bytes",
               "With --delivery batch: most bytes of body per request (default 1048576); a "
               "larger event travels alone.",
               "bytes"),
        option("lease", "How long a claimed row stays reserved (default 30s).", "duration"),
        option("poll-interval",
               "Watchdog poll when no NOTIFY arrives (default 1s; at most lease/3).", "duration"),
        option("max-attempts", "Attempts before an event is dead (default 10).", "n"),
        option("base-delay", "First retry delay; doubles per attempt (default 1s).", "duration"),
        option("max-delay", "Longest retry delay (default 5m).", "duration"),
        option("request-timeout", "HTTP request timeout (default 10s; below the lease).",
               "duration"),
        option("shutdown-grace",
               "On SIGTERM, how long requests in flight may finish (default 10s).", "duration"),
        option("max-response-bytes",
               "Most bytes of a runner's reply read; a longer reply is cut and retried "
               "(default 65536).",
               "n"),
        option("worker-id", "This dispatcher's id (a UUID; default: a new one per run).", "uuid"),
        option("namespace", "Dispatch only this namespace (default: all).", "ns"),
        option("ordering",
               "'aggregate': events of one (aggregate_type, aggregate_id) one at a time, "
               "oldest first; an event waits while an earlier one is pending, processing or "
               "dead (default 'none').",
               "mode"),
        option("permanent-status",
               "HTTP statuses that dead-letter at once, comma-separated (default 410; 'none').",
               "list"),
        option("metrics-addr", "Serve Prometheus metrics at http://HOST:PORT/metrics.",
               "host:port"),
        option("stats-interval", "How often to log a stats line (default 10s; 0s = never).",
               "duration"),
        option("no-listen", "Do not LISTEN for NOTIFY; find work by polling only."),
        option("verbose", "Log every claim and failed attempt."),
    });
    parser.addOptions(housekeepingFlags());
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
        qCInfo(lcCli).noquote() << QStringLiteral("event=exit reason=") %
                                       (bySignal ? QStringLiteral("signal")
                                                 : QStringLiteral("stopped")) %
                                       u' ' % statsLine(stats, whole);
    }

private:
    void logInterval() {
        const dispatch::DispatcherStats &stats = m_host.lastStats();
        qCInfo(lcCli).noquote() << QStringLiteral("event=stats ") % statsLine(stats, m_interval);
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
            qCCritical(lcCli).noquote()
                << QStringLiteral("event=stop_timeout waited=") % core::formatDuration(m_limit) %
                       QStringLiteral(" error=\"the dispatcher did not stop in time: the "
                                      "database is not answering; exiting without it (rows not "
                                      "acknowledged are redelivered when their leases expire)\"");
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
    dispatcherOptions.listen = options.listen;
    dispatcherOptions.applicationName = QStringLiteral("outboxctl-dispatch");
    dispatcherOptions.housekeeping = options.housekeeping;
    // A zero debounce still folds the NOTIFYs that arrive together (they are
    // handled in one event-loop pass) but adds no delay; a few milliseconds
    // of debounce cost as much in commit->delivered latency (measured with
    // `outboxctl bench --notify-debounce`, docs/PERFORMANCE.md).
    dispatcherOptions.notifyDebounce = core::Millis(0);
    dispatch::DispatcherHost host(connInfo, options.config, {}, dispatcherOptions);

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
        qCInfo(lcCli).noquote() << QStringLiteral("event=signal action=graceful_stop grace=") %
                                       core::formatDuration(options.config.shutdownGrace);
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
                       "Standard Webhooks signatures, and acknowledge, retry (exponential "
                       "backoff with jitter) or dead-letter them. Run several on one database "
                       "to scale out."));
    addDispatchOptions(parser);
    if (const auto stop = parser.parseOptionsOnly())
        return *stop;

    auto options = readOptions(parser);
    if (!options)
        return parser.fail(options.error());
    auto connInfo = resolveConnInfo(parser.databaseOption());
    if (!connInfo)
        return parser.fail(connInfo.error());

    installServiceLogging(parser.isSet(QStringLiteral("verbose")));
    if (const int code = preflight(parser, connInfo.value()); code != ExitOk)
        return code;
    return serve(parser, connInfo.value(), options.value());
}

} // namespace outbox::cli
