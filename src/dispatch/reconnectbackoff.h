#pragma once

#include "core/duration.h"
#include "core/retrypolicy.h"

#include <QObject>
#include <QRandomGenerator>
#include <QTimer>

#include <functional>

namespace outbox::dispatch {

// When the dispatcher tries its database again after a failed connect or a
// lost connection: exponential backoff with jitter from the first failure on,
// until a connection succeeds. Dispatcher-internal.
class ReconnectBackoff final {
public:
    // The timer is parented to `owner`, so that it moves threads with it;
    // `reconnect` runs when a scheduled attempt is due.
    ReconnectBackoff(QObject *owner, core::Millis baseDelay, core::Millis maxDelay,
                     std::function<void()> reconnect);
    Q_DISABLE_COPY_MOVE(ReconnectBackoff)

    // Schedules the next attempt, unless one is scheduled already.
    void schedule();
    void cancel() { m_timer.stop(); }
    // Connected (or a new run): the next failure waits the base delay again.
    void reset() { m_failures = 0; }

private:
    QTimer m_timer;
    core::RetryPolicy m_policy;
    QRandomGenerator m_rng;
    int m_failures = 0;
};

} // namespace outbox::dispatch
