#pragma once

// A strict logfmt reader for the tests, independent of core::LogLine: what
// a log shipper would accept. Fields are separated by single spaces; a key
// is [a-z0-9_.-]+; a value is bare (no space, '=', '"', '\' or control
// character) or in double quotes, where only \" \\ \n \r \t and \uXXXX are
// escapes. Anything else is an error.

#include <QList>
#include <QString>
#include <QStringView>

#include <optional>

namespace outbox::testing {

struct LogField {
    QString key;
    QString value;
};

struct LogfmtParse {
    std::optional<QList<LogField>> fields; // empty on error
    QString error;                         // where and why it stopped

    // The value of the first field named `key`, or nothing.
    std::optional<QString> value(QStringView key) const {
        if (fields) {
            for (const LogField &field : *fields) {
                if (field.key == key)
                    return field.value;
            }
        }
        return std::nullopt;
    }
};

inline LogfmtParse parseLogfmt(QStringView line) {
    const auto fail = [&line](qsizetype at, const char *why) {
        return LogfmtParse{
            std::nullopt,
            QStringLiteral("at %1 of \"%2\": %3").arg(at).arg(line.toString(), QLatin1String(why))};
    };
    const auto isKeyChar = [](QChar c) {
        const char16_t u = c.unicode();
        return (u >= u'a' && u <= u'z') || (u >= u'0' && u <= u'9') || u == u'_' || u == u'.' ||
               u == u'-';
    };
    const auto isControl = [](char16_t u) {
        return u < 0x20 || (u >= 0x7f && u < 0xa0) || u == 0x2028 || u == 0x2029;
    };
    QList<LogField> fields;
    qsizetype i = 0;
    const qsizetype n = line.size();
    while (i < n) {
        if (!fields.isEmpty()) {
            if (line.at(i) != QLatin1Char(' '))
                return fail(i, "fields must be separated by one space");
            ++i;
        }
        LogField field;
        while (i < n && isKeyChar(line.at(i)))
            field.key += line.at(i++);
        if (field.key.isEmpty())
            return fail(i, "a key must be [a-z0-9_.-]+");
        if (i >= n || line.at(i) != QLatin1Char('='))
            return fail(i, "a key must be followed by '='");
        ++i;
        if (i < n && line.at(i) == QLatin1Char('"')) {
            ++i;
            bool closed = false;
            while (i < n) {
                const char16_t c = line.at(i).unicode();
                if (c == u'"') {
                    closed = true;
                    ++i;
                    break;
                }
                if (isControl(c))
                    return fail(i, "raw control character inside quotes");
                if (c != u'\\') {
                    field.value += line.at(i++);
                    continue;
                }
                if (++i >= n)
                    return fail(i, "backslash at the end");
                // One letter for " \ newline return tab, or u and four hex digits.
                const qsizetype letter = QStringView(u"\"\\nrt").indexOf(line.at(i));
                if (letter >= 0) {
                    field.value += QStringView(u"\"\\\n\r\t").at(letter);
                } else if (line.at(i) == QLatin1Char('u')) {
                    const QStringView digits = line.mid(i + 1, 4);
                    bool ok = digits.size() == 4;
                    for (const QChar d : digits)
                        ok = ok && ((d >= QLatin1Char('0') && d <= QLatin1Char('9')) ||
                                    (d >= QLatin1Char('a') && d <= QLatin1Char('f')) ||
                                    (d >= QLatin1Char('A') && d <= QLatin1Char('F')));
                    if (!ok)
                        return fail(i, "\\u needs four hex digits");
                    field.value += QChar(char16_t(digits.toUInt(nullptr, 16)));
                    i += 4;
                } else {
                    return fail(i, "unknown escape");
                }
                ++i;
            }
            if (!closed)
                return fail(i, "unterminated quoted value");
            if (i < n && line.at(i) != QLatin1Char(' '))
                return fail(i, "a quoted value must end the field");
        } else {
            while (i < n && line.at(i) != QLatin1Char(' ')) {
                const char16_t c = line.at(i).unicode();
                if (c == u'=' || c == u'"' || c == u'\\' || isControl(c))
                    return fail(i, "a bare value may not hold '=', '\"', '\\' or controls");
                field.value += line.at(i++);
            }
            if (field.value.isEmpty())
                return fail(i, "an empty value must be written \"\"");
        }
        fields.append(field);
    }
    if (fields.isEmpty())
        return fail(0, "no field");
    return LogfmtParse{fields, {}};
}

} // namespace outbox::testing
