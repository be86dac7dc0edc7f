#pragma once

#include "core/duration.h"

#include <QDateTime>
#include <QString>

namespace outbox::dispatch {

// The circuit breaker of one destination. Closed: events go. After
// `failureThreshold` failed attempts in a row it opens: the destination's
// events wait (unclaimed, their attempts not counted) for `openFor`, then it
// is half-open: one event goes as a probe. The probe's success (or any
// success) closes it; the probe's failure opens it again for `openFor`.
// Pure state; the caller owns the clock (milliseconds of a monotonic clock)
// and the timers. Dispatcher-internal (RoutingPublisher).
class CircuitBreaker final {
public:
    enum class State { Closed, Open, HalfOpen };

    CircuitBreaker(int failureThreshold, core::Millis openFor);

    State state() const { return m_state; }
    QString reason() const { return m_reason; } // why not closed; empty when closed
    QDateTime since() const { return m_since; } // UTC time of the last change
    core::Millis openFor() const { return m_openFor; }

    // Each returns true when the state changed.
    bool recordSuccess();
    bool recordFailure(const QString &error, qint64 nowMs);
    // Open for long enough: half-open.
    bool poll(qint64 nowMs);
    // Milliseconds until poll() lets a probe through (0 when not open).
    qint64 msUntilProbe(qint64 nowMs) const;

    static QString stateName(State state); // "closed", "open", "half-open"

private:
    void enter(State state, QString reason);

    int m_threshold;
    core::Millis m_openFor;
    State m_state = State::Closed;
    int m_failures = 0; // in a row
    qint64 m_openedAtMs = 0;
    QString m_reason;
    QDateTime m_since = QDateTime::currentDateTimeUtc();
};

} // namespace outbox::dispatch
