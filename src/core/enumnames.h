#pragma once

#include <QString>
#include <QStringView>

#include <cstddef>
#include <optional>

namespace outbox::core {

// The text form of an enum's values, one table per enum: the name written to
// logs, JSON and the command line, and the parser of that name, read the same
// table, so the two cannot drift apart. A table lists every value once.
template <typename Enum> struct EnumName {
    Enum value;
    const char *name; // Latin-1
};

// The table's name for `value`; `fallback` for a value the table lacks.
template <typename Enum, std::size_t N>
QString nameOf(const EnumName<Enum> (&names)[N], Enum value, const char *fallback = "") {
    for (const EnumName<Enum> &entry : names) {
        if (entry.value == value)
            return QLatin1String(entry.name);
    }
    return QLatin1String(fallback);
}

// The value named `name` (surrounding spaces and case ignored), if any.
template <typename Enum, std::size_t N>
std::optional<Enum> valueNamed(const EnumName<Enum> (&names)[N], QStringView name) {
    const QStringView trimmed = name.trimmed();
    for (const EnumName<Enum> &entry : names) {
        if (trimmed.compare(QLatin1String(entry.name), Qt::CaseInsensitive) == 0)
            return entry.value;
    }
    return std::nullopt;
}

} // namespace outbox::core
