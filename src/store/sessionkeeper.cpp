#include "store/sessionkeeper.h"

#include "core/retrypolicy.h"
#include "store/logging.h"

#include <QLoggingCategory>

namespace outbox::store {

SessionKeeper::SessionKeeper(core::ConnInfo info, Options options, QObject *parent)
    : QObject(parent)
    , m_session(std::move(info), options.session)
    , m_options(std::move(options))
    , m_rng(QRandomGenerator::securelySeeded())
    // Parented so that moveToThread() takes the timers along.
    , m_debounce(this)
    , m_health(this)
    , m_reconnect(this) {
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(m_options.debounce);
    connect(&m_debounce, &QTimer::timeout, this, &SessionKeeper::notified);
    m_health.setInterval(m_options.healthCheckInterval);
    connect(&m_health, &QTimer::timeout, this, &SessionKeeper::check);
    m_reconnect.setSingleShot(true);
    connect(&m_reconnect, &QTimer::timeout, this, &SessionKeeper::connectNow);
}

SessionKeeper::~SessionKeeper() {
    stop();
}

void SessionKeeper::start() {
    if (m_running) {
        return;
    }
    m_running = true;
    m_failures = 0;
    m_reconnects = 0;
    m_hadConnection = false;
    connectNow();
}

void SessionKeeper::stop() {
    m_running = false;
    m_reconnect.stop();
    m_debounce.stop();
    closeSession();
}

void SessionKeeper::closeSession() {
    m_connected = false;
    m_health.stop();
    m_session.close();
}

void SessionKeeper::reconnectNow() {
    m_running = true;
    m_failures = 0;
    connectNow();
}

void SessionKeeper::connectNow() {
    if (!m_running) {
        return;
    }
    m_reconnect.stop();
    m_health.stop();
    m_connected = false;
    auto opened = m_session.open();
    if (opened.ok() && m_options.listen != Listen::Off) {
        auto listening =
            m_session.listen([this] { onNotification(); },
                             [this] { lost(QStringLiteral("the server closed the connection")); });
        if (!listening.ok() && m_options.listen == Listen::Required) {
            m_session.close();
            opened = listening;
        } else if (!listening.ok()) {
            qCWarning(lcStore).noquote()
                << listening.errorMessage() << QStringLiteral("; going on without notifications");
        }
    }
    if (!opened.ok()) {
        const core::ErrorKind kind = opened.errorKind();
        if (m_options.giveUpOnInvalid &&
            (kind == core::ErrorKind::Invalid || kind == core::ErrorKind::AuthenticationFailed ||
             kind == core::ErrorKind::PermissionDenied)) {
            Q_EMIT gaveUp(opened.errorMessage(), kind);
            return;
        }
        lost(opened.errorMessage());
        return;
    }
    const bool reconnected = m_hadConnection;
    if (reconnected) {
        ++m_reconnects;
    }
    m_hadConnection = true;
    m_failures = 0;
    m_connected = true;
    m_health.start();
    Q_EMIT connected(reconnected);
    if (reconnected) {
        // Whatever was sent while the session was away is lost: look once.
        Q_EMIT notified();
    }
}

bool SessionKeeper::check() {
    if (!m_connected) {
        return false;
    }
    const auto alive = m_session.probe();
    if (!alive.ok()) {
        lost(alive.errorMessage());
        return false;
    }
    return true;
}

void SessionKeeper::lost(const QString &reason) {
    closeSession();
    if (!m_running) {
        return;
    }
    const core::RetryPolicy backoff{m_options.reconnectMin, m_options.reconnectMax};
    ++m_failures;
    const core::Millis delay =
        m_options.jitter ? backoff.nextDelay(m_failures, m_rng) : backoff.cappedDelay(m_failures);
    m_reconnect.start(delay);
    Q_EMIT retrying(reason, delay);
}

void SessionKeeper::onNotification() {
    if (!m_debounce.isActive()) {
        m_debounce.start();
    }
}

} // namespace outbox::store
