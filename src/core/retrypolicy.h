#pragma once

#include "core/duration.h"

#include <QByteArrayView>
#include <QDateTime>
#include <QRandomGenerator>

#include <optional>

namespace outbox::core {

// Exponential backoff with equal jitter:
//   delay = min(base * 2^(attempts-1), max)     -- clamp first, then jitter
//   result = uniform in [delay/2, delay]
// A runner's Retry-After raises the result (still capped at max).
// Overflow-safe for any attempts value (including <= 0 and INT_MAX).
struct RetryPolicy {
    Millis baseDelay{1000};
    Millis maxDelay{300000};

    // The un-jittered, capped delay for the given attempt number.
    Millis cappedDelay(int attempts) const;
    Millis nextDelay(int attempts, QRandomGenerator &rng,
                     std::optional<Millis> retryAfter = std::nullopt) const;
};

// Parses an HTTP Retry-After value (delta seconds or an HTTP-date relative to
// `now`). Returns nullopt for garbage or dates in the past.
std::optional<Millis> parseRetryAfter(QByteArrayView value, const QDateTime &now);

} // namespace outbox::core
