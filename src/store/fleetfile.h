#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QList>
#include <QString>

namespace outbox::store {

// One database of a fleet: what an on-call engineer watches beside the
// others. No password: libpq finds it in ~/.pgpass, a service file or the
// environment, as for every other connection of the console.
struct FleetEntry {
    QString name;          // unique in the fleet
    core::ConnInfo target; // from `conninfo` or `service`
    QString group;         // empty: no group
    QString owner;         // free text, e.g. a team
    friend bool operator==(const FleetEntry &, const FleetEntry &) = default;
};

// A fleet file, shared by a team (docs/OPERATING.md, "The fleet"):
//
//   # comments start with '#' or ';'
//   [orders]                       one section per database, named
//   conninfo = host=db1 dbname=orders user=viewer   (or a postgresql:// URI)
//   group = payments               optional
//   owner = team-payments          optional
//
//   [billing]
//   service = billing              a name of pg_service.conf instead of conninfo
//
// Errors name the file's line, the problem and the fix. A password in it is
// refused: the file is meant to be shared.
core::Result<QList<FleetEntry>> parseFleet(const QString &text, const QString &fileName);
core::Result<QList<FleetEntry>> readFleetFile(const QString &path);

} // namespace outbox::store
