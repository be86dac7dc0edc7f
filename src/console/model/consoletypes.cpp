#include "console/model/consoletypes.h"

#include "core/enumnames.h"

#include <QLocale>

namespace outbox::console {

Q_LOGGING_CATEGORY(lcConsole, "outbox.console")

constexpr core::EnumName<ConnectionState> kConnectionStateNames[] = {
    {ConnectionState::Disconnected, "disconnected"},
    {ConnectionState::Connecting, "connecting"},
    {ConnectionState::Connected, "connected"},
    {ConnectionState::Reconnecting, "reconnecting"}};

QString connectionStateName(ConnectionState state) {
    return core::nameOf(kConnectionStateNames, state, "unknown");
}

constexpr core::EnumName<RequestKind> kRequestKindNames[] = {
    {RequestKind::Counts, "counts"},         {RequestKind::Page, "page"},
    {RequestKind::Detail, "detail"},         {RequestKind::ErrorGroups, "error groups"},
    {RequestKind::Privileges, "privileges"}, {RequestKind::ServerInfo, "server info"},
    {RequestKind::Bulk, "bulk action"},      {RequestKind::History, "history"}};

QString requestKindName(RequestKind kind) {
    return core::nameOf(kRequestKindNames, kind, "request");
}

namespace {

// Two units at most: "45s", "3m 12s", "2h 5m", "4d 3h".
QString twoUnits(qint64 big, char bigUnit, qint64 small, char smallUnit) {
    QString text = QString::number(big) + QLatin1Char(bigUnit);
    if (small != 0) {
        text += QLatin1Char(' ') + QString::number(small) + QLatin1Char(smallUnit);
    }
    return text;
}

QString coarseDuration(qint64 ms) {
    // Rounded, so a value read a few milliseconds after the snapshot still
    // says "12s" rather than "11s".
    const qint64 s = (ms + 500) / 1000;
    if (s < 60) {
        return QString::number(s) + QLatin1Char('s');
    }
    const qint64 m = s / 60;
    if (m < 60) {
        return twoUnits(m, 'm', s % 60, 's');
    }
    const qint64 h = m / 60;
    if (h < 24) {
        return twoUnits(h, 'h', m % 60, 'm');
    }
    return twoUnits(h / 24, 'd', h % 24, 'h');
}

} // namespace

QString formatRelativeTime(const QDateTime &when, const QDateTime &now) {
    if (!when.isValid() || !now.isValid()) {
        return {};
    }
    const qint64 delta = now.msecsTo(when);
    if (delta > -1000 && delta < 1000) {
        return QStringLiteral("now");
    }
    if (delta > 0) {
        return QLatin1String("in ") + coarseDuration(delta);
    }
    return coarseDuration(-delta) + QLatin1String(" ago");
}

QString formatAbsoluteTime(const QDateTime &when) {
    if (!when.isValid()) {
        return {};
    }
    return when.toLocalTime().toString(Qt::ISODateWithMs);
}

QString formatCount(qint64 count, bool estimated) {
    const QString text = QLocale().toString(count);
    return estimated ? QLatin1Char('~') + text : text;
}

QString firstLine(const QString &text, int maxChars) {
    QString line = text.section(QLatin1Char('\n'), 0, 0).trimmed();
    if (line.size() > maxChars) {
        line = line.left(maxChars - 1) + QChar(0x2026); // ellipsis
    }
    return line;
}

} // namespace outbox::console
