#include "devtools/devrunnerbatch.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace outbox::devtools {

core::Result<QList<QByteArray>> batchEventIds(const QByteArray &body) {
    const auto refuse = [](const QString &what) {
        return core::Error{core::ErrorKind::Invalid,
                           QStringLiteral("not a batch: ") % what %
                               QStringLiteral(" (expected {\"events\": [{\"id\": ...}, ...]})")};
    };
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return refuse(QStringLiteral("invalid JSON: ") % parseError.errorString());
    const QJsonValue events = document.object().value(QLatin1String("events"));
    if (!events.isArray())
        return refuse(QStringLiteral("no \"events\" array"));
    QList<QByteArray> ids;
    const QJsonArray list = events.toArray();
    ids.reserve(list.size());
    for (const QJsonValue &event : list) {
        const QString id = event.toObject().value(QLatin1String("id")).toString();
        if (id.isEmpty())
            return refuse(QStringLiteral("an event without an \"id\""));
        ids.append(id.toLatin1());
    }
    return ids;
}

QByteArray batchAnswer(const QList<QByteArray> &failed, bool permanent, qint64 retryAfterSeconds) {
    QJsonArray list;
    for (const QByteArray &id : failed) {
        QJsonObject item{{QStringLiteral("id"), QString::fromLatin1(id)},
                         {QStringLiteral("error"), QStringLiteral("simulated failure")},
                         {QStringLiteral("permanent"), permanent}};
        if (retryAfterSeconds >= 0)
            item.insert(QStringLiteral("retry_after"), retryAfterSeconds);
        list.append(item);
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("failed"), list}})
               .toJson(QJsonDocument::Compact) +
           '\n';
}

} // namespace outbox::devtools
