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

// The shortest exact rendering: 1500ms -> "1.5s", 90000 -> "1m30s", 0 -> "0s".
QString formatDuration(Millis duration);

} // namespace outbox::core
