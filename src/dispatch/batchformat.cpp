#include "dispatch/batchformat.h"

#include "core/retrypolicy.h"
#include "core/uuidtext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace outbox::dispatch {

namespace {

constexpr QByteArrayView kOpen = "{\"events\":[";
constexpr QByteArrayView kClose = "]}";
// A runner's retry_after beyond this is taken as this (the retry policy caps
// it at --max-delay anyway); keeps the conversion to milliseconds in range.
constexpr double kLongestRetryAfterSeconds = 366.0 * 24 * 3600;

// A JSON string: UTF-8 as is, quotes, backslashes and control characters
// escaped.
void appendString(QByteArray &out, const QString &text) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    const QByteArray utf8 = text.toUtf8();
    for (const char c : utf8) {
        const auto byte = uchar(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20) {
            out += "\\u00";
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        } else {
            out += c;
        }
    }
    out += '"';
}

void appendOptional(QByteArray &out, const std::optional<QString> &text) {
    if (text)
        appendString(out, *text);
    else
        out += "null";
}

// "2026-01-02T03:04:05.678Z", quoted; by hand because QDateTime's own
// conversion and formatting cost several microseconds an event.
void appendTimestamp(QByteArray &out, const QDateTime &time) {
    using namespace std::chrono;
    const sys_time<milliseconds> at{milliseconds(time.toMSecsSinceEpoch())};
    const sys_days day = floor<days>(at);
    const year_month_day date{day};
    const hh_mm_ss<milliseconds> clock{at - day};
    char text[40];
    const int length = std::snprintf(text, sizeof text, "\"%04d-%02u-%02uT%02d:%02d:%02d.%03dZ\"",
                                     int(date.year()), unsigned(date.month()), unsigned(date.day()),
                                     int(clock.hours().count()), int(clock.minutes().count()),
                                     int(clock.seconds().count()), int(clock.subseconds().count()));
    out.append(text, length);
}

core::Result<QList<BatchFailure>> malformed(const QString &what) {
    return core::Error{core::ErrorKind::Invalid,
                       QStringLiteral("the runner's batch answer ") % what %
                           QStringLiteral(" (expected {\"failed\": [{\"id\": \"...\"}]})")};
}

std::optional<core::Millis> retryAfterOf(const QJsonValue &value) {
    if (value.isDouble()) {
        const double seconds = value.toDouble();
        if (!std::isfinite(seconds) || seconds < 0)
            return std::nullopt;
        return core::Millis(std::llround(std::min(seconds, kLongestRetryAfterSeconds) * 1000.0));
    }
    if (value.isString())
        return core::parseRetryAfter(value.toString().toUtf8(), QDateTime::currentDateTimeUtc());
    return std::nullopt;
}

} // namespace

QByteArray batchElement(const store::ClaimedEvent &event) {
    QByteArray out;
    out.reserve(300 + event.payload.size());
    const QByteArray id = event.id.toByteArray(QUuid::WithoutBraces); // as core::uuidText
    out += "{\"id\":\"";
    out += id;
    out += "\",\"namespace\":";
    appendString(out, event.nameSpace);
    out += ",\"topic\":";
    appendString(out, event.topic);
    out += ",\"tenant_id\":";
    appendOptional(out,
                   event.tenantId ? std::optional(core::uuidText(*event.tenantId)) : std::nullopt);
    out += ",\"aggregate_type\":";
    appendOptional(out, event.aggregateType);
    out += ",\"aggregate_id\":";
    appendOptional(out, event.aggregateId);
    out += ",\"idempotency_key\":";
    if (event.dedupeKey)
        appendString(out, *event.dedupeKey);
    else
        out += '"' + id + '"';
    out += ",\"attempt\":";
    out += QByteArray::number(event.attempts);
    out += ",\"created_at\":";
    if (event.createdAt.isValid())
        appendTimestamp(out, event.createdAt);
    else
        out += "null";
    out += ",\"traceparent\":";
    appendOptional(out, event.traceparent);
    out += ",\"tracestate\":";
    appendOptional(out, event.tracestate);
    out += ",\"payload\":";
    out += event.payload.isEmpty() ? QByteArrayView("null") : QByteArrayView(event.payload);
    out += '}';
    return out;
}

QList<Batch> packBatches(const QList<store::ClaimedEvent> &events, int maxEvents, qint64 maxBytes) {
    QList<Batch> batches;
    Batch current;
    const auto close = [&] {
        if (current.events.isEmpty())
            return;
        current.body += kClose;
        batches.append(std::move(current));
        current = Batch();
    };
    for (const store::ClaimedEvent &event : events) {
        const QByteArray element = batchElement(event);
        if (!current.events.isEmpty() &&
            (current.events.size() >= maxEvents ||
             current.body.size() + 1 + element.size() + kClose.size() > maxBytes))
            close();
        if (current.events.isEmpty())
            current.body = kOpen.toByteArray();
        else
            current.body += ',';
        current.body += element;
        current.events.append(event);
    }
    close();
    return batches;
}

core::Result<QList<BatchFailure>> parseBatchReply(const QByteArray &body) {
    const QByteArray trimmed = body.trimmed();
    if (!trimmed.startsWith('{'))
        return QList<BatchFailure>(); // empty, or plain text such as "ok"
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(trimmed, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return malformed(QStringLiteral("is not valid JSON: ") % parseError.errorString() %
                         QStringLiteral(" at byte ") % QString::number(parseError.offset));
    const QJsonValue failed = document.object().value(QLatin1String("failed"));
    if (failed.isUndefined() || failed.isNull())
        return QList<BatchFailure>();
    if (!failed.isArray())
        return malformed(QStringLiteral("has a \"failed\" that is not an array"));
    QList<BatchFailure> failures;
    const QJsonArray list = failed.toArray();
    failures.reserve(list.size());
    for (const QJsonValue &entry : list) {
        const QJsonObject item = entry.toObject();
        BatchFailure failure;
        failure.id = QUuid::fromString(item.value(QLatin1String("id")).toString());
        if (failure.id.isNull())
            return malformed(QStringLiteral("lists a failure without an event id"));
        failure.error = item.value(QLatin1String("error")).toString();
        failure.retryAfter = retryAfterOf(item.value(QLatin1String("retry_after")));
        failure.permanent = item.value(QLatin1String("permanent")).toBool(false);
        failures.append(std::move(failure));
    }
    return failures;
}

} // namespace outbox::dispatch
