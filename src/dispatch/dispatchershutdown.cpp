// Dispatcher, continued: stopping, failing and the shutdown sequence
// (ARCHITECTURE.md §5 "Shutdown"). The rest of the class is in dispatcher.cpp.

#include "dispatch/dispatcher.h"
#include "dispatch/logging.h"
#include "dispatch/notifier.h"

namespace outbox::dispatch {

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
    qCInfo(lcDispatch).noquote() << QLatin1String("event=stopping in_flight=") %
                                        QString::number(m_inFlight.size()) %
                                        QLatin1String(" grace=") %
                                        core::formatDuration(m_config.shutdownGrace);
    if (m_inFlight.isEmpty()) {
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
    if (m_connection.store() && flush() && !m_releases.isEmpty()) {
        const auto released =
            m_connection.store()->release(m_stats.workerId, m_releases, m_config.maxAttempts);
        if (released)
            noteReleased(released.value());
    }
    finalizeStop();
}

void Dispatcher::fail(const QString &message) {
    qCWarning(lcDispatch).noquote() << QLatin1String("event=failed error=\"") % message % u'"';
    m_stats.lastError = message;
    m_stats.lastErrorAt = QDateTime::currentDateTimeUtc();
    stopTimers();
    stopListening();
    if (m_publisher) {
        m_publisher->abortAll();
        m_publisher.release()->deleteLater();
    }
    m_connection.close();
    Q_EMIT failed(message);
    setState(DispatcherState::Failed);
    emitStats();
    Q_EMIT stopped();
}

void Dispatcher::onGraceExpired() {
    qCInfo(lcDispatch).noquote() << QLatin1String("event=grace_expired abandoned=") %
                                        QString::number(m_inFlight.size());
    abandonInFlight();
    finishStop();
}

void Dispatcher::abandonInFlight() {
    if (m_publisher)
        m_publisher->abortAll();
    for (auto it = m_inFlight.cbegin(); it != m_inFlight.cend(); ++it)
        m_releases.append(store::Release{it.key(), it->attempts, true});
    m_inFlight.clear();
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
        scheduleReconnect();
    };
    if (!m_connection.store()) {
        retryLater();
        return;
    }
    if (!flush()) {
        retryLater();
        return;
    }
    if (!m_releases.isEmpty()) {
        const auto released =
            m_connection.store()->release(m_stats.workerId, m_releases, m_config.maxAttempts);
        if (!released) {
            handleStoreError(released.error(), QStringLiteral("release"));
            retryLater();
            return;
        }
        noteReleased(released.value());
    }
    finalizeStop();
}

// Rows cut off at their last attempt ended dead (as the dead sweep would have
// ended them), the others are pending again.
void Dispatcher::noteReleased(const store::FencedResult &released) {
    const auto dead = released.madeDead.size();
    m_stats.released += released.applied - dead;
    m_stats.swept += dead;
    for (const QUuid &id : released.madeDead)
        qCInfo(lcDispatch).noquote()
            << QLatin1String("event=dead id=") % uuidText(id) % QLatin1String(" attempts=") %
                   QString::number(m_config.maxAttempts) %
                   QLatin1String(" reason=last_attempt_cut_off_by_shutdown");
    m_releases.clear();
}

void Dispatcher::finalizeStop() {
    stopTimers();
    if (!m_buffer.isEmpty() || !m_releases.isEmpty()) {
        // Nothing is lost: these rows are claimed again when their leases
        // expire, and delivered again at worst.
        qCWarning(lcDispatch).noquote()
            << QLatin1String("event=stop_unflushed acks=") % QString::number(m_buffer.ackCount()) %
                   QLatin1String(" nacks=") % QString::number(m_buffer.nackCount()) %
                   QLatin1String(" releases=") % QString::number(m_releases.size()) %
                   QLatin1String(" note=redelivered_after_lease");
        m_buffer.clear();
        m_releases.clear();
    }
    if (m_publisher) {
        m_publisher->abortAll();
        disconnect(m_publisher.get(), nullptr, this, nullptr);
        // May be inside the publisher's own signal: delete it later.
        m_publisher.release()->deleteLater();
    }
    m_connection.close();
    m_stopClock.invalidate();
    m_stopRequested = false;
    qCInfo(lcDispatch).noquote() << QLatin1String("event=stopped worker_id=") %
                                        uuidText(m_stats.workerId) % QLatin1String(" delivered=") %
                                        QString::number(m_stats.delivered) %
                                        QLatin1String(" retried=") %
                                        QString::number(m_stats.retried) % QLatin1String(" dead=") %
                                        QString::number(m_stats.dead) %
                                        QLatin1String(" released=") %
                                        QString::number(m_stats.released) %
                                        QLatin1String(" swept=") % QString::number(m_stats.swept);
    setState(DispatcherState::Stopped);
    emitStats();
    Q_EMIT stopped();
}

} // namespace outbox::dispatch
