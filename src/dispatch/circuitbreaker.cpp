#include "dispatch/circuitbreaker.h"

#include <algorithm>

namespace outbox::dispatch {

CircuitBreaker::CircuitBreaker(int failureThreshold, core::Millis openFor)
    : m_threshold(std::max(failureThreshold, 1))
    , m_openFor(openFor) {}

QString CircuitBreaker::stateName(State state) {
    switch (state) {
    case State::Closed:
        return QStringLiteral("closed");
    case State::Open:
        return QStringLiteral("open");
    case State::HalfOpen:
        return QStringLiteral("half-open");
    }
    return {};
}

void CircuitBreaker::enter(State state, QString reason) {
    m_state = state;
    m_reason = std::move(reason);
    m_since = QDateTime::currentDateTimeUtc();
}

bool CircuitBreaker::recordSuccess() {
    m_failures = 0;
    if (m_state == State::Closed)
        return false;
    enter(State::Closed, {});
    return true;
}

bool CircuitBreaker::recordFailure(const QString &error, qint64 nowMs) {
    ++m_failures;
    if (m_state == State::HalfOpen) {
        m_openedAtMs = nowMs;
        enter(State::Open, QStringLiteral("the probe failed: ") + error);
        return true;
    }
    if (m_state == State::Open || m_failures < m_threshold)
        return false;
    m_openedAtMs = nowMs;
    enter(State::Open,
          QStringLiteral("%1 failed attempts in a row, the last: %2").arg(m_failures).arg(error));
    return true;
}

bool CircuitBreaker::poll(qint64 nowMs) {
    if (m_state != State::Open || msUntilProbe(nowMs) > 0)
        return false;
    enter(State::HalfOpen, QStringLiteral("open for %1, one event goes as a probe; before: %2")
                               .arg(core::formatDuration(m_openFor), m_reason));
    return true;
}

qint64 CircuitBreaker::msUntilProbe(qint64 nowMs) const {
    if (m_state != State::Open)
        return 0;
    return std::max<qint64>(m_openedAtMs + m_openFor.count() - nowMs, 0);
}

} // namespace outbox::dispatch
