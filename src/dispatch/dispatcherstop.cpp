#include "core/logline.h"
#include "core/uuidtext.h"
#include "dispatch/dispatcher.h"
#include "dispatch/logging.h"

namespace outbox::dispatch {

// The Dispatcher's graceful stop and abort (dispatcher.cpp has the rest).

// ----------------------------------------------------------------- shutdown

void Dispatcher::stop() {
    if (m_state == DispatcherState::Stopped || m_state == DispatcherState::Failed) {
        Q_EMIT stopped();
        return;
    }
    if (m_stopRequested)
        return;
    m_stopRequested = true;
    m_claimTimer.stop();
    m_watchdogTimer.stop();
    m_sweepTimer.stop();
    stopListening();
    setState(DispatcherState::Stopping);
    qCInfo(lcDispatch) << core::LogLine("stopping")
                              .add("in_flight", m_window.inFlight())
                              .add("grace", core::formatDuration(m_config.shutdownGrace));
    if (m_window.isEmpty()) {
        finishStop();
        return;
    }
    m_graceTimer.start(m_config.shutdownGrace);
}

void Dispatcher::abort() {
    if (m_state == DispatcherState::Stopped || m_state == DispatcherState::Failed)
        return;
    m_stopRequested = true;
    stopTimers();
    stopListening();
    setState(DispatcherState::Stopping);
    abandonInFlight();
    // One synchronous attempt: the caller is waiting (e.g. a destructor).
    const bool pending = !m_buffer.isEmpty() || !m_releases.isEmpty();
    if (pending && !m_connection.store())
        (void)m_connection.open(!m_everConnected);
    if (m_connection.store() && flush())
        (void)m_releases.write(*m_connection.store(), m_stats.workerId, m_config.maxAttempts,
                               m_stats);
    finalizeStop();
}

void Dispatcher::onGraceExpired() {
    qCInfo(lcDispatch) << core::LogLine("grace_expired").add("abandoned", m_window.inFlight());
    abandonInFlight();
    finishStop();
}

void Dispatcher::abandonInFlight() {
    if (m_publisher)
        m_publisher->abortAll();
    m_releases.add(m_window.abandonAll());
}

void Dispatcher::finishStop() {
    m_graceTimer.stop();
    if (m_buffer.isEmpty() && m_releases.isEmpty()) {
        finalizeStop(); // nothing to write: no need to wait for the database
        return;
    }
    if (!m_stopClock.isValid())
        m_stopClock.start();
    const auto retryLater = [this] {
        // Only a lost connection is worth waiting for; an SQL error would
        // repeat.
        if (m_connection.store() || m_stopClock.elapsed() >= m_options.stopFlushTimeout.count()) {
            finalizeStop();
            return;
        }
        m_reconnect.schedule();
    };
    if (!m_connection.store() || !flush()) {
        retryLater();
        return;
    }
    if (const auto released = m_releases.write(*m_connection.store(), m_stats.workerId,
                                               m_config.maxAttempts, m_stats);
        !released) {
        handleStoreError(released.error(), QStringLiteral("release"));
        retryLater();
        return;
    }
    finalizeStop();
}

void Dispatcher::finalizeStop() {
    stopTimers();
    if (!m_buffer.isEmpty() || !m_releases.isEmpty()) {
        // Nothing is lost: these rows are claimed again when their leases
        // expire, and delivered again at worst.
        qCWarning(lcDispatch) << core::LogLine("stop_unflushed")
                                     .add("acks", m_buffer.ackCount())
                                     .add("nacks", m_buffer.nackCount())
                                     .add("releases", m_releases.size())
                                     .add("note", "redelivered_after_lease");
        m_buffer.clear();
        m_releases.clear();
    }
    disposePublisher();
    m_connection.close();
    m_stopClock.invalidate();
    m_stopRequested = false;
    qCInfo(lcDispatch) << core::LogLine("stopped")
                              .add("worker_id", core::uuidText(m_stats.workerId))
                              .add("delivered", m_stats.delivered)
                              .add("retried", m_stats.retried)
                              .add("dead", m_stats.dead)
                              .add("released", m_stats.released)
                              .add("swept", m_stats.swept);
    setState(DispatcherState::Stopped);
    emitStats();
    Q_EMIT stopped();
}

} // namespace outbox::dispatch
