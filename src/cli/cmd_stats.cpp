#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/output.h"
#include "store/queries.h"

#include <QJsonArray>
#include <QThread>

namespace outbox::cli {

namespace {

QJsonObject statsJson(const store::StatusCounts &counts) {
    QJsonArray topics;
    for (const store::TopicCount &topic : counts.topics) {
        topics.append(QJsonObject{
            {QStringLiteral("namespace"), topic.nameSpace},
            {QStringLiteral("topic"), topic.topic},
            {QStringLiteral("pending"), topic.pending},
            {QStringLiteral("processing"), topic.processing},
            {QStringLiteral("dead"), topic.dead},
        });
    }
    const auto ageMs = [&counts](const QDateTime &at) {
        return at.isValid() && counts.serverTime.isValid()
                   ? QJsonValue(at.msecsTo(counts.serverTime))
                   : QJsonValue(QJsonValue::Null);
    };
    return QJsonObject{
        {QStringLiteral("pending"), counts.pending},
        {QStringLiteral("retrying"), counts.retrying},
        {QStringLiteral("processing"), counts.processing},
        {QStringLiteral("expired_leases"), counts.expiredLeases},
        {QStringLiteral("delivered"), counts.delivered},
        {QStringLiteral("delivered_estimated"), counts.deliveredEstimated},
        {QStringLiteral("dead"), counts.dead},
        {QStringLiteral("oldest_pending_at"), jsonTime(counts.oldestPendingAt)},
        {QStringLiteral("oldest_pending_age_ms"), ageMs(counts.oldestPendingAt)},
        {QStringLiteral("oldest_due_at"), jsonTime(counts.oldestDueAt)},
        {QStringLiteral("oldest_due_age_ms"), ageMs(counts.oldestDueAt)},
        {QStringLiteral("blocked"), counts.blocked},
        {QStringLiteral("server_time"), jsonTime(counts.serverTime)},
        {QStringLiteral("topics"), topics},
    };
}

void printStats(QTextStream &out, const store::StatusCounts &counts) {
    Table table({QStringLiteral("STATUS"), QStringLiteral("EVENTS"), QString()});
    table.setRightAligned(1);
    table.addRow({QStringLiteral("pending"), QString::number(counts.pending),
                  QStringLiteral("first attempt")});
    table.addRow({QStringLiteral("retrying"), QString::number(counts.retrying),
                  QStringLiteral("pending again after a failed attempt")});
    table.addRow({QStringLiteral("processing"), QString::number(counts.processing),
                  counts.expiredLeases > 0
                      ? QStringLiteral("%1 with an expired lease (a dispatcher stopped?)")
                            .arg(counts.expiredLeases)
                      : QString()});
    table.addRow({QStringLiteral("delivered"),
                  (counts.deliveredEstimated ? QStringLiteral("~") : QString()) +
                      QString::number(counts.delivered),
                  counts.deliveredEstimated ? QStringLiteral("estimated") : QString()});
    table.addRow(
        {QStringLiteral("dead"), QString::number(counts.dead),
         counts.dead > 0 ? QStringLiteral("see: outboxctl list --status dead") : QString()});
    table.print(out);
    out << '\n';
    if (counts.oldestPendingAt.isValid()) {
        out << "Oldest pending event: created " << isoTime(counts.oldestPendingAt) << " ("
            << relativeTime(counts.oldestPendingAt, counts.serverTime) << ")\n";
    } else {
        out << "Oldest pending event: none\n";
    }
    // Due and not claimed: the age that says whether anything is delivering.
    if (counts.oldestDueAt.isValid())
        out << "Oldest due event:     due since " << isoTime(counts.oldestDueAt) << " ("
            << relativeTime(counts.oldestDueAt, counts.serverTime) << ", not paused)\n";
    else
        out << "Oldest due event:     none (nothing is due, or only paused events)\n";
    if (counts.blocked > 0)
        out << "Blocked:              " << counts.blocked
            << " pending event(s) wait for an earlier event of their aggregate (aggregate "
               "order; outboxctl show <id> names it)\n";
    if (counts.topics.isEmpty())
        return;
    out << '\n';
    Table topics({QStringLiteral("NAMESPACE"), QStringLiteral("TOPIC"), QStringLiteral("PENDING"),
                  QStringLiteral("PROCESSING"), QStringLiteral("DEAD")});
    topics.setRightAligned(2);
    topics.setRightAligned(3);
    topics.setRightAligned(4);
    for (const store::TopicCount &topic : counts.topics) {
        topics.addRow({topic.nameSpace, topic.topic, QString::number(topic.pending),
                       QString::number(topic.processing), QString::number(topic.dead)});
    }
    topics.print(out);
}

// `--watch` takes an optional value, which QCommandLineParser cannot
// express: "--watch" alone means every 2s, "--watch 5s" or "--watch=5s"
// set the interval. stats has no positional arguments, so a bare word after
// --watch can only be its value.
QStringList normaliseWatch(const QStringList &arguments) {
    QStringList result;
    for (qsizetype i = 0; i < arguments.size(); ++i) {
        const QString &argument = arguments.at(i);
        if (argument == QLatin1String("--watch")) {
            result << QStringLiteral("--watch=") +
                          (i + 1 < arguments.size() &&
                                   !arguments.at(i + 1).startsWith(QLatin1Char('-'))
                               ? arguments.at(++i)
                               : QStringLiteral("2s"));
        } else {
            result << argument;
        }
    }
    return result;
}

} // namespace

int runStats(CommandContext &context) {
    context.arguments = normaliseWatch(context.arguments);
    CommandParser parser(context,
                         QStringLiteral("Event counts per status and, for the live sets, per "
                                        "namespace and topic. Delivered is counted exactly up to "
                                        "100000 rows and estimated beyond (shown with ~)."));
    const auto json = option("json", "Print one JSON object (with --watch: one per "
                                     "line).");
    std::optional<core::Millis> interval;
    parser.addOptions({json, timerOption("watch <interval>",
                                         "Refresh every <interval> until Ctrl-C; --watch alone "
                                         "means every 2s.",
                                         interval)});
    parser.setEpilog(
        QStringLiteral("JSON keys: pending, retrying, processing, expired_leases, delivered,\n"
                       "delivered_estimated, dead, oldest_pending_at, oldest_pending_age_ms,\n"
                       "oldest_due_at, oldest_due_age_ms, blocked, server_time,\n"
                       "topics[{namespace, topic, pending, processing, dead}].\n"
                       "Times are ISO 8601 UTC; null when there is none."));
    if (auto exit = parser.parseAndRead())
        return *exit;
    if (interval && interval->count() <= 0)
        return parser.usageError(QStringLiteral("--watch: the interval must be longer than 0s"));

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::EventQueries queries(*connection);
    auto &out = context.console.out();

    if (!interval) {
        auto counts = queries.counts();
        if (!counts)
            return parser.fail(counts.error());
        if (parser.isSet(json))
            out << jsonText(statsJson(counts.value())) << '\n';
        else
            printStats(out, counts.value());
        return ExitOk;
    }

    InterruptGuard interrupt;
    const bool clearScreen = !parser.isSet(json) && context.console.stdoutIsTerminal();
    while (!interrupt.interrupted()) {
        auto counts = queries.counts();
        if (!counts)
            return parser.fail(counts.error());
        if (parser.isSet(json)) {
            out << jsonText(statsJson(counts.value())) << '\n';
        } else {
            if (clearScreen)
                out << "\x1b[H\x1b[2J";
            out << "Every " << core::formatDuration(*interval) << " - "
                << isoTime(counts->serverTime) << " - Ctrl-C to stop\n\n";
            printStats(out, counts.value());
            if (!clearScreen)
                out << '\n';
        }
        out.flush();
        // Sleep in small steps so Ctrl-C ends the loop promptly.
        for (qint64 slept = 0; slept < interval->count() && !interrupt.interrupted(); slept += 50)
            QThread::msleep(50);
    }
    return ExitOk;
}

} // namespace outbox::cli
