#include "dispatch/routingreport.h"

#include "core/routes.h"
#include "core/uuidtext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace outbox::dispatch {

namespace {

QString isoOrEmpty(const QDateTime &time) {
    return time.isValid() ? time.toUTC().toString(Qt::ISODateWithMs) : QString();
}

} // namespace

QString destinationsJson(const QList<DestinationStats> &destinations) {
    QJsonArray all;
    for (const DestinationStats &d : destinations) {
        QJsonArray routes;
        for (const DestinationRoute &route : d.routes)
            routes.append(QJsonObject{{QStringLiteral("n"), route.order},
                                      {QStringLiteral("namespace"), route.nameSpace},
                                      {QStringLiteral("topic"), route.topic}});
        all.append(QJsonObject{
            {QStringLiteral("name"), d.name},
            {QStringLiteral("kind"), d.kind},
            {QStringLiteral("target"), d.target},
            {QStringLiteral("circuit"), d.circuit},
            {QStringLiteral("reason"), d.reason},
            {QStringLiteral("circuit_since"), isoOrEmpty(d.circuitSince)},
            {QStringLiteral("in_flight"), d.inFlight},
            {QStringLiteral("queued"), d.queued},
            {QStringLiteral("limit"), d.limit},
            {QStringLiteral("rate_limit"), d.rateLimit},
            {QStringLiteral("delivered_per_s"), d.deliveredPerSecond},
            {QStringLiteral("delivered"), d.delivered},
            {QStringLiteral("failed"), d.failed},
            {QStringLiteral("returned"), d.returned},
            {QStringLiteral("last_error"), d.lastError},
            {QStringLiteral("last_error_at"), isoOrEmpty(d.lastErrorAt)},
            {QStringLiteral("routes"), routes},
        });
    }
    return QString::fromUtf8(QJsonDocument(all).toJson(QJsonDocument::Compact));
}

QList<DestinationStats> destinationsFromJson(const QString &json) {
    QList<DestinationStats> all;
    const QJsonArray array = QJsonDocument::fromJson(json.toUtf8()).array();
    for (const QJsonValue &value : array) {
        const QJsonObject o = value.toObject();
        DestinationStats d;
        d.name = o.value(QStringLiteral("name")).toString();
        d.kind = o.value(QStringLiteral("kind")).toString();
        d.target = o.value(QStringLiteral("target")).toString();
        d.circuit = o.value(QStringLiteral("circuit")).toString();
        d.reason = o.value(QStringLiteral("reason")).toString();
        d.circuitSince = QDateTime::fromString(o.value(QStringLiteral("circuit_since")).toString(),
                                               Qt::ISODateWithMs);
        d.inFlight = o.value(QStringLiteral("in_flight")).toInt();
        d.queued = o.value(QStringLiteral("queued")).toInt();
        d.limit = o.value(QStringLiteral("limit")).toInt();
        d.rateLimit = o.value(QStringLiteral("rate_limit")).toDouble();
        d.deliveredPerSecond = o.value(QStringLiteral("delivered_per_s")).toDouble();
        d.delivered = o.value(QStringLiteral("delivered")).toInteger();
        d.failed = o.value(QStringLiteral("failed")).toInteger();
        d.returned = o.value(QStringLiteral("returned")).toInteger();
        d.lastError = o.value(QStringLiteral("last_error")).toString();
        d.lastErrorAt = QDateTime::fromString(o.value(QStringLiteral("last_error_at")).toString(),
                                              Qt::ISODateWithMs);
        for (const QJsonValue &route : o.value(QStringLiteral("routes")).toArray()) {
            const QJsonObject r = route.toObject();
            d.routes.append({r.value(QStringLiteral("n")).toInt(),
                             r.value(QStringLiteral("namespace")).toString(),
                             r.value(QStringLiteral("topic")).toString()});
        }
        all.append(d);
    }
    return all;
}

std::optional<DestinationStats> destinationFor(const QList<DestinationStats> &destinations,
                                               const QString &nameSpace, const QString &topic) {
    std::optional<DestinationStats> first;
    int firstOrder = 0;
    for (const DestinationStats &d : destinations) {
        for (const DestinationRoute &route : d.routes) {
            if ((!first || route.order < firstOrder) &&
                core::globMatches(route.nameSpace, nameSpace) &&
                core::globMatches(route.topic, topic)) {
                first = d;
                firstOrder = route.order;
            }
        }
    }
    return first;
}

EventRoute routeOfEvent(const QList<store::DispatcherEntry> &dispatchers,
                        const QHash<QUuid, QString> &reports,
                        const QList<store::DestinationPause> &pauses, const QString &nameSpace,
                        const QString &topic) {
    EventRoute route;
    for (const store::DispatcherEntry &entry : dispatchers) {
        if (!entry.alive || !entry.serves(nameSpace))
            continue;
        const QString json = reports.value(entry.workerId);
        if (json.isEmpty())
            return {}; // a dispatcher that takes every event it serves
        route.routed = true;
        if (!route.destination)
            route.destination = destinationFor(destinationsFromJson(json), nameSpace, topic);
    }
    if (!route.destination)
        return route;
    for (const store::DestinationPause &pause : pauses) {
        if (pause.destination == route.destination->name)
            route.pause = pause;
    }
    route.circuitOpen = route.destination->circuit == QLatin1String("open") ||
                        route.destination->circuit == QLatin1String("half-open");
    return route;
}

QByteArray destinationsPrometheus(const DispatcherStats &stats) {
    if (stats.destinations.isEmpty())
        return {};
    const QByteArray worker = "worker_id=\"" + core::uuidText(stats.workerId).toLatin1() + '"';
    // Destination names are letters, digits, '.', '_' and '-' (core/routes.h):
    // nothing to escape.
    const auto labels = [&worker](const DestinationStats &d) {
        QByteArray label = worker;
        label += ",destination=\"";
        label += d.name.toLatin1();
        label += '"';
        return label;
    };
    QByteArray out;
    const auto series = [&](const char *name, const char *type, const char *help,
                            const auto &value) {
        out += QByteArray("# HELP ") + name + ' ' + help + '\n';
        out += QByteArray("# TYPE ") + name + ' ' + type + '\n';
        for (const DestinationStats &d : stats.destinations) {
            out += name;
            out += '{';
            out += labels(d);
            out += "} ";
            out += value(d);
            out += '\n';
        }
    };
    const auto count = [](qint64 n) { return QByteArray::number(n); };
    series("outbox_dispatch_destination_delivered_total", "counter", "Events a destination took.",
           [&](const DestinationStats &d) { return count(d.delivered); });
    series("outbox_dispatch_destination_failed_total", "counter",
           "Failed attempts at a destination.",
           [&](const DestinationStats &d) { return count(d.failed); });
    series("outbox_dispatch_destination_returned_total", "counter",
           "Events handed back unattempted while the destination's circuit was open.",
           [&](const DestinationStats &d) { return count(d.returned); });
    series("outbox_dispatch_destination_in_flight", "gauge", "Events sent, outcome not in yet.",
           [&](const DestinationStats &d) { return count(d.inFlight); });
    series("outbox_dispatch_destination_queued", "gauge",
           "Events claimed and waiting for room or the rate limit.",
           [&](const DestinationStats &d) { return count(d.queued); });
    series("outbox_dispatch_destination_delivered_per_second", "gauge",
           "Delivery rate over the last stats interval.", [](const DestinationStats &d) {
               return QByteArray::number(d.deliveredPerSecond, 'g', 6);
           });
    out += "# HELP outbox_dispatch_destination_circuit A destination's circuit breaker (1 for "
           "its state).\n# TYPE outbox_dispatch_destination_circuit gauge\n";
    for (const DestinationStats &d : stats.destinations) {
        for (const char *state : {"closed", "open", "half-open"}) {
            out += "outbox_dispatch_destination_circuit{";
            out += labels(d);
            out += ",state=\"";
            out += state;
            out += "\"} ";
            out += d.circuit == QLatin1String(state) ? "1\n" : "0\n";
        }
    }
    return out;
}

} // namespace outbox::dispatch
