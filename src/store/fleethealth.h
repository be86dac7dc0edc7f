#pragma once

#include "store/fleetstore.h"

#include <QString>
#include <QStringList>

namespace outbox::store {

// The state of one database of the fleet, best to worst in this order
// (fleetSeverity): the fleet lists the worst first.
enum class FleetState { Ok, Pending, Warning, Unreachable, Alert };

// "ok", "pending", "warning", "unreachable", "alert" (logs, JSON, the CLI).
QString fleetStateName(FleetState state);
int fleetSeverity(FleetState state);

// The limits the fleet judges a database by: the console's alert thresholds
// (console::AlertThresholds, kept per database), as plain numbers so that
// `outboxctl fleet status` judges by the same rule as the window.
struct FleetThresholds {
    qint64 oldestDueAgeSeconds = 300; // 0: off
    double deathsPerMinute = 10;      // 0: off
    qint64 unclaimedForSeconds = 120; // 0: off
};

struct FleetHealth {
    FleetState state = FleetState::Ok;
    QStringList reasons; // worst first, in plain words with the numbers
};

// Judges one snapshot on its own (no earlier reading needed, so a single
// `outboxctl fleet status` run judges as the window does):
//   alert    the oldest due event has waited oldestDueAge or more; more than
//            deathsPerMinute events died in the current or the previous
//            minute; events are due, no dispatcher is alive and the oldest
//            has waited unclaimedFor;
//   warning  events are due and no dispatcher is alive; a registered
//            dispatcher stopped heartbeating; events died in the last hour;
//            the oldest due event has waited half of oldestDueAge.
FleetHealth assessFleet(const FleetSnapshot &snapshot, const FleetThresholds &thresholds);

// "45 s", "12 min", "3 h 5 min".
QString fleetSpan(qint64 seconds);
// "1,234" exact, "~1.2M"-style for an estimate, "10,000+" for a capped count.
QString fleetCountText(const FleetCount &count);

} // namespace outbox::store
