#include "store/fleethealth.h"

#include "core/enumnames.h"

#include <QLocale>

namespace outbox::store {

namespace {

constexpr core::EnumName<FleetState> kFleetStateNames[] = {
    {FleetState::Ok, "ok"},           {FleetState::Pending, "pending"},
    {FleetState::Warning, "warning"}, {FleetState::Unreachable, "unreachable"},
    {FleetState::Alert, "alert"},
};

QString count(qint64 n) {
    return QLocale().toString(n);
}

} // namespace

QString fleetStateName(FleetState state) {
    return core::nameOf(kFleetStateNames, state, "unknown");
}

int fleetSeverity(FleetState state) {
    return static_cast<int>(state);
}

QString fleetSpan(qint64 s) {
    if (s < 60) {
        return QStringLiteral("%1 s").arg(s);
    }
    if (s < 3600) {
        return QStringLiteral("%1 min").arg(s / 60);
    }
    return QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

QString fleetCountText(const FleetCount &c) {
    if (!c.estimated) {
        return count(c.value);
    }
    return QStringLiteral("~") + count(c.value);
}

FleetHealth assessFleet(const FleetSnapshot &s, const FleetThresholds &t) {
    FleetHealth health;
    QStringList alerts;
    QStringList warnings;
    const qint64 age = s.oldestDueAgeSeconds();
    if (t.oldestDueAgeSeconds > 0 && age >= t.oldestDueAgeSeconds) {
        alerts << QStringLiteral("the oldest due event has waited %1 (alert after %2)")
                      .arg(fleetSpan(age), fleetSpan(t.oldestDueAgeSeconds));
    } else if (t.oldestDueAgeSeconds > 0 && age >= t.oldestDueAgeSeconds / 2) {
        warnings << QStringLiteral("the oldest due event has waited %1").arg(fleetSpan(age));
    }
    if (t.deathsPerMinute > 0 && double(s.diedRecentMinute) > t.deathsPerMinute) {
        alerts << QStringLiteral("%1 events died in one minute (alert above %2)")
                      .arg(count(s.diedRecentMinute), QLocale().toString(t.deathsPerMinute));
    }
    const bool due = s.due.value > 0;
    if (due && s.dispatchersAlive == 0) {
        if (t.unclaimedForSeconds > 0 && age >= t.unclaimedForSeconds) {
            alerts << QStringLiteral("%1 events are due and no dispatcher is alive")
                          .arg(fleetCountText(s.due));
        } else {
            warnings << QStringLiteral("events are due and no dispatcher is alive");
        }
    }
    if (s.dispatchersGone > 0) {
        warnings << (s.dispatchersGone == 1
                         ? QStringLiteral("1 dispatcher stopped sending heartbeats")
                         : QStringLiteral("%1 dispatchers stopped sending heartbeats")
                               .arg(s.dispatchersGone));
    }
    if (s.diedLastHour > 0) {
        warnings << QStringLiteral("%1 events died in the last hour").arg(count(s.diedLastHour));
    }
    if (!alerts.isEmpty()) {
        health.state = FleetState::Alert;
    } else if (!warnings.isEmpty()) {
        health.state = FleetState::Warning;
    }
    health.reasons = alerts + warnings;
    return health;
}

} // namespace outbox::store
