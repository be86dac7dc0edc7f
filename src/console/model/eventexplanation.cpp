#include "console/model/eventexplanation.h"

#include "console/model/consoletypes.h"
#include "core/uuidtext.h"
#include "dispatch/routingreport.h"

#include <QCoreApplication>

#include <algorithm>

namespace outbox::console {

namespace {

QString tr(const char *text) {
    return QCoreApplication::translate("EventExplanation", text);
}

QString when(const QDateTime &time, const QDateTime &now) {
    // "14:03:07 (in 12s)": the time to note down, then how far off it is.
    const QDateTime local = time.toLocalTime();
    const QString absolute = local.date() == now.toLocalTime().date()
                                 ? local.toString(QStringLiteral("HH:mm:ss"))
                                 : local.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    return tr("%1 (%2)").arg(absolute, formatRelativeTime(time, now));
}

QString worker(const std::optional<QUuid> &id) {
    return id ? core::uuidText(*id).left(8) : tr("an unknown worker");
}

QString attemptsText(int attempts) {
    return attempts == 1 ? tr("1 attempt") : tr("%1 attempts").arg(attempts);
}

// " Attempt 3 of 5 comes next." where the event has its own limit.
QString limitText(const core::OutboxEvent &e) {
    if (!e.maxAttempts)
        return {};
    return tr(" Attempt %1 of %2 comes next (the event's own limit).")
        .arg(e.attempts + 1)
        .arg(*e.maxAttempts);
}

QString lastErrorText(const core::OutboxEvent &e) {
    if (!e.lastError || e.lastError->trimmed().isEmpty()) {
        return {};
    }
    QString error = firstLine(*e.lastError, 200);
    if (!error.endsWith(QLatin1Char('.')) && !error.endsWith(QChar(0x2026))) {
        error += QLatin1Char('.');
    }
    return tr(" Last error: %1").arg(error);
}

bool nobodyDispatching(const QDateTime &dueSince, const QDateTime &now,
                       const DispatchActivity &activity) {
    if (activity.processing != 0) {
        return false; // unknown, or someone is working
    }
    const qint64 grace = activity.grace.count();
    if (dueSince.msecsTo(now) < grace) {
        return false;
    }
    return !activity.lastActivity.isValid() || activity.lastActivity.msecsTo(now) >= grace;
}

// From the registry: paused, nobody alive, or nobody serving the namespace.
std::optional<Explanation> fromRegistry(const core::OutboxEvent &e, const QDateTime &now,
                                        const QDateTime &dueSince, const RegistrySnapshot &r) {
    if (const auto pause = r.pauseOf(e.nameSpace, e.topic)) {
        const QString what =
            pause->topic ? tr("Topic %1 of namespace %2").arg(*pause->topic, pause->nameSpace)
                         : tr("Namespace %1").arg(pause->nameSpace);
        QString who = pause->pausedBy;
        if (!pause->osUser.isEmpty() && pause->osUser != pause->pausedBy)
            who += tr(" (%1)").arg(pause->osUser);
        return Explanation{
            Explanation::Tone::Warning,
            tr("Paused: %1 was paused by %2 at %3: \u201c%4\u201d. The event stays "
               "pending until it is resumed (navigator: Resume, or outboxctl "
               "resume --namespace %5).")
                .arg(what, who, when(pause->pausedAt, now), pause->reason, pause->nameSpace)};
    }
    if (e.nextAttemptAt.isValid() && e.nextAttemptAt > now)
        return std::nullopt; // not due yet: the backoff explanation says more
    const QList<store::DispatcherEntry> &all = r.dispatchers.entries;
    const int alive = r.dispatchers.aliveCount();
    if (alive == 0) {
        if (all.isEmpty())
            return Explanation{Explanation::Tone::Error,
                               tr("Due since %1, but no dispatcher is running (none has "
                                  "registered). Start one: outboxctl dispatch.")
                                   .arg(formatRelativeTime(dueSince, now))};
        QDateTime last;
        for (const auto &entry : all)
            last = std::max(last, entry.heartbeatAt);
        return Explanation{Explanation::Tone::Error,
                           tr("Due since %1, but no dispatcher has heartbeat since %2: every "
                              "registered dispatcher is gone. Start one: outboxctl dispatch.")
                               .arg(formatRelativeTime(dueSince, now), when(last, now))};
    }
    const bool served = std::any_of(all.cbegin(), all.cend(), [&e](const auto &entry) {
        return entry.alive && entry.serves(e.nameSpace);
    });
    if (!served) {
        QStringList namespaces;
        for (const auto &entry : all) {
            if (entry.alive && !namespaces.contains(entry.nameSpace))
                namespaces << entry.nameSpace;
        }
        return Explanation{
            Explanation::Tone::Error,
            (alive == 1
                 ? tr("1 dispatcher alive, but it does not serve namespace %1 (it serves %2).")
                       .arg(e.nameSpace, namespaces.join(QStringLiteral(", ")))
                 : tr("%1 dispatchers alive, none serves namespace %2 (they serve %3).")
                       .arg(QString::number(alive), e.nameSpace,
                            namespaces.join(QStringLiteral(", ")))) +
                tr(" Start one for it: outboxctl dispatch --namespace %1.").arg(e.nameSpace)};
    }
    return std::nullopt;
}

// A due event's destination, when that is why it waits: no route matches,
// the destination is paused, or its circuit is open.
std::optional<Explanation> fromDestination(const core::OutboxEvent &e, const QDateTime &now,
                                           const dispatch::EventRoute &route) {
    if (!route.routed)
        return std::nullopt;
    if (!route.destination)
        return Explanation{Explanation::Tone::Error,
                           tr("No route of the running dispatchers matches namespace %1, topic "
                              "%2, so none claims it. Add a route for it (outboxctl routes check "
                              "FILE --namespace %1 --topic %2 shows where an event goes).")
                               .arg(e.nameSpace, e.topic)};
    const dispatch::DestinationStats &d = *route.destination;
    if (const auto &pause = route.pause)
        return Explanation{
            Explanation::Tone::Warning,
            tr("Paused: it goes to destination %1, paused by %2 at %3: "
               "\u201c%4\u201d. Its events stay pending until it is resumed "
               "(Dispatchers pane, or outboxctl destination resume %1).")
                .arg(d.name, pause->pausedBy, when(pause->pausedAt, now), pause->reason)};
    if (route.circuitOpen)
        return Explanation{
            Explanation::Tone::Warning,
            tr("It goes to destination %1 (%2, %3), whose circuit is %4 since %5: %6. Its "
               "events wait without using attempts; a probe closes the circuit when the "
               "destination answers again.")
                .arg(d.name, d.kind, d.target, d.circuit,
                     d.circuitSince.isValid() ? when(d.circuitSince, now) : tr("a while"),
                     d.reason.isEmpty() ? tr("no reason given") : d.reason)};
    return std::nullopt;
}

Explanation pending(const core::OutboxEvent &e, const QDateTime &now,
                    const DispatchActivity &activity) {
    const QDateTime dueFrom = e.nextAttemptAt.isValid() ? e.nextAttemptAt : e.createdAt;
    dispatch::EventRoute route;
    if (activity.registry) {
        if (auto known = fromRegistry(e, now, dueFrom, *activity.registry))
            return *known;
        route = dispatch::routeOfEvent(activity.registry->dispatchers.entries,
                                       activity.registry->destinations,
                                       activity.registry->destinationPauses, e.nameSpace, e.topic);
        if (auto known = fromDestination(e, now, route))
            return *known;
    }
    if (e.nextAttemptAt.isValid() && e.nextAttemptAt > now) {
        if (e.attempts == 0) {
            return {
                Explanation::Tone::Waiting,
                tr("Scheduled: the first attempt is due at %1.").arg(when(e.nextAttemptAt, now))};
        }
        return {Explanation::Tone::Waiting,
                tr("Waiting for backoff until %1, after %2 failed.")
                        .arg(when(e.nextAttemptAt, now), attemptsText(e.attempts)) +
                    limitText(e) + lastErrorText(e)};
    }
    const QDateTime dueSince = e.nextAttemptAt.isValid() ? e.nextAttemptAt : e.createdAt;
    if (!activity.registry && nobodyDispatching(dueSince, now, activity)) {
        return {Explanation::Tone::Error,
                tr("Due since %1, but no dispatcher is running: nothing is being processed and "
                   "nothing has been claimed recently. Start a dispatcher.")
                    .arg(formatRelativeTime(dueSince, now))};
    }
    QString text = tr("Due since %1; waiting for a dispatcher to claim it (oldest first).")
                       .arg(formatRelativeTime(dueSince, now));
    if (route.destination)
        text +=
            tr(" It goes to destination %1 (%2, %3).")
                .arg(route.destination->name, route.destination->kind, route.destination->target);
    if (activity.processing > 0) {
        text += tr(" %1 events are being delivered now.").arg(formatCount(activity.processing));
    }
    if (e.attempts > 0) {
        text += tr(" %1 failed so far.").arg(attemptsText(e.attempts)) + limitText(e) +
                lastErrorText(e);
    }
    return {Explanation::Tone::Waiting, text};
}

Explanation processing(const core::OutboxEvent &e, const QDateTime &now) {
    if (e.lockedUntil.isValid() && e.lockedUntil < now) {
        return {Explanation::Tone::Warning,
                tr("The lease of worker %1 expired at %2: that dispatcher stopped or stalled "
                   "during %3. Any dispatcher will reclaim it.")
                    .arg(worker(e.lockedBy), when(e.lockedUntil, now),
                         core::attemptOfText(e.attempts, e.maxAttempts))};
    }
    return {Explanation::Tone::Waiting,
            tr("Leased by worker %1 until %2: delivery %3 is in flight.")
                .arg(worker(e.lockedBy),
                     e.lockedUntil.isValid() ? when(e.lockedUntil, now) : tr("an unknown time"),
                     core::attemptOfText(e.attempts, e.maxAttempts))};
}

Explanation dead(const core::OutboxEvent &e) {
    const QString error = e.lastError.value_or(QString());
    if (error.startsWith(QLatin1String("cancelled by"))) {
        return {Explanation::Tone::Error,
                tr("Cancelled by an operator (%1) and will not be delivered. Requeue it to "
                   "deliver it after all.")
                    .arg(firstLine(error, 120))};
    }
    return {Explanation::Tone::Error,
            (e.maxAttempts && e.attempts >= *e.maxAttempts
                 ? tr("Dead after attempt %1 of %2 (the event's own limit): the dispatcher gave "
                      "up.")
                       .arg(e.attempts)
                       .arg(*e.maxAttempts)
                 : tr("Dead after %1: the dispatcher gave up.").arg(attemptsText(e.attempts))) +
                lastErrorText(e) + tr(" Requeue it once the cause is fixed.")};
}

// A due event behind an open producer transaction (sql/013): which one, and
// since when where the database shows it.
Explanation behindTransaction(const core::OutboxEvent &e, const store::AggregateBlocker &blocker,
                              const QDateTime &now) {
    QString who = tr("transaction %1").arg(blocker.transactionId);
    if (blocker.backendPid != 0)
        who += tr(" (backend %1").arg(blocker.backendPid) +
               (blocker.transactionStart.isValid()
                    ? tr(", open since %1)").arg(when(blocker.transactionStart, now))
                    : tr(")"));
    return {Explanation::Tone::Waiting,
            tr("Waiting for an open transaction that may still add an earlier event of "
               "aggregate %1 %2: %3 began writing before this event's and has not ended. "
               "Dispatchers that deliver in aggregate order send this one once it commits or "
               "rolls back; a long-running producer transaction holds back every such event "
               "written after it began.")
                .arg(e.aggregateType.value_or(QString()), e.aggregateId.value_or(QString()), who)};
}

// A due event behind an unfinished earlier event of its aggregate.
Explanation behind(const core::OutboxEvent &e, const store::AggregateBlocker &blocker,
                   const QDateTime &now) {
    if (blocker.kind == store::AggregateBlocker::Kind::OpenTransaction)
        return behindTransaction(e, blocker, now);
    const QString id = core::uuidText(blocker.id);
    const QString earlier =
        blocker.unfinishedBefore > 1
            ? tr("the oldest of %1 unfinished earlier events of aggregate %2 %3")
                  .arg(formatCount(blocker.unfinishedBefore), e.aggregateType.value_or(QString()),
                       e.aggregateId.value_or(QString()))
            : tr("an earlier event of aggregate %1 %2")
                  .arg(e.aggregateType.value_or(QString()), e.aggregateId.value_or(QString()));
    if (blocker.status == core::Status::Dead) {
        return {Explanation::Tone::Error,
                tr("Blocked by dead event %1, %2: dispatchers that deliver in aggregate order "
                   "hold this event until that one is requeued and delivered, or purged.")
                    .arg(id, earlier)};
    }
    return {Explanation::Tone::Waiting,
            tr("Waiting for event %1 (%2), %3: dispatchers that deliver in aggregate order send "
               "this one after it is delivered.")
                .arg(id, core::statusName(blocker.status), earlier)};
}

} // namespace

Explanation explainEvent(const core::OutboxEvent &event, const QDateTime &now,
                         const DispatchActivity &activity,
                         const std::optional<store::AggregateBlocker> &blockedBy) {
    switch (event.status) {
    case core::Status::Pending:
        if (blockedBy && !(event.nextAttemptAt.isValid() && event.nextAttemptAt > now))
            return behind(event, *blockedBy, now);
        return pending(event, now, activity);
    case core::Status::Processing:
        return processing(event, now);
    case core::Status::Dead:
        return dead(event);
    case core::Status::Delivered:
        return {Explanation::Tone::Ok,
                tr("Delivered at %1, after %2.")
                    .arg(event.deliveredAt.isValid() ? when(event.deliveredAt, now)
                                                     : tr("(time unknown)"),
                         attemptsText(event.attempts))};
    }
    return {};
}

} // namespace outbox::console
