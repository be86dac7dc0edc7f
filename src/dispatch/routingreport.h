#pragma once

#include "dispatch/dispatcherstats.h"
#include "store/destinationstore.h"
#include "store/registrystore.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::dispatch {

// A routing dispatcher's destinations as its registry row keeps them
// (outbox_dispatchers.destinations, sql/015): a JSON array of objects with
// name, kind, target, circuit, reason, circuit_since, in_flight, queued,
// limit, rate_limit, delivered_per_s, delivered, failed, returned,
// last_error, last_error_at, and routes (n: the route's place, namespace and
// topic globs). Never a secret (the target has no user info or
// query).
QString destinationsJson(const QList<DestinationStats> &destinations);
QList<DestinationStats> destinationsFromJson(const QString &json);

// The destination a dispatcher with these destinations sends an event of
// this namespace and topic to (its first matching route), or none: such a
// dispatcher does not claim it.
std::optional<DestinationStats> destinationFor(const QList<DestinationStats> &destinations,
                                               const QString &nameSpace, const QString &topic);

// Where the live dispatchers serving an event's namespace send it, from the
// registry (`reports`: store::DestinationStore::reports()): `routed` when
// every one of them routes by namespace and topic, and then the destination
// of the first that has a route for it, or none (no live dispatcher claims
// it). Not routed: some dispatcher takes every event it serves.
// With the destination, what holds it up: its pause (`pauses`:
// store::DestinationStore::pauses()) and whether its circuit is not closed.
struct EventRoute {
    bool routed = false;
    std::optional<DestinationStats> destination;
    std::optional<store::DestinationPause> pause;
    bool circuitOpen = false; // open or half-open
};
EventRoute routeOfEvent(const QList<store::DispatcherEntry> &dispatchers,
                        const QHash<QUuid, QString> &reports,
                        const QList<store::DestinationPause> &pauses, const QString &nameSpace,
                        const QString &topic);

// The destinations' Prometheus series (outbox_dispatch_destination_*, labels
// worker_id and destination); empty without destinations.
QByteArray destinationsPrometheus(const DispatcherStats &stats);

} // namespace outbox::dispatch
