#pragma once

#include "core/dispatcherconfig.h"
#include "core/result.h"
#include "core/routes.h"
#include "dispatch/publisher.h"

#include <QObject>

#include <functional>
#include <memory>

namespace outbox::dispatch {

// What a kind of destination (core::Destination::kind) brings: a check of a
// destination's settings before anything starts (each problem with its line,
// for `outboxctl routes check` and the dispatcher's start), and the publisher
// that delivers to it, configured. `base` is the dispatcher's configuration.
struct DestinationKind {
    std::function<QList<core::RoutesError>(const core::Destination &,
                                           const core::DispatcherConfig &base)>
        check;
    std::function<core::Result<std::unique_ptr<Publisher>>(
        const core::Destination &, const core::DispatcherConfig &base, QObject *parent)>
        make;
    // Where it delivers, for logs, the registry and the console; never a
    // secret (for http the URL without user info and query).
    std::function<QString(const core::Destination &)> target;
};

// The table of kinds: http, and kafka (refused until this build has a Kafka
// publisher). Registering a kind that is there replaces it.
void registerDestinationKind(const QString &kind, DestinationKind entry);
const DestinationKind *destinationKind(const QString &kind);

// Every problem of every destination of `routes`: its kind's check, or that
// the kind is unknown to this build.
QList<core::RoutesError> checkDestinations(const core::Routes &routes,
                                           const core::DispatcherConfig &base);

} // namespace outbox::dispatch
