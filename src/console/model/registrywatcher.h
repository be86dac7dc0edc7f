#pragma once

#include "core/conninfo.h"
#include "store/destinationstore.h"
#include "store/pausestore.h"
#include "store/registrystore.h"

#include <QMetaType>
#include <QObject>
#include <QThread>
#include <QTimer>

#include <optional>

namespace outbox::console {

// Who is delivering and what is paused, as of serverTime.
struct RegistrySnapshot {
    store::DispatcherList dispatchers;
    QList<store::Pause> pauses;
    // Routing dispatchers' destinations (a JSON report per worker id,
    // dispatch/routingreport.h) and the paused destinations; empty on a
    // schema before version 15.
    QHash<QUuid, QString> destinations;
    QList<store::DestinationPause> destinationPauses;
    // The pause that holds events of this namespace and topic, if any.
    std::optional<store::Pause> pauseOf(const QString &nameSpace, const QString &topic) const;
};

class RegistryWorker;

// The console's view of the dispatcher registry and the pauses: reads them
// every few seconds, and pauses and resumes, on a connection and thread of
// its own so the GUI thread never waits. A database without the registry
// (an older schema) yields failed() and no snapshot.
class RegistryWatcher final : public QObject {
    Q_OBJECT
public:
    explicit RegistryWatcher(QObject *parent = nullptr);
    ~RegistryWatcher() override;
    Q_DISABLE_COPY_MOVE(RegistryWatcher)

    // Connects (again) to this database and starts reading every `interval`.
    void setConnInfo(const core::ConnInfo &info,
                     std::chrono::milliseconds interval = std::chrono::seconds(3));
    void refreshNow();
    // Answered by actionFinished(ok, message).
    void pause(const QString &nameSpace, const std::optional<QString> &topic,
               const QString &reason);
    void resume(const QString &nameSpace, const std::optional<QString> &topic);
    // A destination of the routing dispatchers; answered the same way.
    void pauseDestination(const QString &destination, const QString &reason);
    void resumeDestination(const QString &destination);

Q_SIGNALS:
    void snapshotReady(const outbox::console::RegistrySnapshot &snapshot);
    void failed(const QString &message);
    void actionFinished(bool ok, const QString &message);

private:
    QThread m_thread;
    RegistryWorker *m_worker = nullptr; // lives in m_thread
    QTimer m_timer;
    bool m_busy = false; // a refresh is in flight: the next tick skips
};

} // namespace outbox::console

Q_DECLARE_METATYPE(outbox::console::RegistrySnapshot)
