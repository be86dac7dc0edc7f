#include "core/jsontext.h"

namespace outbox::core {

QString reformatJson(const QByteArray &bytes, int indent) {
    const QString text = QString::fromUtf8(bytes);
    QString out;
    out.reserve(text.size() + text.size() / 4);
    int depth = 0;
    bool inString = false;
    bool escaped = false;
    auto newline = [&] {
        if (indent < 0)
            return;
        out += QLatin1Char('\n');
        out += QString(depth * indent, QLatin1Char(' '));
    };
    auto nextSignificant = [&](qsizetype from) {
        while (from < text.size() && text.at(from).isSpace())
            ++from;
        return from;
    };
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (inString) {
            out += c;
            if (escaped)
                escaped = false;
            else if (c == QLatin1Char('\\'))
                escaped = true;
            else if (c == QLatin1Char('"'))
                inString = false;
            continue;
        }
        switch (c.unicode()) {
        case '"':
            inString = true;
            out += c;
            break;
        case '{':
        case '[': {
            const QChar close = c == QLatin1Char('{') ? QLatin1Char('}') : QLatin1Char(']');
            const qsizetype next = nextSignificant(i + 1);
            if (next < text.size() && text.at(next) == close) {
                out += c;
                out += close;
                i = next;
                break;
            }
            out += c;
            ++depth;
            newline();
            break;
        }
        case '}':
        case ']':
            --depth;
            newline();
            out += c;
            break;
        case ',':
            out += c;
            newline();
            break;
        case ':':
            out += indent < 0 ? QStringLiteral(":") : QStringLiteral(": ");
            break;
        default:
            if (!c.isSpace())
                out += c;
            break;
        }
    }
    return out;
}

} // namespace outbox::core
