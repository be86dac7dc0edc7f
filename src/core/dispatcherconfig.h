#pragma once

#include "core/duration.h"
#include "core/logline.h"
#include "core/result.h"

#include <QList>
#include <QString>
#include <QStringView>
#include <QUrl>
#include <QUuid>

#include <memory>
#include <optional>

namespace outbox::core {

class Routes;

// How events travel to the runner: one request per event, or many events in
// one request (the batch format of the delivery contract, docs/RUNNER-CONTRACT.md).
enum class Delivery {
    PerEvent,
    Batch,
};

QString deliveryName(Delivery delivery); // "per-event", "batch"
std::optional<Delivery> deliveryNamed(QStringView name);
// Delivery order. None: oldest due first, many events of one aggregate at
// once. Aggregate: events with the same (aggregate_type, aggregate_id) one at
// a time in (created_at, id) order; an event waits while an earlier one of
// its aggregate is pending, processing or dead. Events without both fields
// set are not ordered.
enum class Ordering { None, Aggregate };
QString orderingName(Ordering ordering);                 // "none", "aggregate"
std::optional<Ordering> orderingNamed(QStringView name); // case-insensitive

// Everything a dispatcher needs to run. Secrets are held here only in memory
// and never rendered by describe().
struct DispatcherConfig {
    QUrl runnerUrl;
    QStringList secrets;  // Standard Webhooks secrets (rotation: several)
    QString bearerToken;  // optional Authorization: Bearer
    QString caFile;       // optional extra CA bundle for https
    int batchSize = 500;  // most rows per claim statement (and ack flush)
    int concurrency = 64; // HTTP requests in flight (per-event: events; batch: batches)
    Millis lease{30000};
    Millis pollInterval{1000};
    int maxAttempts = 10;
    Millis baseDelay{1000};
    Millis maxDelay{300000};
    Millis requestTimeout{10000};
    Millis shutdownGrace{10000};
    QUuid workerId;                    // null = generate at start
    QString nameSpace;                 // empty = all namespaces
    QList<int> permanentStatuses{410}; // HTTP statuses that dead-letter at once
    Delivery delivery = Delivery::PerEvent;
    int batchMaxEvents = 100;           // batch delivery: most events per request
    qint64 batchMaxBytes = 1024 * 1024; // batch delivery: most body bytes per request
    // Most bytes of a runner's reply body read; a longer reply is aborted
    // (its first bytes go into the error message), so a runner cannot make
    // the dispatcher buffer an unbounded body per request.
    qint64 maxResponseBytes = DefaultMaxResponseBytes;

    static constexpr qint64 DefaultMaxResponseBytes = 64 * 1024;
    static constexpr qint64 MaxResponseBytesLimit = 64 * 1024 * 1024;
    Ordering ordering = Ordering::None;
    // Several destinations chosen per event (core/routes.h, set by
    // applyRoutes()); null: every event goes to runnerUrl.
    std::shared_ptr<const Routes> routes;
    QString routesFile; // where the routes were read, for logs

    // Most events in flight (the claim window): `concurrency` requests of one
    // event, or with batch delivery of up to batch_max_events events each.
    int eventsInFlightLimit() const;

    // Refuses: non-http(s) URL, sizes < 1, poll_interval > lease/3,
    // request_timeout >= lease, base > max, ... with a message naming the
    // option (as the command-line flag, e.g. --poll-interval) and the fix.
    Result<void> validate() const;
    // What is allowed but unsafe, one sentence each naming the fix: unsigned
    // deliveries (no secret, unless `unsignedIntended`), a bearer token or
    // URL credentials sent over plain http to another host.
    QStringList warnings(bool unsignedIntended = false) const;
    // Every setting except secrets/token, as log fields (key=value, values
    // quoted where needed; the runner URL without user info and query,
    // core::redactedUrl); describe() is the same as one line of text.
    LogLine logFields() const;
    QString describe() const;
};

} // namespace outbox::core
