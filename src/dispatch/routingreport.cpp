#include "dispatch/routingreport.h"

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
    for (const DestinationStats &d : destinations)
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
        });
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
        all.append(d);
    }
    return all;
}

} // namespace outbox::dispatch
