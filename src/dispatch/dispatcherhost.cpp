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
    // After the forwarding above: whoever listens has seen stopped() first.
    connect(m_dispatcher, &Dispatcher::stopped, this, [this] {
        if (m_shuttingDown) {
            windDown();
        }
    });
    connect(&m_thread, &QThread::finished, this, [this] {
        if (m_windingDown) {
            m_housekeeping->shutDown();
        }
    });
    connect(m_housekeeping.get(), &Housekeeping::finished, this, &DispatcherHost::finished);
    m_thread.start();
}

DispatcherHost::~DispatcherHost() {
    if (!m_windingDown) {
        // Destroyed while running: the dispatcher is deleted as its thread
        // ends, and its destructor aborts (writes what it can, releases
        // leases).
        disconnect(m_dispatcher, nullptr, this, nullptr);
        m_thread.quit();
    }
    m_thread.wait();        // returns at once after finished()
    m_housekeeping.reset(); // after the dispatcher's last stopped(): unregisters
}

void DispatcherHost::start() {
    if (m_shuttingDown) {
        return;
    }
    QMetaObject::invokeMethod(m_dispatcher, &Dispatcher::start, Qt::QueuedConnection);
}

void DispatcherHost::stop() {
    if (m_windingDown) {
        return; // the dispatcher has stopped and is gone with its thread
    }
    QMetaObject::invokeMethod(m_dispatcher, &Dispatcher::stop, Qt::QueuedConnection);
}

void DispatcherHost::shutDown() {
    if (m_shuttingDown) {
        return;
    }
    m_shuttingDown = true;
    // A stopped dispatcher says stopped() again: the wind-down starts either way.
    stop();
}

void DispatcherHost::windDown() {
    if (m_windingDown) {
        return;
    }
    m_windingDown = true;
    // Quit from inside the thread, after whatever was posted to it before;
    // the dispatcher is deleted there as the thread ends. Housekeeping
    // follows (see the constructor), and its end is finished().
    QMetaObject::invokeMethod(
        m_dispatcher, [] { QThread::currentThread()->quit(); }, Qt::QueuedConnection);
}

void DispatcherHost::setConfig(const core::DispatcherConfig &config) {
    m_requestedConfig = config;
    if (m_windingDown) {
        return;
    }
    QMetaObject::invokeMethod(
        m_dispatcher, [dispatcher = m_dispatcher, config] { dispatcher->setConfig(config); },
        Qt::QueuedConnection);
}

} // namespace outbox::dispatch
