#include "dispatch/metrics.h"

#include "core/uuidtext.h"
#include "dispatch/routingreport.h"

namespace outbox::dispatch {

namespace {

// Seconds, the usual latency ladder from half a millisecond to five minutes.
constexpr double Bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,   0.25,
                             0.5,    1.0,   2.5,    5.0,   10.0, 30.0,  60.0, 120.0, 300.0};

QByteArray number(double value) {
    return QByteArray::number(value, 'g', 12);
}

void counter(QByteArray &out, const char *name, const char *help, const QByteArray &labels,
             qint64 value) {
    out += QByteArray("# HELP ") + name + ' ' + help + '\n';
    out += QByteArray("# TYPE ") + name + " counter\n";
    out += QByteArray(name) + '{' + labels + "} " + QByteArray::number(value) + '\n';
}

void gauge(QByteArray &out, const char *name, const char *help, const QByteArray &labels,
           qint64 value) {
    out += QByteArray("# HELP ") + name + ' ' + help + '\n';
    out += QByteArray("# TYPE ") + name + " gauge\n";
    out += QByteArray(name) + (labels.isEmpty() ? QByteArray() : '{' + labels + '}') + ' ' +
           QByteArray::number(value) + '\n';
}

// A histogram as Prometheus lines (cumulative le buckets in seconds, _sum,
// _count) for values recorded in microseconds.
QByteArray prometheusHistogram(const QByteArray &name, const QByteArray &help,
                               const QByteArray &labels, const Histogram &histogram) {
    QByteArray out;
    out += "# HELP " + name + ' ' + help + '\n';
    out += "# TYPE " + name + " histogram\n";
    const QByteArray prefix = labels.isEmpty() ? QByteArray() : labels + ',';
    for (double bound : Bounds) {
        const auto micros = qint64(bound * 1e6);
        out += name + "_bucket{" + prefix + "le=\"" + number(bound) + "\"} " +
               QByteArray::number(histogram.countAtOrBelow(micros)) + '\n';
    }
    out +=
        name + "_bucket{" + prefix + "le=\"+Inf\"} " + QByteArray::number(histogram.count()) + '\n';
    out += name + "_sum{" + labels + "} " + number(double(histogram.sum()) / 1e6) + '\n';
    out += name + "_count{" + labels + "} " + QByteArray::number(histogram.count()) + '\n';
    return out;
}

} // namespace

QByteArray prometheusText(const DispatcherStats &stats) {
    const QByteArray labels = "worker_id=\"" + core::uuidText(stats.workerId).toLatin1() + '"';
    QByteArray out;
    out.reserve(8192);
    counter(out, "outbox_dispatch_claimed_total", "Rows claimed.", labels, stats.claimed);
    counter(out, "outbox_dispatch_claims_total", "Claim statements run.", labels, stats.claims);
    counter(out, "outbox_dispatch_delivered_total", "Events acknowledged as delivered.", labels,
            stats.delivered);
    counter(out, "outbox_dispatch_retried_total", "Failed attempts scheduled for a retry.", labels,
            stats.retried);
    counter(out, "outbox_dispatch_dead_total",
            "Events dead-lettered by the dispatcher (max attempts or a permanent status).", labels,
            stats.dead);
    counter(out, "outbox_dispatch_fenced_out_total",
            "Acks and nacks refused because the lease had moved to another worker.", labels,
            stats.fencedOut);
    counter(out, "outbox_dispatch_released_total", "Leases handed back on shutdown.", labels,
            stats.released);
    counter(out, "outbox_dispatch_swept_total", "Rows made dead by the dead sweep.", labels,
            stats.swept);
    counter(out, "outbox_dispatch_reconnects_total", "Database reconnections.", labels,
            stats.reconnects);
    counter(out, "outbox_dispatch_errors_total", "Failed database statements.", labels,
            stats.errors);
    counter(out, "outbox_dispatch_maybe_duplicated_total",
            "Retried deliveries the destination may have kept (a Kafka produce that timed out "
            "in flight): consumers deduplicate on the id header.",
            labels, stats.maybeDuplicated);
    gauge(out, "outbox_dispatch_in_flight", "HTTP requests in flight.", labels, stats.inFlight);
    gauge(out, "outbox_dispatch_concurrency", "Configured limit of requests in flight.", labels,
          stats.concurrency);
    gauge(out, "outbox_dispatch_pending_acks", "Acks and nacks buffered, not yet written.", labels,
          stats.pendingAcks + stats.pendingNacks);
    gauge(out, "outbox_dispatch_listening", "1 while the LISTEN subscription is alive.", labels,
          stats.listening ? 1 : 0);
    gauge(out, "outbox_dispatch_up", "1 while the dispatcher runs and its database is reachable.",
          labels, stats.state == DispatcherState::Running ? 1 : 0);

    out += "# HELP outbox_dispatch_state Current state (1 for the active one).\n"
           "# TYPE outbox_dispatch_state gauge\n";
    for (auto state :
         {DispatcherState::Stopped, DispatcherState::Starting, DispatcherState::Running,
          DispatcherState::Reconnecting, DispatcherState::Stopping, DispatcherState::Failed}) {
        out += "outbox_dispatch_state{" + labels + ",state=\"" + stateName(state).toLatin1() +
               "\"} " + (state == stats.state ? "1" : "0") + '\n';
    }

    out += prometheusHistogram("outbox_dispatch_commit_to_delivered_seconds",
                               "Time from the event's commit (created_at) to its ack.", labels,
                               stats.commitToDelivered);
    out += prometheusHistogram("outbox_dispatch_http_duration_seconds",
                               "Duration of delivery requests.", labels, stats.httpDuration);
    out += destinationsPrometheus(stats); // a routing dispatcher's
    return out;
}

QByteArray queueGaugesText(const store::QueueGauges &g, const QDateTime &now) {
    QByteArray out;
    out += "# HELP outbox_queue_events Events in the outbox table per status (delivered is "
           "estimated beyond 100000, see outbox_queue_delivered_estimated).\n"
           "# TYPE outbox_queue_events gauge\n";
    const std::pair<const char *, qint64> statuses[] = {{"pending", g.pending},
                                                        {"processing", g.processing},
                                                        {"delivered", g.delivered},
                                                        {"dead", g.dead}};
    for (const auto &[status, count] : statuses)
        out += QByteArray("outbox_queue_events{status=\"") + status + "\"} " +
               QByteArray::number(count) + '\n';
    gauge(out, "outbox_queue_delivered_estimated",
          "1 when outbox_queue_events{status=\"delivered\"} is an estimate.", {},
          g.deliveredEstimated ? 1 : 0);
    gauge(out, "outbox_queue_due_events", "Pending events due now and not paused.", {}, g.dueNow);
    out += "# HELP outbox_queue_oldest_due_age_seconds How long the oldest due, not paused event "
           "has been waiting since it became due (0 when none is due).\n"
           "# TYPE outbox_queue_oldest_due_age_seconds gauge\n"
           "outbox_queue_oldest_due_age_seconds " +
           number(g.oldestDueAgeSeconds) + '\n';
    gauge(out, "outbox_queue_paused_namespaces", "Namespaces with a pause (whole or some topics).",
          {}, g.pausedNamespaces);
    gauge(out, "outbox_queue_paused_scopes", "Pauses in force (namespaces and topics).", {},
          g.pausedScopes);
    gauge(out, "outbox_dispatchers_alive",
          "Dispatchers registered with a heartbeat within three intervals.", {},
          g.dispatchersAlive);
    out += "# HELP outbox_queue_gauges_age_seconds Age of the outbox_queue_* values.\n"
           "# TYPE outbox_queue_gauges_age_seconds gauge\n"
           "outbox_queue_gauges_age_seconds " +
           number(double(g.readAt.msecsTo(now)) / 1000.0) + '\n';
    return out;
}

} // namespace outbox::dispatch
