#include "dispatch/dispatcherhost.h"

#include "dispatch/housekeeping.h"

#include <QMetaObject>

namespace outbox::dispatch {

DispatcherHost::DispatcherHost(const core::ConnInfo &connInfo, const core::DispatcherConfig &config,
                               PublisherFactory publisherFactory, DispatcherOptions options,
                               QObject *parent)
    : DispatcherSignals(parent) {
    m_thread.setObjectName(QStringLiteral("outbox-dispatcher"));
    m_dispatcher = new Dispatcher(connInfo, config, std::move(publisherFactory), options);
    m_housekeeping = std::make_unique<Housekeeping>(connInfo, config, options.housekeeping,
                                                    options.applicationName, m_dispatcher);
    m_dispatcher->moveToThread(&m_thread);
    // Deleted in its own thread, where its database connections live.
    connect(&m_thread, &QThread::finished, m_dispatcher, &QObject::deleteLater);

    connect(m_dispatcher, &Dispatcher::stateChanged, this, &DispatcherHost::stateChanged);
    connect(m_dispatcher, &Dispatcher::statsSnapshot, this, [this](const DispatcherStats &stats) {
        m_lastStats = stats;
        Q_EMIT statsSnapshot(stats);
    });
    connect(m_dispatcher, &Dispatcher::started, this, &DispatcherHost::started);
    connect(m_dispatcher, &Dispatcher::stopped, this, &DispatcherHost::stopped);
    connect(m_dispatcher, &Dispatcher::failed, this, &DispatcherHost::failed);
    connect(m_dispatcher, &Dispatcher::configApplied, this, &DispatcherHost::configApplied);
    connect(m_dispatcher, &Dispatcher::configApplied, this,
            [this] { m_housekeeping->setConfig(m_requestedConfig); });
    connect(m_dispatcher, &Dispatcher::configRejected, this, &DispatcherHost::configRejected);
    m_thread.start();
}

DispatcherHost::~DispatcherHost() {
    // abort() is a no-op for a stopped dispatcher; otherwise it writes what
    // it can and releases leases before the thread goes away.
    QMetaObject::invokeMethod(m_dispatcher, &Dispatcher::abort, Qt::BlockingQueuedConnection);
    disconnect(m_dispatcher, nullptr, this, nullptr);
    m_thread.quit();
    m_thread.wait();
    m_housekeeping.reset(); // after the dispatcher's last stopped(): unregisters
}

void DispatcherHost::start() {
    QMetaObject::invokeMethod(m_dispatcher, &Dispatcher::start, Qt::QueuedConnection);
}

void DispatcherHost::stop() {
    QMetaObject::invokeMethod(m_dispatcher, &Dispatcher::stop, Qt::QueuedConnection);
}

void DispatcherHost::setConfig(const core::DispatcherConfig &config) {
    m_requestedConfig = config;
    QMetaObject::invokeMethod(
        m_dispatcher, [dispatcher = m_dispatcher, config] { dispatcher->setConfig(config); },
        Qt::QueuedConnection);
}

} // namespace outbox::dispatch
