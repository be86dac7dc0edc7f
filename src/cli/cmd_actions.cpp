#include "cli/commands.h"
#include "cli/filteroptions.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "store/operations.h"

#include <QJsonArray>

namespace outbox::cli {

namespace {

// What distinguishes the five bulk actions; the flow is shared.
struct ActionSpec {
    store::Action action;
    QLatin1StringView verb;      // "requeue"
    QList<core::Status> allowed; // the states the action touches
    QLatin1StringView description;
    QLatin1StringView example; // the filter part of a typical command line
};

QString allowedNames(const ActionSpec &spec) {
    QStringList names;
    for (core::Status status : spec.allowed)
        names.append(core::statusName(status));
    return names.join(QLatin1String(" or "));
}

QJsonArray idsJson(const QList<QUuid> &ids) {
    QJsonArray array;
    for (const QUuid &id : ids)
        array.append(id.toString(QUuid::WithoutBraces));
    return array;
}

QString idList(const QList<QUuid> &ids) {
    QStringList texts;
    for (const QUuid &id : ids)
        texts.append(id.toString(QUuid::WithoutBraces));
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
        {QStringLiteral("cancelled"), result.cancelled},
        {QStringLiteral("sample"), idsJson(result.sample)},
        {QStringLiteral("created"), idsJson(result.created)},
        {QStringLiteral("audit_id"), result.auditId},
    });
}

int runAction(CommandContext &context, const ActionSpec &spec) {
    CommandParser parser(context, QString(spec.description));
    addFilterOptions(parser);
    const QCommandLineOption all(QStringLiteral("all"),
                                 QStringLiteral("Allow running without any filter (every %1 "
                                                "event).")
                                     .arg(allowedNames(spec)));
    const QCommandLineOption dryRun(QStringLiteral("dry-run"),
                                    QStringLiteral("Count the matching events and show a sample "
                                                   "of ids; change nothing."));
    const QCommandLineOption limit(QStringLiteral("limit"),
                                   QStringLiteral("Touch at most this many events."),
                                   QStringLiteral("n"));
    const QCommandLineOption batchSize(QStringLiteral("batch-size"),
                                       QStringLiteral("Events per transaction (default 500)."),
                                       QStringLiteral("n"));
    const QCommandLineOption rate(QStringLiteral("rate"),
                                  QStringLiteral("At most this many events per second, to "
                                                 "redrive gently (default: no limit)."),
                                  QStringLiteral("n"));
    const QCommandLineOption reason(QStringLiteral("reason"),
                                    QStringLiteral("Why, for the audit log (and the last error "
                                                   "of cancelled events)."),
                                    QStringLiteral("text"));
    const QCommandLineOption yes(QStringLiteral("yes"),
                                 QStringLiteral("Do not ask for confirmation (needed when stdin "
                                                "is not a terminal)."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the result as one JSON object."));
    parser.addOptions({all, dryRun, limit, batchSize, rate, reason, yes, json});
    parser.setEpilog(
        QStringLiteral("Only %1 events are touched; each batch re-checks the state, so events "
                       "that moved meanwhile are skipped and counted. Every change is recorded "
                       "in the audit log. Ctrl-C stops after the current batch.\n\n"
                       "Example (preview, then do it):\n"
                       "  outboxctl %2 %3 --dry-run\n"
                       "  outboxctl %2 %3")
            .arg(allowedNames(spec), QString(spec.verb), QString(spec.example)));
    if (auto exit = parser.parse())
        return *exit;
    if (!parser.positionalArguments().isEmpty())
        return parser.usageError(QStringLiteral("unexpected argument '%1' (select events with "
                                                "--id or the filter flags)")
                                     .arg(parser.positionalArguments().first()));

    auto filter = filterFromOptions(parser);
    if (!filter)
        return parser.usageError(filter.errorMessage());
    auto maxRows =
        parser.integer(QStringLiteral("limit"), -1, 1, std::numeric_limits<qint64>::max());
    if (!maxRows)
        return parser.usageError(maxRows.errorMessage());
    auto batch = parser.integer(QStringLiteral("batch-size"), 500, 1, 100000);
    if (!batch)
        return parser.usageError(batch.errorMessage());
    auto perSecond = parser.number(QStringLiteral("rate"), 0, 0);
    if (!perSecond)
        return parser.usageError(perSecond.errorMessage());
    if (parser.isSet(rate) && perSecond.value() <= 0)
        return parser.usageError(QStringLiteral("--rate must be more than 0 events per second"));

    if (filter->status && !spec.allowed.contains(*filter->status))
        return parser.usageError(
            QStringLiteral("%1 only touches %2 events; --status %3 would "
                           "match nothing")
                .arg(QString(spec.verb), allowedNames(spec), core::statusName(*filter->status)));
    if (spec.action == store::Action::Purge && !filter->status && !filter->olderThan)
        return parser.usageError(QStringLiteral("purge needs --status delivered, --status dead "
                                                "or --older-than DURATION, so that it deletes "
                                                "no more than you mean"));
    if (filter->isEmpty() && !parser.isSet(all))
        return parser.usageError(QStringLiteral("no filter given: this would %1 every %2 event. "
                                                "Narrow it down (e.g. --namespace, --topic, "
                                                "--id) or pass --all")
                                     .arg(QString(spec.verb), allowedNames(spec)));
    const bool dry = parser.isSet(dryRun);
    if (!dry && !parser.isSet(yes) && !context.console.stdinIsTerminal())
        return parser.usageError(QStringLiteral("stdin is not a terminal, so outboxctl cannot "
                                                "ask: add --yes to confirm non-interactively (or "
                                                "--dry-run to preview)"));

    const QString described = filter->isEmpty()
                                  ? QStringLiteral("all %1 events").arg(allowedNames(spec))
                                  : filter->describe();
    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::OperatorStore operations(connection->database(),
                                    store::Actor::fromEnvironment(QStringLiteral("outboxctl")));
    store::BulkOptions options;
    options.batchSize = int(batch.value());
    options.limit = maxRows.value();
    options.ratePerSecond = perSecond.value();
    options.reason = parser.value(reason);

    auto &out = context.console.out();
    auto &err = context.console.err();

    if (dry || !parser.isSet(yes)) {
        store::BulkOptions preview = options;
        preview.dryRun = true;
        auto result = operations.run(spec.action, filter.value(), preview);
        if (!result)
            return parser.fail(result.error());
        const qint64 matched =
            options.limit >= 0 ? std::min(result->matched, options.limit) : result->matched;
        if (dry) {
            if (parser.isSet(json)) {
                out << resultJson(result.value(), described) << '\n';
                return ExitOk;
            }
            out << "Dry run: would " << spec.verb << ' ' << matched << " event"
                << (matched == 1 ? "" : "s") << " (" << described << "). Nothing was changed.\n";
            if (!result->sample.isEmpty())
                out << "Sample:\n  " << idList(result->sample) << '\n';
            return ExitOk;
        }
        if (matched == 0) {
            out << "No " << allowedNames(spec) << " events match (" << described
                << "); nothing to do.\n";
            return ExitOk;
        }
        err << QString(spec.verb).at(0).toUpper() << QString(spec.verb).mid(1) << ' ' << matched
            << " event" << (matched == 1 ? "" : "s") << " (" << described << ")? [y/N] "
            << Qt::flush;
        const auto answer = context.console.readLine();
        if (!answer || (answer->compare(QLatin1String("y"), Qt::CaseInsensitive) != 0 &&
                        answer->compare(QLatin1String("yes"), Qt::CaseInsensitive) != 0)) {
            err << "Not confirmed; nothing was changed.\n";
            return ExitFailure;
        }
    }

    InterruptGuard interrupt;
    bool announced = false;
    options.progress = [&](qint64 done, qint64 total) {
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
    auto result = operations.run(spec.action, filter.value(), options);
    if (!result)
        return parser.fail(result.error());

    if (result->matched == 0)
        err << "No " << allowedNames(spec) << " events match (" << described << ").\n";
    if (parser.isSet(json)) {
        out << resultJson(result.value(), described) << '\n';
    } else {
        out << spec.verb << ": changed " << result->changed << ", skipped " << result->skipped
            << " (moved meanwhile)";
        if (result->auditId > 0)
            out << "; audit entry " << result->auditId;
        out << '\n';
        if (spec.action == store::Action::Replay && !result->created.isEmpty())
            out << "New events:\n  " << idList(result->created) << '\n';
    }
    if (result->cancelled) {
        err << "Interrupted after " << result->changed << " of " << result->matched
            << " events; run the same command again to continue.\n";
        return ExitInterrupted;
    }
    return ExitOk;
}

const ActionSpec kRequeue{
    store::Action::Requeue,
    QLatin1StringView("requeue"),
    {core::Status::Dead},
    QLatin1StringView("Send dead events again: back to pending with attempts reset to 0, due "
                      "now."),
    QLatin1StringView("--status dead --namespace billing --reason 'runner fixed'")};
const ActionSpec kRetry{store::Action::RetryNow,
                        QLatin1StringView("retry"),
                        {core::Status::Pending},
                        QLatin1StringView("Make pending events due now instead of waiting for "
                                          "their backoff; attempts are kept."),
                        QLatin1StringView("--namespace billing --topic invoice.paid")};
const ActionSpec kCancel{
    store::Action::Cancel,
    QLatin1StringView("cancel"),
    {core::Status::Pending, core::Status::Dead},
    QLatin1StringView("Stop delivering pending (or dead) events: they "
                      "become dead with the last error \"cancelled by "
                      "<who>\"."),
    QLatin1StringView("--id 0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57 --reason 'sent by mistake'")};
const ActionSpec kPurge{store::Action::Purge,
                        QLatin1StringView("purge"),
                        {core::Status::Delivered, core::Status::Dead},
                        QLatin1StringView("Delete delivered or dead events for good (never "
                                          "pending or processing ones). Needs --status or "
                                          "--older-than."),
                        QLatin1StringView("--status delivered --older-than 30d")};
const ActionSpec kReplay{
    store::Action::Replay,
    QLatin1StringView("replay"),
    {core::Status::Delivered, core::Status::Dead},
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
