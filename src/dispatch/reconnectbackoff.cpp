#include "dispatch/reconnectbackoff.h"

#include "core/logline.h"
#include "dispatch/logging.h"

namespace outbox::dispatch {

ReconnectBackoff::ReconnectBackoff(QObject *owner, core::Millis baseDelay, core::Millis maxDelay,
                                   std::function<void()> reconnect)
    : m_timer(owner)
    , m_policy{baseDelay, maxDelay}
    , m_rng(QRandomGenerator::securelySeeded()) {
    m_timer.setSingleShot(true);
    QObject::connect(&m_timer, &QTimer::timeout, owner, std::move(reconnect));
}

void ReconnectBackoff::schedule() {
    if (m_timer.isActive())
        return;
    const core::Millis delay = m_policy.nextDelay(++m_failures, m_rng);
    qCInfo(lcDispatch) << core::LogLine("reconnect_scheduled")
                              .add("attempt", m_failures)
                              .add("in_ms", delay.count());
    m_timer.start(delay);
}

} // namespace outbox::dispatch
