#pragma once

#include "dispatch/histogram.h"

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QUuid>

namespace outbox::dispatch {

enum class DispatcherState {
    Stopped,      // not started, or stopped cleanly
    Starting,     // connecting, checking the schema
    Running,      // claiming and delivering
    Reconnecting, // the database connection was lost; buffered acks kept
    Stopping,     // no more claims; in-flight requests finishing within the grace period
    Failed,       // could not start (bad configuration, credentials, schema); see lastError
};

QString stateName(DispatcherState state); // "stopped", "starting", ...

// One destination of a routing dispatcher (core/routes.h) as it is now.
// A route that sends events to a destination: its globs and its place among
// the routes (the first match wins).
struct DestinationRoute {
    int order = 0;
    QString nameSpace;
    QString topic;
};

struct DestinationStats {
    QString name;
    QString kind;    // "http", "kafka"
    QString target;  // the URL without user info and query; never a secret
    QString circuit; // "closed", "open", "half-open"
    QString reason;  // why the circuit is open or half-open; empty when closed
    QDateTime circuitSince;
    int inFlight = 0;              // sent, outcome not in yet
    int queued = 0;                // claimed, waiting for room or the rate limit
    int limit = 0;                 // most events in flight
    double rateLimit = 0;          // events/s; 0 = none
    double deliveredPerSecond = 0; // since the previous snapshot
    qint64 delivered = 0;
    qint64 failed = 0;   // attempts that failed
    qint64 returned = 0; // handed back unattempted (circuit open), attempt not counted
    QString lastError;
    QDateTime lastErrorAt;
    QList<DestinationRoute> routes; // the routes that lead here
};

// A value snapshot of a dispatcher, emitted periodically (and on request).
// Counters are cumulative since start(); `recent*` histograms cover only the
// interval since the previous snapshot (for "latency now" charts).
struct DispatcherStats {
    DispatcherState state = DispatcherState::Stopped;
    QUuid workerId;
    QDateTime startedAt; // UTC; null when never started
    QDateTime at;        // UTC time of this snapshot

    qint64 claimed = 0;    // rows claimed
    qint64 claims = 0;     // claim statements run
    qint64 delivered = 0;  // acks applied
    qint64 retried = 0;    // nacks applied that went back to pending
    qint64 dead = 0;       // nacks applied that made the row dead (max attempts or permanent)
    qint64 fencedOut = 0;  // acks/nacks refused because the lease had moved on
    qint64 released = 0;   // leases handed back: on shutdown, or unattempted (open circuit)
    qint64 swept = 0;      // rows made dead by the dead sweep
    qint64 reconnects = 0; // database reconnections of the dispatcher's connection
    qint64 errors = 0;     // failed statements (connection or SQL errors)
    int inFlight = 0;      // requests running now
    int pendingAcks = 0;   // buffered, not yet written
    int pendingNacks = 0;
    int concurrency = 0;    // the configured limit, for "in flight / limit"
    bool listening = false; // LISTEN subscription alive
    QString lastError;      // latest problem, readable, never a secret
    QDateTime lastErrorAt;
    // Retried outcomes the destination may have kept (a Kafka produce that
    // timed out in flight): outbox_dispatch_maybe_duplicated_total.
    qint64 maybeDuplicated = 0;

    Histogram commitToDelivered; // created_at -> ack written, microseconds
    Histogram httpDuration;      // request duration, microseconds
    Histogram recentCommitToDelivered;
    Histogram recentHttpDuration;
    QList<DestinationStats> destinations; // a routing dispatcher's; empty otherwise
};

} // namespace outbox::dispatch

Q_DECLARE_METATYPE(outbox::dispatch::DispatcherState)
Q_DECLARE_METATYPE(outbox::dispatch::DispatcherStats)
