#pragma once

#include "core/result.h"

#include <QString>

#include <chrono>

namespace outbox::core {

using Millis = std::chrono::milliseconds;

// Parses "500ms", "30s", "5m", "2h", "7d" and combinations like "1h30m".
// A bare number is refused (the unit is never guessed). Negative values,
// unknown units, overflow and empty input are refused with a message that
// shows the accepted forms.
Result<Millis> parseDuration(QStringView text);

// The longest duration the dispatcher and the long-running commands accept
// for any setting: every one of them ends up in a Qt timer (whose interval is
// an int of milliseconds, about 24.8 days) or in a PostgreSQL interval
// computed from it, so a longer value would overflow there instead of being
// refused here.
inline constexpr Millis kLongestSetting{24LL * 86400000};

// Ok when `value` is at most kLongestSetting; otherwise an error naming
// `flag` (e.g. "--lease"), the value and the limit.
Result<void> checkLongestSetting(QStringView flag, Millis value);

// The shortest exact rendering: 1500ms -> "1.5s", 90000 -> "1m30s", 0 -> "0s".
QString formatDuration(Millis duration);

} // namespace outbox::core
