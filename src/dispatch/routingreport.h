#pragma once

#include "dispatch/dispatcherstats.h"

#include <QList>
#include <QString>

namespace outbox::dispatch {

// A routing dispatcher's destinations as its registry row keeps them
// (outbox_dispatchers.destinations, sql/015): a JSON array of objects with
// name, kind, target, circuit, reason, circuit_since, in_flight, queued,
// limit, rate_limit, delivered_per_s, delivered, failed, returned,
// last_error, last_error_at. Never a secret (the target has no user info or
// query).
QString destinationsJson(const QList<DestinationStats> &destinations);
QList<DestinationStats> destinationsFromJson(const QString &json);

// The destinations' Prometheus series (outbox_dispatch_destination_*, labels
// worker_id and destination); empty without destinations.
QByteArray destinationsPrometheus(const DispatcherStats &stats);

} // namespace outbox::dispatch
