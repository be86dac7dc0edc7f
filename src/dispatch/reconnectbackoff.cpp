#include "dispatch/reconnectbackoff.h"

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
    qCInfo(lcDispatch).noquote() << QLatin1String("event=reconnect_scheduled attempt=") %
                                        QString::number(m_failures) % QLatin1String(" in_ms=") %
                                        QString::number(delay.count());
    m_timer.start(delay);
}

} // namespace outbox::dispatch
