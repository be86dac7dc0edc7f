#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "store/fleetfile.h"

#include <QList>

namespace outbox::console {

// The demo's fleet: beside the demo's own database, two more in its cluster
// with troubles of their own, so that a newcomer sees the fleet view at
// work:
//   payments  a dead backlog (a few hundred dead events, error shapes of
//             their own) whose deaths the history shows, and a dispatcher
//             that stopped sending heartbeats;
//   shipping  a due backlog and no dispatcher: its oldest due event ages
//             until the fleet raises an alert.
// Creates and fills the two databases (again: they are emptied first) on
// the server of `demo`; blocking, for a worker thread. Returns the three
// databases as fleet entries, the demo's first.
core::Result<QList<store::FleetEntry>> prepareDemoFleet(const core::ConnInfo &demo);

} // namespace outbox::console
