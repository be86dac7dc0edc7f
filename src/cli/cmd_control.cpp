// outboxctl dispatchers / pause / resume: who is delivering, and holding
// delivery back per namespace or topic.
#include "cli/commands.h"
#include "cli/output.h"
#include "core/displaytext.h"
#include "dispatch/routingreport.h"
#include "store/destinationstore.h"
#include "store/operations.h"
#include "store/pausestore.h"
#include "store/registrystore.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace outbox::cli {

namespace {

QJsonObject dispatcherJson(const store::DispatcherEntry &e) {
    return QJsonObject{
        {QStringLiteral("worker_id"), jsonUuid(e.workerId)},
        {QStringLiteral("alive"), e.alive},
        {QStringLiteral("host"), e.host},
        {QStringLiteral("pid"), e.pid},
        {QStringLiteral("version"), e.version},
        {QStringLiteral("application"), e.application},
        {QStringLiteral("db_user"), e.dbUser},
        {QStringLiteral("namespace"),
         e.nameSpace.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(e.nameSpace)},
        {QStringLiteral("runner_url"), e.runnerUrl},
        {QStringLiteral("concurrency"), e.concurrency},
        {QStringLiteral("state"), e.state},
        {QStringLiteral("in_flight"), e.inFlight},
        {QStringLiteral("delivered_per_second"), e.deliveredPerSecond},
        {QStringLiteral("failed_per_second"), e.failedPerSecond},
        {QStringLiteral("delivered_total"), e.deliveredTotal},
        {QStringLiteral("heartbeat_interval_ms"), qint64(e.heartbeatInterval.count())},
        {QStringLiteral("started_at"), jsonTime(e.startedAt)},
        {QStringLiteral("heartbeat_at"), jsonTime(e.heartbeatAt)},
    };
}

QJsonObject pauseJson(const store::Pause &pause) {
    return QJsonObject{
        {QStringLiteral("namespace"), pause.nameSpace},
        {QStringLiteral("topic"), pause.topic ? QJsonValue(*pause.topic) : QJsonValue()},
        {QStringLiteral("reason"), pause.reason},
        {QStringLiteral("paused_by"), pause.pausedBy},
        {QStringLiteral("os_user"), pause.osUser},
        {QStringLiteral("paused_at"), jsonTime(pause.pausedAt)},
    };
}

QString scopeText(const QString &nameSpace, const std::optional<QString> &topic) {
    return topic ? QStringLiteral("topic %1 of namespace %2").arg(*topic, nameSpace)
                 : QStringLiteral("namespace %1").arg(nameSpace);
}

// --namespace (required) and --topic of pause and resume.
struct Scope {
    QString nameSpace;
    std::optional<QString> topic;
};

OptionTable scopeOptions(Scope &scope, const char *namespaceHelp) {
    return {
        customOption("namespace <ns>", namespaceHelp,
                     [&scope](const CommandParser &parser) -> core::Result<void> {
                         scope.nameSpace = parser.value(QStringLiteral("namespace")).trimmed();
                         if (scope.nameSpace.isEmpty())
                             return usage(QStringLiteral("--namespace NS is required"));
                         return {};
                     }),
        customOption("topic <topic>", "Only this topic of the namespace.",
                     [&scope](const CommandParser &parser) -> core::Result<void> {
                         if (!parser.isSet(QStringLiteral("topic")))
                             return {};
                         scope.topic = parser.value(QStringLiteral("topic")).trimmed();
                         if (scope.topic->isEmpty())
                             return usage(QStringLiteral("--topic must name a topic (leave it "
                                                         "out for the whole namespace)"));
                         return {};
                     }),
    };
}

// Asks on the terminal unless --yes; returns the exit code when not confirmed.
std::optional<int> confirm(CommandParser &parser, const QString &question) {
    if (parser.isSet(QStringLiteral("yes")))
        return std::nullopt;
    if (!parser.console().stdinIsTerminal())
        return parser.usageError(QStringLiteral("stdin is not a terminal, so outboxctl cannot "
                                                "ask: add --yes to confirm non-interactively"));
    auto &err = parser.console().err();
    err << question << " [y/N] " << Qt::flush;
    const auto answer = parser.console().readLine();
    if (!answer || (answer->compare(QLatin1String("y"), Qt::CaseInsensitive) != 0 &&
                    answer->compare(QLatin1String("yes"), Qt::CaseInsensitive) != 0)) {
        err << "Not confirmed; nothing was changed.\n";
        return ExitFailure;
    }
    return std::nullopt;
}

// The start of pause and resume: reads the command line, connects and asks
// "<verb> delivery of <scope>?" unless --yes. Returns the exit code when the
// command ends here.
std::optional<int> openScope(CommandParser &parser, const Scope &scope, const QString &verb,
                             std::unique_ptr<Connection> &connection) {
    if (auto exit = parser.parseAndRead())
        return exit;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    return confirm(
        parser,
        QStringLiteral("%1 delivery of %2?").arg(verb, scopeText(scope.nameSpace, scope.topic)));
}

} // namespace

int runDispatchers(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("The dispatchers registered in the database: alive ones (a "
                                "heartbeat within three intervals) first, then those gone "
                                "without stopping (killed, host lost) for up to a day. Also "
                                "lists what is paused."));
    const auto json = option("json", "Print one JSON object.");
    parser.addOption(json);
    parser.setEpilog(QStringLiteral(
        "JSON keys: server_time, alive, dispatchers[{worker_id, alive, host, pid, version,\n"
        "application, db_user, namespace (null: all), runner_url, concurrency, state,\n"
        "in_flight, delivered_per_second, failed_per_second, delivered_total,\n"
        "heartbeat_interval_ms, started_at, heartbeat_at}], paused[{namespace, topic,\n"
        "reason, paused_by, os_user, paused_at}], destinations{worker_id: [{name, kind,\n"
        "target, circuit, reason, in_flight, limit, delivered_per_s, last_error, ...}]},\n"
        "paused_destinations[{destination, reason, paused_by, paused_at}]."));
    if (auto exit = parser.parseOptionsOnly())
        return *exit;
    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::RegistryStore registry(*connection);
    store::PauseStore pauses(*connection);
    auto list = registry.list();
    if (!list)
        return parser.fail(list.error());
    auto paused = pauses.list();
    if (!paused)
        return parser.fail(paused.error());
    // Routing dispatchers' destinations and the paused ones (sql/015).
    store::DestinationStore destinationStore(*connection);
    auto destinations = destinationStore.reports();
    if (!destinations)
        return parser.fail(destinations.error());
    auto pausedDestinations = destinationStore.pauses();
    if (!pausedDestinations)
        return parser.fail(pausedDestinations.error());
    auto &out = context.console.out();
    if (parser.isSet(json)) {
        QJsonArray dispatchers;
        for (const auto &entry : list->entries)
            dispatchers.append(dispatcherJson(entry));
        QJsonArray pausedJson;
        for (const auto &pause : paused.value())
            pausedJson.append(pauseJson(pause));
        QJsonObject routed; // worker id -> its destinations, as reported
        for (auto it = destinations->cbegin(); it != destinations->cend(); ++it)
            routed.insert(it.key().toString(QUuid::WithoutBraces),
                          QJsonDocument::fromJson(it.value().toUtf8()).array());
        QJsonArray pausedDestinationsJson;
        for (const auto &pause : pausedDestinations.value())
            pausedDestinationsJson.append(
                QJsonObject{{QStringLiteral("destination"), pause.destination},
                            {QStringLiteral("reason"), pause.reason},
                            {QStringLiteral("paused_by"), pause.pausedBy},
                            {QStringLiteral("paused_at"), jsonTime(pause.pausedAt)}});
        out << jsonText(
                   QJsonObject{{QStringLiteral("server_time"), jsonTime(list->serverTime)},
                               {QStringLiteral("alive"), list->aliveCount()},
                               {QStringLiteral("dispatchers"), dispatchers},
                               {QStringLiteral("paused"), pausedJson},
                               {QStringLiteral("destinations"), routed},
                               {QStringLiteral("paused_destinations"), pausedDestinationsJson}})
            << '\n';
        return ExitOk;
    }
    if (list->entries.isEmpty()) {
        out << "No dispatcher has registered (none is running, or they run an older version).\n";
    } else {
        Table table({QStringLiteral("STATUS"), QStringLiteral("HOST"), QStringLiteral("PID"),
                     QStringLiteral("NAMESPACE"), QStringLiteral("IN FLIGHT"),
                     QStringLiteral("DELIVERED/S"), QStringLiteral("HEARTBEAT"),
                     QStringLiteral("STARTED"), QStringLiteral("WORKER")});
        table.setRightAligned(2);
        table.setRightAligned(4);
        table.setRightAligned(5);
        for (const auto &e : list->entries) {
            table.addRow({e.alive ? e.state : QStringLiteral("gone"), e.host,
                          QString::number(e.pid),
                          e.nameSpace.isEmpty() ? QStringLiteral("(all)") : e.nameSpace,
                          QStringLiteral("%1/%2").arg(e.inFlight).arg(e.concurrency),
                          QString::number(e.deliveredPerSecond, 'f', 1),
                          relativeTime(e.heartbeatAt, list->serverTime), isoTime(e.startedAt),
                          e.workerId.toString(QUuid::WithoutBraces)});
        }
        table.print(out);
        out << '\n' << list->aliveCount() << " alive.\n";
        for (const auto &e : list->entries) {
            if (!e.alive)
                continue;
            for (const auto &d : dispatch::destinationsFromJson(destinations->value(e.workerId)))
                out << "Destination " << d.name << " of " << e.host << " (pid " << e.pid
                    << "): circuit " << d.circuit
                    << core::escapeControls(d.reason.isEmpty() ? QString()
                                                               : QStringLiteral(" (") + d.reason +
                                                                     QStringLiteral(")"))
                    << ", " << QString::number(d.deliveredPerSecond, 'f', 1) << " delivered/s, "
                    << d.inFlight << '/' << d.limit << " in flight"
                    << core::escapeControls(d.lastError.isEmpty()
                                                ? QString()
                                                : QStringLiteral(", last error: ") + d.lastError)
                    << '\n';
        }
    }
    for (const auto &pause : pausedDestinations.value())
        out << "Paused: "
            << core::escapeControls(QStringLiteral("destination %1 since %2 by %3: %4")
                                        .arg(pause.destination, isoTime(pause.pausedAt),
                                             pause.pausedBy, pause.reason))
            << '\n';
    for (const auto &pause : paused.value())
        out << "Paused: "
            << core::escapeControls(QStringLiteral("%1 since %2 by %3: %4")
                                        .arg(scopeText(pause.nameSpace, pause.topic),
                                             isoTime(pause.pausedAt), pause.pausedBy, pause.reason))
            << '\n';
    return ExitOk;
}

int runPause(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Stop delivering a namespace, or one topic of it. Dispatchers "
                                "stop claiming its events within a poll interval; requests in "
                                "flight finish. The events stay pending until `outboxctl "
                                "resume`. Audited; needs the outbox_operator role."));
    Scope scope;
    QString reason;
    parser.addOptions(scopeOptions(scope, "The namespace to pause."));
    parser.addOptions({
        customOption("reason <text>", "Why (required; shown to everybody and audited).",
                     [&reason](const CommandParser &given) -> core::Result<void> {
                         reason = given.value(QStringLiteral("reason")).trimmed();
                         if (reason.isEmpty())
                             return usage(QStringLiteral("--reason TEXT is required: say why, "
                                                         "e.g. --reason \"billing API down, "
                                                         "INC-42\""));
                         return {};
                     }),
        option("yes", "Do not ask for confirmation."),
    });
    std::unique_ptr<Connection> connection;
    if (auto exit = openScope(parser, scope, QStringLiteral("Pause"), connection))
        return *exit;
    store::PauseStore pauses(*connection);
    if (auto paused = pauses.pause(scope.nameSpace, scope.topic, reason,
                                   store::Actor::fromEnvironment(QStringLiteral("outboxctl")));
        !paused)
        return parser.fail(paused.error());
    context.console.out() << "Paused " << scopeText(scope.nameSpace, scope.topic)
                          << ". Resume with: outboxctl resume --namespace " << scope.nameSpace
                          << (scope.topic ? QStringLiteral(" --topic ") + *scope.topic : QString())
                          << '\n';
    return ExitOk;
}

int runResume(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Deliver a paused namespace (and every topic paused in it) or "
                                "one paused topic again; dispatchers are woken at once. "
                                "Audited; needs the outbox_operator role."));
    Scope scope;
    parser.addOptions(scopeOptions(scope, "The namespace to resume."));
    parser.addOption(option("yes", "Do not ask for confirmation."));
    std::unique_ptr<Connection> connection;
    if (auto exit = openScope(parser, scope, QStringLiteral("Resume"), connection))
        return *exit;
    store::PauseStore pauses(*connection);
    auto resumed = pauses.resume(scope.nameSpace, scope.topic,
                                 store::Actor::fromEnvironment(QStringLiteral("outboxctl")));
    if (!resumed)
        return parser.fail(resumed.error());
    if (resumed.value() == 0) {
        context.console.err() << "outboxctl resume: " << scopeText(scope.nameSpace, scope.topic)
                              << " is not paused; see `outboxctl dispatchers`\n";
        return ExitFailure;
    }
    context.console.out() << "Resumed " << scopeText(scope.nameSpace, scope.topic) << " ("
                          << resumed.value() << " pause" << (resumed.value() == 1 ? "" : "s")
                          << " ended).\n";
    return ExitOk;
}

} // namespace outbox::cli
