#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/dispatcherstats.h"
#include "store/registrystore.h"
#include "store/session.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace outbox::dispatch {

// A dispatcher's row in the registry (outbox_dispatchers): registered when
// the dispatcher has started, a heartbeat with its current rates every
// interval, deleted when it stops. A dispatcher killed without stopping
// leaves a row whose heartbeat goes stale, which readers show as gone.
//
// Runs in a thread of its own (Housekeeping's) on its own connection, so a
// slow or lost database never holds up delivery, and delivery never holds up
// the heartbeat. A failed statement is logged and tried again at the next
// beat (registering again when the row is gone).
//
// After each heartbeat it adds what was delivered since the previous one to
// the throughput history, and records the backlog when the minute has no
// sample yet (store::HistoryStore); counts not written are kept for the next
// beat. A history that cannot be written (a role without the grant, a schema
// before version 6) never stops the heartbeat.
class Registration final : public QObject {
    Q_OBJECT
public:
    Registration(core::ConnInfo connInfo, core::DispatcherConfig config, QString application,
                 core::Millis heartbeatInterval, QObject *parent = nullptr);
    ~Registration() override;
    Q_DISABLE_COPY_MOVE(Registration)

    // The runner URL as the registry shows it: no user info, no query.
    static QString publicUrl(const QUrl &url);

public Q_SLOTS:
    void onStarted(const QUuid &workerId);
    void onStats(const outbox::dispatch::DispatcherStats &stats);
    void onStopped(); // unregisters (synchronously) and closes the connection
    void setConfig(const outbox::core::DispatcherConfig &config);

private:
    void beat();
    bool ensureOpen();
    bool registerNow();
    store::DispatcherHeartbeat nextHeartbeat();
    void reportDestinations(); // a routing dispatcher's, on its registry row
    void recordHistory();
    core::Result<void> writeHistory();

    core::DispatcherConfig m_config;
    QString m_application;
    core::Millis m_interval;
    store::Session m_session;
    QTimer m_timer;
    QUuid m_workerId; // null while not running
    QString m_token;
    QDateTime m_startedAt;
    bool m_registered = false;
    DispatcherStats m_stats;
    // The counters at the previous heartbeat, for the rates.
    qint64 m_lastDelivered = 0;
    qint64 m_lastFailed = 0;
    QElapsedTimer m_sinceLastBeat;
    // The counters as last written to the history.
    qint64 m_recordedDelivered = 0;
    qint64 m_recordedFailed = 0;
    qint64 m_recordedDead = 0;
    bool m_historyFailing = false; // logged once until it works again
};

} // namespace outbox::dispatch
