#include "store/fleetstore.h"

#include "store/database.h"
#include "store/historystore.h"
#include "store/livecounts.h"
#include "store/pausestore.h"

#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

namespace {

// Counts `where` of outbox_events up to `LIMIT ?`: a walk of at most that
// many entries of the matching partial index.
QString cappedCount(const QString &where) {
    return QLatin1String(" (SELECT count(*) FROM (SELECT 1 FROM outbox_events e WHERE ") + where +
           QLatin1String(" LIMIT ?::bigint) c),");
}

// The planner's row count of a partial index (what the last VACUUM or
// ANALYZE saw).
QString indexEstimate(const char *index) {
    return QLatin1String(" (SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid ="
                         " to_regclass('") +
           QLatin1String(index) + QLatin1String("')),");
}

FleetCount capped(qint64 counted, qint64 cap, qint64 estimate) {
    return {cappedValue(counted, cap, estimate), counted > cap};
}

} // namespace

StatusCounts FleetSnapshot::toStatusCounts() const {
    StatusCounts counts;
    counts.pending = due.value + waiting.value;
    counts.processing = processing;
    counts.dead = dead.value;
    counts.deadEstimated = dead.estimated;
    counts.oldestDueAt = oldestDueAt;
    counts.serverTime = serverTime;
    // Deliveries of the last two minutes: it changes while events are
    // delivered, which is what the alert rules ask of it.
    const qsizetype n = deliveredPerMinute.size();
    for (qsizetype i = std::max<qsizetype>(n - 2, 0); i < n; ++i) {
        counts.delivered += deliveredPerMinute[i];
    }
    return counts;
}

FleetProbe::FleetProbe()
    : FleetProbe(Options{}) {}

FleetProbe::FleetProbe(Options options)
    : m_options(options)
    , m_errors(ErrorGroupWatch::Options{options.errorSample, options.errorDutyCycle}) {}

QString FleetProbe::countsSql() {
    return QLatin1String("SELECT") +
           cappedCount(QLatin1String("e.status = 'pending' AND NOT e.held AND"
                                     " e.next_attempt_at <= now()") +
                       notPausedCondition(QStringLiteral("e"))) +
           cappedCount(QStringLiteral("e.status = 'pending'")) +
           cappedCount(QStringLiteral("e.status = 'processing'")) +
           cappedCount(QStringLiteral("e.status = 'dead'")) +
           indexEstimate("outbox_events_pending_due_idx") +
           indexEstimate("outbox_events_dead_idx") + QLatin1Char(' ') +
           epochMsSql(QStringLiteral("now()")) + QLatin1String(", ") + epochMsSql(oldestDueSql()) +
           QLatin1String(", (SELECT count(*) FILTER (WHERE outbox_dispatcher_alive(heartbeat_at,"
                         " heartbeat_interval)) FROM outbox_dispatchers),"
                         " (SELECT count(*) FROM outbox_dispatchers),"
                         " (SELECT coalesce(string_agg(DISTINCT namespace, E'\\n'), '')"
                         " FROM outbox_pauses)");
}

core::Result<FleetSnapshot> FleetProbe::read(QSqlDatabase db) {
    const qint64 cap = std::max<qint64>(m_options.countCap, 1);
    auto row = execOneRow(db, countsSql(), {cap + 1, cap + 1, cap + 1, cap + 1},
                          QStringLiteral("reading the fleet's figures"));
    if (!row) {
        return row.error();
    }
    FleetSnapshot s;
    const FleetCount due = capped(row->value(0).toLongLong(), cap, 0);
    const FleetCount pending = capped(row->value(1).toLongLong(), cap, row->value(4).toLongLong());
    s.due = due.estimated ? FleetCount{cap, true} : due;
    s.waiting = {std::max<qint64>(pending.value - s.due.value, 0),
                 pending.estimated || s.due.estimated};
    s.processing = row->value(2).toLongLong();
    s.dead = capped(row->value(3).toLongLong(), cap, row->value(5).toLongLong());
    s.serverTime = timeFromEpochMs(row->value(6));
    s.oldestDueAt = timeFromEpochMs(row->value(7));
    const int registered = row->value(9).toInt();
    s.dispatchersAlive = row->value(8).toInt();
    s.dispatchersGone = std::max(registered - s.dispatchersAlive, 0);
    const QString paused = row->value(10).toString();
    if (!paused.isEmpty()) {
        s.pausedNamespaces = paused.split(QLatin1Char('\n'));
    }

    HistoryStore history(db);
    auto minutes = history.read(60);
    if (!minutes) {
        return minutes.error();
    }
    s.historyUnsupported = minutes->unsupported;
    s.deliveredPerMinute.fill(0, FleetSnapshot::kSparkMinutes);
    const QDateTime now = minutes->serverTime;
    for (const ThroughputMinute &m : std::as_const(minutes->throughput)) {
        s.diedLastHour += m.dead;
        const qint64 ago = m.minute.secsTo(now) / 60;
        if (ago <= 1) {
            s.diedRecentMinute = std::max(s.diedRecentMinute, m.dead);
        }
        if (ago >= 0 && ago < FleetSnapshot::kSparkMinutes) {
            s.deliveredPerMinute[FleetSnapshot::kSparkMinutes - 1 - ago] += m.delivered;
        }
    }

    QDateTime groupedAt;
    auto groups = m_errors.refresh(db, EventFilter{}, 1, groupedAt);
    if (!groups) {
        return groups.error();
    }
    if (!groups->groups.isEmpty()) {
        s.topError = groups->groups.first();
    }
    s.topErrorSampled = groups->sampled;
    return s;
}

Session::Options fleetSessionOptions(const QString &applicationName, int connectTimeoutSeconds,
                                     core::Millis statementTimeout) {
    Session::Options options;
    options.applicationName = applicationName;
    options.connectTimeoutSeconds = connectTimeoutSeconds;
    options.statementTimeout = statementTimeout;
    options.keepalivesIdleSeconds = 10;
    options.keepalivesIntervalSeconds = 5;
    options.keepalivesCount = 2;
    options.tcpUserTimeout = core::Millis(20000);
    return options;
}

core::Result<FleetSnapshot> readFleetSnapshotOnce(const core::ConnInfo &info,
                                                  const Session::Options &options) {
    Session session(readOnlySession(info), options);
    if (auto opened = session.open(); !opened) {
        return opened.error();
    }
    FleetProbe probe;
    return probe.read(session.database());
}

} // namespace outbox::store
