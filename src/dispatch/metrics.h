#pragma once

#include "dispatch/dispatcherstats.h"
#include "store/queuegauges.h"

#include <QByteArray>

namespace outbox::dispatch {

// Prometheus text exposition (format 0.0.4) of a dispatcher snapshot:
// outbox_dispatch_{claimed,delivered,retried,dead,fenced_out,released,swept,
// reconnects,errors,claims,maybe_duplicated}_total counters, outbox_dispatch_in_flight,
// outbox_dispatch_concurrency, outbox_dispatch_pending_acks,
// outbox_dispatch_listening, outbox_dispatch_up and outbox_dispatch_state
// gauges, and the histograms outbox_dispatch_commit_to_delivered_seconds and
// outbox_dispatch_http_duration_seconds. Every series carries
// worker_id="<uuid>".
QByteArray prometheusText(const DispatcherStats &stats);

// The queue as the database holds it (no worker_id: every dispatcher of a
// database reports the same values, aggregate them with max()):
// outbox_queue_events{status="pending"|"processing"|"delivered"|"dead"},
// outbox_queue_delivered_estimated, outbox_queue_due_events,
// outbox_queue_oldest_due_age_seconds, outbox_queue_paused_namespaces,
// outbox_queue_paused_scopes, outbox_dispatchers_alive and
// outbox_queue_gauges_age_seconds (how old these values are).
QByteArray queueGaugesText(const store::QueueGauges &gauges, const QDateTime &now);

} // namespace outbox::dispatch
