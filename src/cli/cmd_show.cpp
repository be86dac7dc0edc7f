#include "cli/commands.h"
#include "cli/output.h"
#include "core/displaytext.h"
#include "core/uuidtext.h"
#include "dispatch/routingreport.h"
#include "store/destinationstore.h"
#include "store/queries.h"
#include "store/registrystore.h"

#include <QJsonArray>

namespace outbox::cli {

namespace {

QString at(const QDateTime &time, const QDateTime &now) {
    return isoTime(time) + QStringLiteral(" (") + relativeTime(time, now) + QLatin1Char(')');
}

QString plural(qint64 n, const char *word) {
    return QString::number(n) + QLatin1Char(' ') + QLatin1String(word) +
           (n == 1 ? QString() : QStringLiteral("s"));
}

// "; attempt 3 of 5 next" where the event has its own limit of attempts.
QString nextAttempt(const core::OutboxEvent &event) {
    if (!event.maxAttempts)
        return {};
    return QStringLiteral("; ") + core::attemptOfText(event.attempts + 1, event.maxAttempts) +
           QStringLiteral(" next");
}

// The answer to "why is this event not delivered yet?"
QString whyLine(const core::OutboxEvent &event, const QDateTime &now) {
    const QString failed = plural(event.attempts, "failed attempt");
    switch (event.status) {
    case core::Status::Pending:
        if (event.nextAttemptAt.isValid() && event.nextAttemptAt > now) {
            if (event.attempts > 0)
                return QStringLiteral("waiting for backoff until %1 after %2%3")
                    .arg(at(event.nextAttemptAt, now), failed, nextAttempt(event));
            return QStringLiteral("pending, due %1 at %2")
                .arg(relativeTime(event.nextAttemptAt, now), isoTime(event.nextAttemptAt));
        }
        if (event.attempts > 0)
            return QStringLiteral("due now for another attempt after %1%2; waiting for a "
                                  "dispatcher to claim it")
                .arg(failed, nextAttempt(event));
        return QStringLiteral("pending, due now; waiting for a dispatcher to claim it");
    case core::Status::Processing: {
        const QString worker =
            event.lockedBy ? core::uuidText(*event.lockedBy) : QStringLiteral("an unknown worker");
        if (event.lockedUntil.isValid() && event.lockedUntil > now)
            return QStringLiteral("leased by worker %1 until %2 (%3 in progress)")
                .arg(worker, at(event.lockedUntil, now),
                     core::attemptOfText(event.attempts, event.maxAttempts));
        return QStringLiteral("lease of worker %1 expired at %2; the next claim or dead sweep "
                              "takes it over")
            .arg(worker, at(event.lockedUntil, now));
    }
    case core::Status::Dead:
        return QStringLiteral("dead after %1%2; 'outboxctl requeue --id %3' sends it again")
            .arg(event.maxAttempts ? core::attemptOfText(event.attempts, event.maxAttempts)
                                   : plural(event.attempts, "attempt"),
                 event.lastError ? QStringLiteral(": ") + *event.lastError : QString(),
                 core::uuidText(event.id));
    case core::Status::Delivered:
        return QStringLiteral("delivered at %1").arg(at(event.deliveredAt, now));
    }
    return QString();
}

QJsonObject attemptJson(const core::AttemptRecord &attempt) {
    return QJsonObject{
        {QStringLiteral("attempt"), attempt.attempt},
        {QStringLiteral("at"), jsonTime(attempt.at)},
        {QStringLiteral("worker_id"), jsonUuid(attempt.workerId)},
        {QStringLiteral("http_status"),
         attempt.httpStatus ? QJsonValue(*attempt.httpStatus) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("duration_ms"), attempt.durationMs},
        {QStringLiteral("error"), attempt.error},
    };
}

QJsonObject auditJson(const core::AuditRecord &audit) {
    return QJsonObject{
        {QStringLiteral("id"), audit.id},           {QStringLiteral("at"), jsonTime(audit.at)},
        {QStringLiteral("action"), audit.action},   {QStringLiteral("db_user"), audit.dbUser},
        {QStringLiteral("os_user"), audit.osUser},  {QStringLiteral("host"), audit.host},
        {QStringLiteral("filter"), audit.filter},   {QStringLiteral("affected"), audit.affected},
        {QStringLiteral("skipped"), audit.skipped},
    };
}

// "event X (dead), the oldest of 3 unfinished earlier events of its
// aggregate": under --ordering aggregate the event waits for X.
QString waitsForLine(const store::AggregateBlocker &blocker) {
    if (blocker.kind == store::AggregateBlocker::Kind::OpenTransaction) {
        QString line = QStringLiteral("open transaction %1").arg(blocker.transactionId);
        if (blocker.backendPid != 0)
            line += QStringLiteral(" (backend %1%2)")
                        .arg(QString::number(blocker.backendPid),
                             blocker.transactionStart.isValid()
                                 ? QStringLiteral(", began ") +
                                       blocker.transactionStart.toUTC().toString(Qt::ISODate)
                                 : QString());
        return line + QStringLiteral(", which may still add an earlier event of its aggregate; "
                                     "dispatchers with --ordering aggregate deliver this one "
                                     "once it ends");
    }
    QString line = QStringLiteral("event %1 (%2)")
                       .arg(core::uuidText(blocker.id), core::statusName(blocker.status));
    if (blocker.unfinishedBefore > 1)
        line += QStringLiteral(", the oldest of %1 unfinished earlier events of its aggregate")
                    .arg(blocker.unfinishedBefore);
    else
        line += QStringLiteral(", an unfinished earlier event of its aggregate");
    line += QStringLiteral("; dispatchers with --ordering aggregate deliver this one after it");
    if (blocker.status == core::Status::Dead)
        line += QStringLiteral(" (requeue or purge it)");
    return line;
}

// The same for --json: the earlier event, or the open transaction (its
// backend and start null where the database does not show them).
QJsonValue waitsForJson(const store::AggregateBlocker &blocker) {
    if (blocker.kind == store::AggregateBlocker::Kind::OpenTransaction)
        return QJsonObject{
            {QStringLiteral("open_transaction"), QString::number(blocker.transactionId)},
            {QStringLiteral("backend_pid"),
             blocker.backendPid != 0 ? QJsonValue(blocker.backendPid) : QJsonValue()},
            {QStringLiteral("transaction_start"), jsonTime(blocker.transactionStart)},
        };
    return QJsonObject{
        {QStringLiteral("id"), core::uuidText(blocker.id)},
        {QStringLiteral("status"), core::statusName(blocker.status)},
        {QStringLiteral("unfinished_before"), blocker.unfinishedBefore},
    };
}

// Where a pending event goes when the running dispatchers route by namespace
// and topic (dispatch/routingreport.h): the destination and what holds it
// up, or that none claims it. Null when no routing decides (or the registry
// cannot be read: this line is a help, not the answer).
struct DestinationOfEvent {
    QString line;
    QJsonValue json;
};

DestinationOfEvent destinationOf(Connection &connection, const core::OutboxEvent &e,
                                 const QDateTime &now) {
    if (e.status != core::Status::Pending)
        return {};
    store::RegistryStore registry(connection);
    store::DestinationStore destinations(connection);
    const auto list = registry.list();
    if (!list)
        return {};
    const auto reports = destinations.reports();
    if (!reports)
        return {};
    const auto pauses = destinations.pauses();
    if (!pauses)
        return {};
    const dispatch::EventRoute route = dispatch::routeOfEvent(list->entries, reports.value(),
                                                              pauses.value(), e.nameSpace, e.topic);
    if (!route.routed)
        return {};
    if (!route.destination)
        return {QStringLiteral("none: no route of the running dispatchers matches namespace %1, "
                               "topic %2, so none claims it; add one ('outboxctl routes check "
                               "FILE --namespace %1 --topic %2' shows where an event goes)")
                    .arg(e.nameSpace, e.topic),
                QJsonObject{{QStringLiteral("name"), QJsonValue()}}};
    const dispatch::DestinationStats &d = *route.destination;
    QString line = QStringLiteral("%1 (%2, %3)").arg(d.name, d.kind, d.target);
    QJsonObject json{{QStringLiteral("name"), d.name},
                     {QStringLiteral("kind"), d.kind},
                     {QStringLiteral("target"), d.target},
                     {QStringLiteral("circuit"), d.circuit},
                     {QStringLiteral("reason"), d.reason}};
    if (const auto &pause = route.pause) {
        line += QStringLiteral("; paused by %1 at %2: %3 ('outboxctl destination resume %4')")
                    .arg(pause->pausedBy, at(pause->pausedAt, now), pause->reason, d.name);
        json.insert(QStringLiteral("paused_by"), pause->pausedBy);
        json.insert(QStringLiteral("pause_reason"), pause->reason);
    }
    if (route.circuitOpen)
        line += QStringLiteral("; circuit %1 since %2: %3 (its events wait without using "
                               "attempts)")
                    .arg(d.circuit, at(d.circuitSince, now), d.reason);
    return {line, json};
}

void printDetail(QTextStream &out, const store::EventDetail &detail,
                 const DestinationOfEvent &destination) {
    const core::OutboxEvent &e = detail.event;
    const QDateTime now =
        detail.serverTime.isValid() ? detail.serverTime : QDateTime::currentDateTimeUtc();
    QList<QPair<QString, QString>> fields{
        {QStringLiteral("Status"), core::statusName(e.status)},
        {QStringLiteral("Why"), whyLine(e, now)},
        {QStringLiteral("Namespace"), e.nameSpace},
        {QStringLiteral("Topic"), e.topic},
    };
    if (!destination.line.isEmpty())
        fields.insert(2, {QStringLiteral("Destination"), destination.line});
    if (e.aggregateType || e.aggregateId)
        fields.append({QStringLiteral("Aggregate"), e.aggregateType.value_or(QString()) +
                                                        QLatin1Char(' ') +
                                                        e.aggregateId.value_or(QString())});
    if (detail.blockedBy)
        fields.append({QStringLiteral("Waits for"), waitsForLine(*detail.blockedBy)});
    if (e.tenantId)
        fields.append({QStringLiteral("Tenant"), core::uuidText(*e.tenantId)});
    if (e.dedupeKey)
        fields.append({QStringLiteral("Dedupe key"), *e.dedupeKey});
    fields.append(
        {QStringLiteral("Attempts"),
         e.maxAttempts
             ? QStringLiteral("%1 of %2 (the event's own limit)")
                   .arg(e.attempts)
                   .arg(*e.maxAttempts)
             : QStringLiteral("%1 (limit: the dispatcher's --max-attempts)").arg(e.attempts)});
    if (e.status == core::Status::Pending)
        fields.append({QStringLiteral("Next attempt"), at(e.nextAttemptAt, now)});
    if (e.lockedBy)
        fields.append(
            {QStringLiteral("Locked by"),
             core::uuidText(*e.lockedBy) + QStringLiteral(" until ") + at(e.lockedUntil, now)});
    if (e.lastError)
        fields.append({QStringLiteral("Last error"), *e.lastError});
    if (e.deliveredAt.isValid())
        fields.append({QStringLiteral("Delivered"), at(e.deliveredAt, now)});
    fields.append({QStringLiteral("Created"), at(e.createdAt, now)});
    fields.append({QStringLiteral("Updated"), at(e.updatedAt, now)});
    if (e.replayOf)
        fields.append({QStringLiteral("Replay of"), core::uuidText(*e.replayOf)});
    if (e.traceparent) {
        fields.append({QStringLiteral("Trace id"), core::traceIdOf(e.traceparent)});
        fields.append({QStringLiteral("Traceparent"), *e.traceparent});
    }
    if (e.tracestate)
        fields.append({QStringLiteral("Tracestate"), *e.tracestate});

    out << "Event " << core::uuidText(e.id) << '\n';
    // Topic, namespace, last error and the rest were written by producers and
    // runners: shown with their control characters escaped.
    for (const auto &[label, value] : std::as_const(fields))
        out << "  " << QString(label + QLatin1Char(':')).leftJustified(14)
            << core::escapeControls(value) << '\n';

    out << "\nPayload:\n";
    const QString payload = core::escapeControls(reformatJson(e.payload, 2), true);
    for (const QString &line : payload.split(QLatin1Char('\n')))
        out << "  " << line << '\n';

    out << "\nFailed attempts (" << detail.attempts.size() << "):\n";
    if (!detail.attempts.isEmpty()) {
        Table table({QStringLiteral("  #"), QStringLiteral("AT (UTC)"), QStringLiteral("HTTP"),
                     QStringLiteral("TOOK"), QStringLiteral("WORKER"), QStringLiteral("ERROR")});
        table.setRightAligned(0);
        for (const core::AttemptRecord &a : detail.attempts) {
            table.addRow({QString::number(a.attempt), isoTime(a.at),
                          a.httpStatus ? QString::number(*a.httpStatus) : QStringLiteral("-"),
                          humanDuration(a.durationMs),
                          a.workerId ? core::uuidText(*a.workerId).left(8) : QStringLiteral("-"),
                          elide(a.error, 100)});
        }
        table.print(out);
    }

    out << "\nOperator actions (" << detail.audit.size() << "):\n";
    if (!detail.audit.isEmpty()) {
        Table table({QStringLiteral("  AT (UTC)"), QStringLiteral("ACTION"), QStringLiteral("BY"),
                     QStringLiteral("FILTER")});
        for (const core::AuditRecord &a : detail.audit) {
            QString by = a.dbUser;
            if (!a.osUser.isEmpty())
                by += QStringLiteral(" (") + a.osUser +
                      (a.host.isEmpty() ? QString() : QLatin1Char('@') + a.host) + QLatin1Char(')');
            table.addRow({QStringLiteral("  ") + isoTime(a.at), a.action, by, a.filter});
        }
        table.print(out);
    }

    if (!detail.replays.isEmpty()) {
        out << "\nReplayed as:\n";
        for (const QUuid &id : detail.replays)
            out << "  " << core::uuidText(id) << '\n';
    }
}

} // namespace

int runShow(CommandContext &context) {
    CommandParser parser(context,
                         QStringLiteral("Show one event: its fields, the payload, every failed "
                                        "attempt, the operator actions that touched it, and why "
                                        "it is not delivered yet."));
    parser.addPositional(QStringLiteral("id"), QStringLiteral("The event id (a UUID)."),
                         QStringLiteral("<id>"));
    const auto json = option("json", "Print one JSON object: event, why, attempts, "
                                     "audit, replays, server_time, waits_for, destination "
                                     "(where routing dispatchers send a pending event: name, "
                                     "kind, target, circuit, reason; name null: none).");
    parser.addOption(json);
    if (auto exit = parser.parse())
        return *exit;
    const QStringList positional = parser.positionalArguments();
    if (positional.isEmpty())
        return parser.usageError(QStringLiteral("missing the event id"));
    if (positional.size() > 1)
        return parser.usageError(
            QStringLiteral("unexpected argument '%1' (show takes one id)").arg(positional.at(1)));
    const auto id = parseUuid(positional.first());
    if (!id)
        return parser.usageError(
            QStringLiteral("'%1' is not an event id (a UUID)").arg(positional.first()));

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::EventQueries queries(*connection);
    auto detail = queries.detail(*id);
    if (!detail)
        return parser.fail(detail.error());
    if (!detail.value())
        return parser.fail(
            core::Error{core::ErrorKind::NotFound,
                        QStringLiteral("no event with id %1").arg(core::uuidText(*id))});
    const store::EventDetail &d = *detail.value();

    const QDateTime now = d.serverTime.isValid() ? d.serverTime : QDateTime::currentDateTimeUtc();
    const DestinationOfEvent destination = destinationOf(*connection, d.event, now);
    auto &out = context.console.out();
    if (!parser.isSet(json)) {
        printDetail(out, d, destination);
        return ExitOk;
    }
    QJsonArray attempts;
    for (const core::AttemptRecord &a : d.attempts)
        attempts.append(attemptJson(a));
    QJsonArray audit;
    for (const core::AuditRecord &a : d.audit)
        audit.append(auditJson(a));
    QJsonArray replays;
    for (const QUuid &replay : d.replays)
        replays.append(core::uuidText(replay));
    const QString marker = QStringLiteral("outbox-event-") + core::uuidText(QUuid::createUuid());
    QByteArray text = jsonText(QJsonObject{
        {QStringLiteral("event"), marker},
        {QStringLiteral("why"), whyLine(d.event, now)},
        {QStringLiteral("attempts"), attempts},
        {QStringLiteral("audit"), audit},
        {QStringLiteral("replays"), replays},
        {QStringLiteral("server_time"), jsonTime(d.serverTime)},
        {QStringLiteral("waits_for"), d.blockedBy ? waitsForJson(*d.blockedBy) : QJsonValue()},
        {QStringLiteral("destination"), destination.json},
    });
    // The event goes in as text so its payload keeps its exact numbers.
    text.replace(QByteArray('"' + marker.toUtf8() + '"'), eventJson(d.event));
    out << QString::fromUtf8(text) << '\n';
    return ExitOk;
}

} // namespace outbox::cli
