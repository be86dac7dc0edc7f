#include "core/logline.h"

#include <QDebugStateSaver>

namespace outbox::core {

namespace {

// Characters written as \uXXXX: the other C0 controls, DEL, the C1 controls
// and the two Unicode line breaks, which some viewers treat as a newline.
bool isEscapedControl(char16_t c) {
    return c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0x2028 || c == 0x2029;
}

bool needsQuotes(QStringView value) {
    if (value.isEmpty())
        return true;
    for (const QChar c : value) {
        const char16_t u = c.unicode();
        if (u == u' ' || u == u'=' || u == u'"' || u == u'\\' || isEscapedControl(u))
            return true;
    }
    return false;
}

} // namespace

QString logfmtValue(QStringView value) {
    if (!needsQuotes(value))
        return value.toString();
    QString quoted;
    quoted.reserve(value.size() + 2);
    quoted += QLatin1Char('"');
    // The characters with a one-letter escape, and their letters.
    static const QStringView shortEscaped = u"\"\\\n\r\t";
    static const QLatin1String letters("\"\\nrt");
    for (const QChar c : value) {
        const qsizetype shortEscape = shortEscaped.indexOf(c);
        if (shortEscape >= 0)
            quoted += QLatin1Char('\\') + letters.at(shortEscape);
        else if (isEscapedControl(c.unicode()))
            quoted += QLatin1String("\\u") +
                      QString::number(c.unicode(), 16).rightJustified(4, QLatin1Char('0'));
        else
            quoted += c;
    }
    quoted += QLatin1Char('"');
    return quoted;
}

LogLine::LogLine(LogKey event) {
    addFormatted(LogKey("event"), event.text());
}

LogLine &LogLine::add(LogKey key, QStringView value) {
    return addFormatted(key, logfmtValue(value));
}

LogLine &LogLine::add(LogKey key, QLatin1String value) {
    return addFormatted(key, logfmtValue(QString(value)));
}

LogLine &LogLine::add(const LogLine &fields) {
    if (!fields.m_text.isEmpty()) {
        if (!m_text.isEmpty())
            m_text += QLatin1Char(' ');
        m_text += fields.m_text;
    }
    return *this;
}

LogLine &LogLine::addFormatted(LogKey key, const QString &formatted) {
    if (!m_text.isEmpty())
        m_text += QLatin1Char(' ');
    m_text += key.text() + QLatin1Char('=') + formatted;
    return *this;
}

QDebug operator<<(QDebug debug, const LogLine &line) {
    const QDebugStateSaver saver(debug);
    debug.noquote().nospace() << line.text();
    return debug;
}

} // namespace outbox::core
