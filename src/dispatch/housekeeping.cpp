#include "dispatch/housekeeping.h"

#include "dispatch/dispatcher.h"
#include "dispatch/registration.h"
#include "dispatch/retention.h"

#include <QMetaObject>

namespace outbox::dispatch {

Housekeeping::Housekeeping(const core::ConnInfo &connInfo, const core::DispatcherConfig &config,
                           const HousekeepingOptions &options, const QString &application,
                           Dispatcher *dispatcher, QObject *parent)
    : QObject(parent) {
    m_thread.setObjectName(QStringLiteral("outbox-housekeeping"));
    if (options.registry) {
        m_registration = new Registration(connInfo, config, application, options.heartbeatInterval);
        m_registration->moveToThread(&m_thread);
        connect(&m_thread, &QThread::finished, m_registration, &QObject::deleteLater);
        connect(dispatcher, &Dispatcher::started, m_registration, &Registration::onStarted);
        connect(dispatcher, &Dispatcher::statsSnapshot, m_registration, &Registration::onStats);
        connect(dispatcher, &Dispatcher::stopped, m_registration, &Registration::onStopped);
    }
    if (Retention::enabled(options)) {
        m_retention = new Retention(connInfo, options, application);
        m_retention->moveToThread(&m_thread);
        connect(&m_thread, &QThread::finished, m_retention, &QObject::deleteLater);
        connect(dispatcher, &Dispatcher::started, m_retention, &Retention::start);
        connect(dispatcher, &Dispatcher::stopped, m_retention, &Retention::stop);
    }
    connect(&m_thread, &QThread::finished, this, &Housekeeping::finished);
    m_thread.start();
}

Housekeeping::~Housekeeping() {
    if (m_shutDown) {
        m_thread.wait(); // returns at once after finished(): the thread ends by itself
        return;
    }
    // A stopped() still queued is handled first; then the row is surely gone.
    if (m_registration)
        QMetaObject::invokeMethod(m_registration, &Registration::onStopped,
                                  Qt::BlockingQueuedConnection);
    if (m_retention)
        QMetaObject::invokeMethod(m_retention, &Retention::stop, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

void Housekeeping::shutDown() {
    if (m_shutDown)
        return;
    m_shutDown = true;
    QObject *context = m_registration ? static_cast<QObject *>(m_registration) : m_retention;
    if (!context) {
        m_thread.quit(); // nothing runs there
        return;
    }
    // Queued behind a stopped() still on its way, like the destructor's calls.
    QMetaObject::invokeMethod(
        context,
        [registration = m_registration, retention = m_retention] {
            if (registration)
                registration->onStopped();
            if (retention)
                retention->stop();
            QThread::currentThread()->quit();
        },
        Qt::QueuedConnection);
}

void Housekeeping::setConfig(const core::DispatcherConfig &config) {
    if (m_registration && !m_shutDown)
        QMetaObject::invokeMethod(
            m_registration,
            [registration = m_registration, config] { registration->setConfig(config); },
            Qt::QueuedConnection);
}

} // namespace outbox::dispatch
