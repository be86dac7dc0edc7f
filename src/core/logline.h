#pragma once

#include <QDebug>
#include <QLatin1String>
#include <QString>
#include <QStringView>

#include <concepts>
#include <cstddef>

namespace outbox::core {

namespace detail {
// Never defined and not constexpr: LogKey calls it on a bad key, which stops
// the compiler with this name in the message.
void logKeyMayHoldOnly_a_to_z_0_to_9_underscore_dot_dash();
} // namespace detail

// The key of a log field: a-z, 0-9, '_', '.' and '-', never empty. Keys are
// literals, so a bad one fails the build (the constructor runs at compile
// time and cannot finish on a character outside the set).
class LogKey final {
public:
    template <std::size_t N>
    consteval LogKey(const char (&key)[N]) // implicit: add("key", ...)
        : m_key(key)
        , m_size(N - 1) {
        bool valid = N > 1;
        for (std::size_t i = 0; i + 1 < N; ++i)
            valid = valid && isKeyCharacter(key[i]);
        if (!valid)
            detail::logKeyMayHoldOnly_a_to_z_0_to_9_underscore_dot_dash();
    }

    QLatin1String text() const { return QLatin1String(m_key, qsizetype(m_size)); }

    static constexpr bool isKeyCharacter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    }

private:
    const char *m_key;
    std::size_t m_size;
};

// `value` as a logfmt value: as it is when it is a plain token; else in
// double quotes, with \" \\ \n \r \t and \uXXXX for the other control
// characters (C0, DEL, C1, U+2028, U+2029), so that a value never breaks the
// line or its neighbours. The empty value is "".
QString logfmtValue(QStringView value);

// One log line of key=value fields (logfmt), the form of every structured
// log line of the dispatcher and outboxctl: keys are checked (LogKey) and
// values are quoted and escaped as needed (logfmtValue), whatever they hold —
// a server error such as 'role "x" does not exist', a newline, a '='.
//
//   qCWarning(lcDispatch) << core::LogLine("retention_failed").add("error", message);
//   // event=retention_failed error="permission denied for table \"outbox_events\""
class LogLine final {
public:
    LogLine() = default;
    // A line that starts with event=<event>.
    explicit LogLine(LogKey event);

    LogLine &add(LogKey key, QStringView value);
    LogLine &add(LogKey key, QLatin1String value);
    template <std::size_t N> LogLine &add(LogKey key, const char (&value)[N]) {
        return add(key, QLatin1String(value, qsizetype(N - 1)));
    }
    template <std::size_t N> LogLine &add(LogKey key, const char16_t (&value)[N]) {
        return add(key, QStringView(value, qsizetype(N - 1)));
    }
    // Only a bool itself: no pointer or number turns into true here.
    template <std::same_as<bool> Bool> LogLine &add(LogKey key, Bool value) {
        return addFormatted(key, value ? QStringLiteral("true") : QStringLiteral("false"));
    }
    template <std::integral Number>
    requires(!std::same_as<Number, bool>) LogLine &add(LogKey key, Number value) {
        return addFormatted(key, QString::number(value));
    }
    // Every field of `fields`, in order (e.g. a summary shared by two lines).
    LogLine &add(const LogLine &fields);

    const QString &text() const { return m_text; }
    bool isEmpty() const { return m_text.isEmpty(); }

private:
    LogLine &addFormatted(LogKey key, const QString &formatted);

    QString m_text;
};

// Writes the line as it is: no quotes around it, no space inside added.
QDebug operator<<(QDebug debug, const LogLine &line);

} // namespace outbox::core
