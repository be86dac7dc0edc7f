#include "cli/commands.h"
#include "cli/filteroptions.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "core/uuidtext.h"
#include "store/operations.h"

#include <QJsonArray>

namespace outbox::cli {

namespace {

// What distinguishes the five bulk actions; the flow is shared.
struct ActionSpec {
    store::Action action;
    QLatin1StringView verb; // "requeue"
    QLatin1StringView description;
    QLatin1StringView example; // the filter part of a typical command line
};

QString allowedNames(const ActionSpec &spec) {
    QStringList names;
    for (core::Status status : store::allowedStates(spec.action))
        names.append(core::statusName(status));
    return names.join(QLatin1String(" or "));
}

QJsonArray idsJson(const QList<QUuid> &ids) {
    QJsonArray array;
    for (const QUuid &id : ids)
        array.append(core::uuidText(id));
    return array;
}

QString idList(const QList<QUuid> &ids) {
    QStringList texts;
    for (const QUuid &id : ids)
        texts.append(core::uuidText(id));
    return texts.join(QLatin1String("\n  "));
}

QByteArray resultJson(const store::BulkResult &result, const QString &filter) {
    return jsonText(QJsonObject{
        {QStringLiteral("action"), store::actionName(result.action)},
        {QStringLiteral("dry_run"), result.dryRun},
        {QStringLiteral("filter"), filter},
        {QStringLiteral("matched"), result.matched},
        {QStringLiteral("changed"), result.changed},
        {QStringLiteral("skipped"), result.skipped},
        {QStringLiteral("confirmed"), result.confirmed},
        {QStringLiteral("newer"), result.newer},
        {QStringLiteral("already_replayed"), result.alreadyReplayed},
        {QStringLiteral("cancelled"), result.cancelled},
        {QStringLiteral("sample"), idsJson(result.sample)},
        {QStringLiteral("created"), idsJson(result.created)},
        {QStringLiteral("audit_id"), result.auditId},
    });
}

// A bulk action as the command line asks for it, checked.
struct ActionRequest {
    store::EventFilter filter;
    store::BulkOptions options;
    QString described; // the selection for messages: the filter, or "all dead events"
    bool dryRun = false;
    bool confirmed = false; // --yes
    bool json = false;
};

void addActionOptions(CommandParser &parser, const ActionSpec &spec, ActionRequest &request) {
    store::BulkOptions &options = request.options;
    parser.addOptions(filterOptions(request.filter));
    parser.addOptions({
        QCommandLineOption(QStringLiteral("all"),
                           QStringLiteral("Allow running without any filter (every %1 event).")
                               .arg(allowedNames(spec))),
        flagOption("dry-run", "Count the matching events and show a sample of ids; change nothing.",
                   request.dryRun),
        integerOption("limit <n>", "Touch at most this many events.", options.limit, 1,
                      std::numeric_limits<qint64>::max()),
        integerOption("batch-size <n>", "Events per transaction (default 500).", options.batchSize,
                      1, 100000),
        numberOption("rate <n>",
                     "At most this many events per second, to redrive gently (default: no limit).",
                     options.ratePerSecond, 0),
        option("reason", "Why, for the audit log (and the last error of cancelled events).",
               "text"),
        flagOption("yes", "Do not ask for confirmation (needed when stdin is not a terminal).",
                   request.confirmed),
        flagOption("json", "Print the result as one JSON object.", request.json),
    });
    if (spec.action == store::Action::Replay)
        parser.addOption(flagOption("again",
                                    "Also replay events that were replayed before (each gets one "
                                    "more copy); without it they are refused.",
                                    options.again));
    parser.setEpilog(
        QStringLiteral("Only %1 events are touched; each batch re-checks the state, so events "
                       "that moved meanwhile are skipped and counted. What you confirm is the "
                       "most that changes: events that match only after the question are left "
                       "for the next run. Every change is recorded in the audit log. Ctrl-C "
                       "stops after the current batch.\n\n"
                       "Example (preview, then do it):\n"
                       "  outboxctl %2 %3 --dry-run\n"
                       "  outboxctl %2 %3")
            .arg(allowedNames(spec), QString(spec.verb), QString(spec.example)));
}

// Checks the options addActionOptions() bound, once they are read; a usage
// error stops the command before it connects.
core::Result<void> readActionRequest(CommandParser &parser, const ActionSpec &spec,
                                     ActionRequest &request) {
    if (parser.isSet(QStringLiteral("rate")) && request.options.ratePerSecond <= 0)
        return usage(QStringLiteral("--rate must be more than 0 events per second"));

    const store::EventFilter &filter = request.filter;
    if (filter.status && !store::allowedStates(spec.action).contains(*filter.status))
        return usage(
            QStringLiteral("%1 only touches %2 events; --status %3 would match nothing")
                .arg(QString(spec.verb), allowedNames(spec), core::statusName(*filter.status)));
    if (spec.action == store::Action::Purge && !filter.status && !filter.olderThan)
        return usage(QStringLiteral("purge needs --status delivered, --status dead or "
                                    "--older-than DURATION, so that it deletes no more than you "
                                    "mean"));
    if (filter.isEmpty() && !parser.isSet(QStringLiteral("all")))
        return usage(QStringLiteral("no filter given: this would %1 every %2 event. Narrow it "
                                    "down (e.g. --namespace, --topic, --id) or pass --all")
                         .arg(QString(spec.verb), allowedNames(spec)));
    if (!request.dryRun && !request.confirmed && !parser.console().stdinIsTerminal())
        return usage(QStringLiteral("stdin is not a terminal, so outboxctl cannot ask: add "
                                    "--yes to confirm non-interactively (or --dry-run to "
                                    "preview)"));
    request.described = filter.isEmpty() ? QStringLiteral("all %1 events").arg(allowedNames(spec))
                                         : filter.describe();
    request.options.reason = parser.value(QStringLiteral("reason"));
    return {};
}

// --dry-run, or the question before changing anything: counts what would
// change. Returns the exit code when the command ends here.
// The confirmed preview is sealed into request.options.seal.
std::optional<int> previewOrConfirm(CommandParser &parser, const ActionSpec &spec,
                                    store::OperatorStore &operations, ActionRequest &request) {
    auto &out = parser.console().out();
    auto &err = parser.console().err();
    store::BulkOptions preview = request.options;
    preview.dryRun = true;
    auto result = operations.run(spec.action, request.filter, preview);
    if (!result)
        return parser.fail(result.error());
    const qint64 limit = request.options.limit;
    const qint64 matched = limit >= 0 ? std::min(result->matched, limit) : result->matched;
    if (request.dryRun) {
        if (request.json) {
            out << resultJson(result.value(), request.described) << '\n';
            return ExitOk;
        }
        out << "Dry run: would " << spec.verb << ' ' << matched << " event"
            << (matched == 1 ? "" : "s") << " (" << request.described
            << "). Nothing was changed.\n";
        if (!result->sample.isEmpty())
            out << "Sample:\n  " << idList(result->sample) << '\n';
        return ExitOk;
    }
    if (matched == 0) {
        out << "No " << allowedNames(spec) << " events match (" << request.described
            << "); nothing to do.\n";
        return ExitOk;
    }
    if (result->alreadyReplayed > 0 && !request.options.again) {
        err << result->alreadyReplayed << " of the " << matched << " events"
            << (result->alreadyReplayed == 1 ? " was" : " were")
            << " already replayed; replaying makes another copy of each. Add --again to replay "
               "them anyway, or narrow the filter. Nothing was changed.\n";
        return ExitUsage;
    }
    err << QString(spec.verb).at(0).toUpper() << QString(spec.verb).mid(1) << ' ' << matched
        << " event" << (matched == 1 ? "" : "s") << " (" << request.described << ")? [y/N] "
        << Qt::flush;
    const auto answer = parser.console().readLine();
    if (!answer || (answer->compare(QLatin1String("y"), Qt::CaseInsensitive) != 0 &&
                    answer->compare(QLatin1String("yes"), Qt::CaseInsensitive) != 0)) {
        err << "Not confirmed; nothing was changed.\n";
        return ExitFailure;
    }
    request.options.seal = result->seal;
    return std::nullopt;
}

// Runs the action batch by batch, with progress on stderr for long runs;
// Ctrl-C stops it after the current batch.
core::Result<store::BulkResult> runInBatches(store::OperatorStore &operations,
                                             const ActionSpec &spec, ActionRequest request,
                                             QTextStream &err) {
    InterruptGuard interrupt;
    bool announced = false;
    const store::BulkOptions &options = request.options;
    request.options.progress = [&](qint64 done, qint64 total) {
        if (total > options.batchSize || options.ratePerSecond > 0)
            err << spec.verb << ": " << done << '/' << total << '\n' << Qt::flush;
        if (interrupt.interrupted()) {
            if (!announced)
                err << "Interrupted: stopping after this batch.\n" << Qt::flush;
            announced = true;
            return false;
        }
        return true;
    };
    return operations.run(spec.action, request.filter, request.options);
}

int printResult(Console &console, const ActionSpec &spec, const ActionRequest &request,
                const store::BulkResult &result) {
    auto &out = console.out();
    auto &err = console.err();
    if (result.matched == 0)
        err << "No " << allowedNames(spec) << " events match (" << request.described << ").\n";
    if (request.json) {
        out << resultJson(result, request.described) << '\n';
    } else {
        out << spec.verb << ": changed " << result.changed;
        if (request.options.seal)
            out << " of " << result.confirmed << " confirmed";
        out << ", skipped " << result.skipped << " (moved meanwhile)";
        if (result.newer > 0)
            out << "; " << result.newer << " newer matching event" << (result.newer == 1 ? "" : "s")
                << " left for the next run";
        if (result.auditId > 0)
            out << "; audit entry " << result.auditId;
        out << '\n';
        if (spec.action == store::Action::Replay && !result.created.isEmpty())
            out << "New events:\n  " << idList(result.created) << '\n';
    }
    if (result.cancelled) {
        err << "Interrupted after " << result.changed << " of " << result.matched
            << " events; run the same command again to continue.\n";
        return ExitInterrupted;
    }
    return ExitOk;
}

int runAction(CommandContext &context, const ActionSpec &spec) {
    CommandParser parser(context, QString(spec.description));
    ActionRequest request;
    addActionOptions(parser, spec, request);
    if (auto exit =
            parser.parseAndRead(QStringLiteral("select events with --id or the filter flags")))
        return *exit;
    if (auto read = readActionRequest(parser, spec, request); !read)
        return parser.usageError(read.errorMessage());

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::OperatorStore operations(*connection,
                                    store::Actor::fromEnvironment(QStringLiteral("outboxctl")));
    if (request.dryRun || !request.confirmed) {
        if (auto exit = previewOrConfirm(parser, spec, operations, request))
            return *exit;
    }
    auto result = runInBatches(operations, spec, request, context.console.err());
    if (!result)
        return parser.fail(result.error());
    return printResult(context.console, spec, request, result.value());
}

const ActionSpec kRequeue{
    store::Action::Requeue, QLatin1StringView("requeue"),
    QLatin1StringView("Send dead events again: back to pending with attempts reset to 0, due "
                      "now."),
    QLatin1StringView("--status dead --namespace billing --reason 'runner fixed'")};
const ActionSpec kRetry{store::Action::RetryNow, QLatin1StringView("retry"),
                        QLatin1StringView("Make pending events due now instead of waiting for "
                                          "their backoff; attempts are kept."),
                        QLatin1StringView("--namespace billing --topic invoice.paid")};
const ActionSpec kCancel{
    store::Action::Cancel, QLatin1StringView("cancel"),
    QLatin1StringView("Stop delivering pending (or dead) events: they "
                      "become dead with the last error \"cancelled by "
                      "<who>\"."),
    QLatin1StringView("--id 0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57 --reason 'sent by mistake'")};
const ActionSpec kPurge{store::Action::Purge, QLatin1StringView("purge"),
                        QLatin1StringView("Delete delivered or dead events for good (never "
                                          "pending or processing ones). Needs --status or "
                                          "--older-than."),
                        QLatin1StringView("--status delivered --older-than 30d")};
const ActionSpec kReplay{
    store::Action::Replay, QLatin1StringView("replay"),
    QLatin1StringView("Enqueue delivered or dead events again as NEW "
                      "pending events (replay_of points at the original, "
                      "which stays as it is)."),
    QLatin1StringView("--status delivered --topic invoice.paid --created-after 2024-05-01")};

} // namespace

int runRequeue(CommandContext &context) {
    return runAction(context, kRequeue);
}

int runRetry(CommandContext &context) {
    return runAction(context, kRetry);
}

int runCancel(CommandContext &context) {
    return runAction(context, kCancel);
}

int runPurge(CommandContext &context) {
    return runAction(context, kPurge);
}

int runReplay(CommandContext &context) {
    return runAction(context, kReplay);
}

} // namespace outbox::cli
