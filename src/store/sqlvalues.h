#pragma once

#include <QDateTime>
#include <QLatin1String>
#include <QMetaType>
#include <QString>
#include <QVariant>

#include <optional>

namespace outbox::store::sqlvalues {

// Timestamps travel as whole milliseconds since the epoch: independent of
// the session's TimeZone and DateStyle and of how the driver parses text.
inline QString msOf(const QString &column) {
    return QLatin1String("floor(extract(epoch FROM ") + column + QLatin1String(") * 1000)::bigint");
}

inline QDateTime timeFrom(const QVariant &value) {
    if (value.isNull())
        return {};
    return QDateTime::fromMSecsSinceEpoch(value.toLongLong(), Qt::UTC);
}

// Empty text is SQL NULL.
inline QVariant nullableText(const QString &text) {
    return text.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(text);
}

inline QVariant nullableText(const std::optional<QString> &text) {
    return text ? QVariant(*text) : QVariant(QMetaType::fromType<QString>());
}

inline std::optional<QString> optionalText(const QVariant &value) {
    if (value.isNull())
        return std::nullopt;
    return value.toString();
}

} // namespace outbox::store::sqlvalues
