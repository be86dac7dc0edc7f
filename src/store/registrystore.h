#pragma once

#include "core/duration.h"
#include "core/result.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

namespace outbox::store {

class Session;

// What a dispatcher tells the registry about itself when it starts.
struct DispatcherRegistration {
    QUuid workerId;
    QString token; // the secret that proves a later heartbeat or unregister is its own
    QString host;
    qint64 pid = 0;
    QString version;
    QString application; // "outboxctl", "outbox-console"
    QString nameSpace;   // empty: every namespace
    QString runnerUrl;   // without user info
    int concurrency = 0;
    core::Millis heartbeatInterval{5000};
    QDateTime startedAt;
};

// What it reports on every heartbeat.
struct DispatcherHeartbeat {
    QString state; // "running", "reconnecting", ...
    int inFlight = 0;
    double deliveredPerSecond = 0;
    double failedPerSecond = 0;
    qint64 deliveredTotal = 0;
};

// One row of outbox_dispatchers, as read back.
struct DispatcherEntry {
    QUuid workerId;
    QString host;
    qint64 pid = 0;
    QString version;
    QString application;
    QString dbUser;
    QString nameSpace; // empty: every namespace
    QString runnerUrl;
    int concurrency = 0;
    core::Millis heartbeatInterval{0};
    QDateTime startedAt;
    QDateTime heartbeatAt;
    QString state;
    int inFlight = 0;
    double deliveredPerSecond = 0;
    double failedPerSecond = 0;
    qint64 deliveredTotal = 0;
    bool alive = false; // heartbeat within three intervals, by the server's clock
    bool serves(const QString &eventNamespace) const {
        return nameSpace.isEmpty() || nameSpace == eventNamespace;
    }
};

struct DispatcherList {
    QList<DispatcherEntry> entries; // alive first, then newest heartbeat first
    QDateTime serverTime;
    int aliveCount() const;
};

// The dispatcher registry (outbox_dispatchers, sql/003): writes go through
// SECURITY DEFINER functions keyed by the worker id and the secret token, so
// a dispatcher can only change its own row. Uses the caller's connection, in
// the caller's thread.
class RegistryStore final {
public:
    explicit RegistryStore(Session &session);
    explicit RegistryStore(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(RegistryStore)

    core::Result<void> registerDispatcher(const DispatcherRegistration &registration);
    // False when the row is gone (the caller registers again).
    core::Result<bool> heartbeat(const QUuid &workerId, const QString &token,
                                 const DispatcherHeartbeat &beat);
    core::Result<bool> unregister(const QUuid &workerId, const QString &token);
    core::Result<DispatcherList> list();

    // A fresh secret for DispatcherRegistration::token.
    static QString newToken();

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store
