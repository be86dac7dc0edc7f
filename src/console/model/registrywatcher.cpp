#include "console/model/registrywatcher.h"

#include "store/operations.h"
#include "store/session.h"

#include <QCoreApplication>

#include <memory>

namespace outbox::console {

std::optional<store::Pause> RegistrySnapshot::pauseOf(const QString &nameSpace,
                                                      const QString &topic) const {
    for (const store::Pause &pause : pauses) {
        if (pause.nameSpace == nameSpace && (!pause.topic || *pause.topic == topic))
            return pause;
    }
    return std::nullopt;
}

// The database side, in RegistryWatcher's thread.
class RegistryWorker final : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~RegistryWorker() override { m_session.reset(); }
    Q_DISABLE_COPY_MOVE(RegistryWorker)

    void setConnInfo(const core::ConnInfo &info) {
        store::Session::Options options;
        options.applicationName = QStringLiteral("outbox-console-registry");
        m_session = std::make_unique<store::Session>(info, options);
    }

    void refresh() {
        if (!ensureOpen())
            return;
        // The stores hold the connection: they are gone before fail()
        // closes it (else "connection still in use").
        auto snapshot = read();
        if (!snapshot)
            return fail(snapshot.errorMessage());
        Q_EMIT snapshotReady(snapshot.value());
    }

    void pause(const QString &nameSpace, const std::optional<QString> &topic,
               const QString &reason) {
        if (!ensureOpen())
            return Q_EMIT actionFinished(false, m_lastError);
        store::PauseStore pauses(*m_session);
        auto paused = pauses.pause(nameSpace, topic, reason, actor());
        Q_EMIT actionFinished(paused.ok(), paused.ok()
                                               ? tr("Paused %1.").arg(scope(nameSpace, topic))
                                               : paused.errorMessage());
        refresh();
    }

    void resume(const QString &nameSpace, const std::optional<QString> &topic) {
        if (!ensureOpen())
            return Q_EMIT actionFinished(false, m_lastError);
        store::PauseStore pauses(*m_session);
        auto resumed = pauses.resume(nameSpace, topic, actor());
        if (!resumed)
            Q_EMIT actionFinished(false, resumed.errorMessage());
        else if (resumed.value() == 0)
            Q_EMIT actionFinished(false, tr("%1 is not paused.").arg(scope(nameSpace, topic)));
        else
            Q_EMIT actionFinished(true, tr("Resumed %1.").arg(scope(nameSpace, topic)));
        refresh();
    }

    void pauseDestination(const QString &destination, const QString &reason) {
        if (!ensureOpen())
            return Q_EMIT actionFinished(false, m_lastError);
        auto paused = store::DestinationStore(*m_session).pause(destination, reason, actor());
        Q_EMIT actionFinished(paused.ok(), paused.ok()
                                               ? tr("Paused destination %1.").arg(destination)
                                               : paused.errorMessage());
        refresh();
    }

    void resumeDestination(const QString &destination) {
        if (!ensureOpen())
            return Q_EMIT actionFinished(false, m_lastError);
        auto resumed = store::DestinationStore(*m_session).resume(destination, actor());
        if (!resumed)
            Q_EMIT actionFinished(false, resumed.errorMessage());
        else if (!resumed.value())
            Q_EMIT actionFinished(false, tr("Destination %1 is not paused.").arg(destination));
        else
            Q_EMIT actionFinished(true, tr("Resumed destination %1.").arg(destination));
        refresh();
    }

Q_SIGNALS:
    void snapshotReady(const outbox::console::RegistrySnapshot &snapshot);
    void failed(const QString &message);
    void actionFinished(bool ok, const QString &message);

private:
    core::Result<RegistrySnapshot> read() {
        RegistrySnapshot snapshot;
        store::RegistryStore registry(*m_session);
        auto list = registry.list();
        if (!list)
            return list.error();
        snapshot.dispatchers = list.value();
        store::PauseStore pauses(*m_session);
        auto paused = pauses.list();
        if (!paused)
            return paused.error();
        snapshot.pauses = paused.value();
        // Destinations came with version 15; an older schema has none.
        store::DestinationStore destinations(*m_session);
        if (auto reports = destinations.reports())
            snapshot.destinations = reports.value();
        if (auto pausedDestinations = destinations.pauses())
            snapshot.destinationPauses = pausedDestinations.value();
        return snapshot;
    }
    static QString scope(const QString &nameSpace, const std::optional<QString> &topic) {
        return topic ? tr("topic %1 of namespace %2").arg(*topic, nameSpace)
                     : tr("namespace %1").arg(nameSpace);
    }
    static store::Actor actor() {
        return store::Actor::fromEnvironment(QStringLiteral("outbox-console"));
    }
    bool ensureOpen() {
        if (!m_session)
            return false;
        if (m_session->isOpen())
            return true;
        if (auto opened = m_session->open(); !opened) {
            fail(opened.errorMessage());
            return false;
        }
        return true;
    }
    void fail(const QString &message) {
        m_lastError = message;
        m_session->close(); // opened again on the next refresh
        Q_EMIT failed(message);
    }

    std::unique_ptr<store::Session> m_session;
    QString m_lastError;
};

RegistryWatcher::RegistryWatcher(QObject *parent)
    : QObject(parent)
    , m_worker(new RegistryWorker) {
    qRegisterMetaType<outbox::console::RegistrySnapshot>();
    m_thread.setObjectName(QStringLiteral("outbox-console-registry"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &RegistryWorker::snapshotReady, this,
            [this](const RegistrySnapshot &snapshot) {
                m_busy = false;
                Q_EMIT snapshotReady(snapshot);
            });
    connect(m_worker, &RegistryWorker::failed, this, [this](const QString &message) {
        m_busy = false;
        Q_EMIT failed(message);
    });
    connect(m_worker, &RegistryWorker::actionFinished, this, &RegistryWatcher::actionFinished);
    connect(&m_timer, &QTimer::timeout, this, &RegistryWatcher::refreshNow);
    m_thread.start();
}

RegistryWatcher::~RegistryWatcher() {
    m_timer.stop();
    m_thread.quit();
    m_thread.wait();
}

void RegistryWatcher::setConnInfo(const core::ConnInfo &info, std::chrono::milliseconds interval) {
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, info] { worker->setConnInfo(info); }, Qt::QueuedConnection);
    m_busy = false;
    refreshNow();
    m_timer.start(interval);
}

void RegistryWatcher::refreshNow() {
    if (m_busy)
        return;
    m_busy = true;
    QMetaObject::invokeMethod(m_worker, &RegistryWorker::refresh, Qt::QueuedConnection);
}

void RegistryWatcher::pause(const QString &nameSpace, const std::optional<QString> &topic,
                            const QString &reason) {
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, nameSpace, topic, reason] { worker->pause(nameSpace, topic, reason); },
        Qt::QueuedConnection);
}

void RegistryWatcher::resume(const QString &nameSpace, const std::optional<QString> &topic) {
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, nameSpace, topic] { worker->resume(nameSpace, topic); },
        Qt::QueuedConnection);
}

void RegistryWatcher::pauseDestination(const QString &destination, const QString &reason) {
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, destination, reason] { worker->pauseDestination(destination, reason); },
        Qt::QueuedConnection);
}

void RegistryWatcher::resumeDestination(const QString &destination) {
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, destination] { worker->resumeDestination(destination); },
        Qt::QueuedConnection);
}

} // namespace outbox::console

#include "registrywatcher.moc"
