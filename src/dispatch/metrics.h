#pragma once

#include "dispatch/dispatcherstats.h"

#include <QByteArray>

namespace outbox::dispatch {

// Prometheus text exposition (format 0.0.4) of a dispatcher snapshot:
// outbox_dispatch_{claimed,delivered,retried,dead,fenced_out,released,swept,
// reconnects,errors,claims}_total counters, outbox_dispatch_in_flight,
// outbox_dispatch_concurrency, outbox_dispatch_pending_acks,
// outbox_dispatch_listening, outbox_dispatch_up and outbox_dispatch_state
// gauges, and the histograms outbox_dispatch_commit_to_delivered_seconds and
// outbox_dispatch_http_duration_seconds. Every series carries
// worker_id="<uuid>".
QByteArray prometheusText(const DispatcherStats &stats);

} // namespace outbox::dispatch
