#include "devtools/devrunnerbatch.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace outbox::devtools {

// Walks the JSON text once (no document is built: in the benchmark the
// runner shares the CPUs with the dispatcher), tracking strings and nesting,
// and takes the string value of the "id" key of each object directly inside
// the top-level "events" array. Escapes inside strings are skipped, not
// decoded (ids are plain UUIDs); anything unbalanced is refused.
core::Result<QList<QByteArray>> batchEventIds(const QByteArray &body) {
    const auto refuse = [](const char *what) {
        return core::Error{core::ErrorKind::Invalid,
                           QStringLiteral("not a batch: ") % QLatin1String(what) %
                               QStringLiteral(" (expected {\"events\": [{\"id\": ...}, ...]})")};
    };
    QList<QByteArray> ids;
    QByteArray open;         // the containers entered so far, '{' or '['
    qsizetype eventsAt = -1; // depth of the "events" array while inside it
    bool eventsSeen = false;
    bool idSeen = true; // the current element has its id
    QByteArrayView lastString, key;
    bool stringPending = false, keyPending = false;
    for (qsizetype i = 0; i < body.size(); ++i) {
        const char c = body.at(i);
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '"') {
            qsizetype end = i + 1;
            while (end < body.size() && body.at(end) != '"')
                end += body.at(end) == '\\' ? 2 : 1;
            if (end >= body.size())
                return refuse("an unterminated string");
            const QByteArrayView text(body.constData() + i + 1, end - i - 1);
            if (keyPending && key == "id" && eventsAt >= 0 && open.size() == eventsAt + 1) {
                ids.append(text.toByteArray());
                idSeen = true;
            }
            lastString = text;
            stringPending = !keyPending;
            keyPending = false;
            i = end;
            continue;
        }
        if (c == ':') {
            if (!stringPending)
                return refuse("a value without a key");
            key = lastString;
            keyPending = true;
            stringPending = false;
            continue;
        }
        const bool eventsStart = c == '[' && keyPending && key == "events" && open == "{";
        stringPending = keyPending = false;
        if (c == '{' || c == '[') {
            if (c == '{' && eventsAt >= 0 && open.size() == eventsAt) {
                if (!idSeen)
                    return refuse("an event without an \"id\"");
                idSeen = false;
            }
            open += c;
            if (eventsStart) {
                eventsAt = open.size();
                eventsSeen = true;
            }
        } else if (c == '}' || c == ']') {
            if (open.isEmpty() || open.back() != (c == '}' ? '{' : '['))
                return refuse("unbalanced brackets");
            if (open.size() == eventsAt)
                eventsAt = -1;
            open.chop(1);
        }
    }
    if (!open.isEmpty())
        return refuse("unbalanced brackets");
    if (!eventsSeen)
        return refuse("no \"events\" array");
    if (!idSeen)
        return refuse("an event without an \"id\"");
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
