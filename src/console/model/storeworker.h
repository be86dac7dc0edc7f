#pragma once

#include "console/model/consoletypes.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "store/eventfilter.h"
#include "store/queries.h"

#include <QObject>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>
#include <QVariantList>

#include <chrono>

class QTimer;

namespace outbox::console {

// The console's database side. Lives in its own QThread (see StoreClient,
// which owns the thread and is the only thing that talks to it) and owns one
// QPSQL connection opened in that thread. Every request runs here, so the GUI
// thread never waits on PostgreSQL; results leave as value snapshots by
// signal, never as QSqlQuery or models.
//
// The same connection LISTENs on "outbox_events"; notifications are folded
// into one debounced changed(). A lost connection (noticed by a failing
// request or by the periodic health check) is reported and re-opened with
// backoff; requests meanwhile fail at once with an Unavailable error.
class StoreWorker final : public QObject {
    Q_OBJECT

public:
    static constexpr const char *kChannel = "outbox_events";

    StoreWorker(core::ConnInfo info, StoreClientOptions options);
    ~StoreWorker() override;
    Q_DISABLE_COPY_MOVE(StoreWorker)

    // Everything below must run in the worker's thread.
    void open();          // first connection attempt
    void reconnectNow();  // skip the remaining backoff
    void connectIfDown(); // reconnectNow(), unless connected
    void counts(RequestId id, qint64 exactDeliveredCap);
    void page(RequestId id, const store::PageRequest &request);
    void detail(RequestId id, const QUuid &eventId);
    void errorGroups(RequestId id, const store::EventFilter &filter, int limit);
    void privileges(RequestId id);
    void serverInfo(RequestId id);
    void execute(RequestId id, const QString &sql, const QVariantList &values);

Q_SIGNALS:
    void connectionStateChanged(outbox::console::ConnectionState state, const QString &message);
    void changed();
    void countsReady(outbox::console::RequestId id, const outbox::store::StatusCounts &counts);
    void pageReady(outbox::console::RequestId id, const outbox::console::PageResult &result);
    void detailReady(outbox::console::RequestId id, const outbox::store::EventDetail &detail);
    void errorGroupsReady(outbox::console::RequestId id,
                          const outbox::console::ErrorGroupsResult &result);
    void privilegesReady(outbox::console::RequestId id,
                         const outbox::store::Privileges &privileges);
    void serverInfoReady(outbox::console::RequestId id, const outbox::store::ServerInfo &info);
    void executeReady(outbox::console::RequestId id, const outbox::console::SqlResult &result);
    void requestFailed(outbox::console::RequestId id, outbox::console::RequestKind kind,
                       const outbox::core::Error &error);

private:
    bool ensureConnected(RequestId id, RequestKind kind);
    void fail(RequestId id, RequestKind kind, const core::Error &error);
    core::Result<QDateTime> serverNow();
    bool probe();
    void tryConnect();
    void closeConnection();
    void connectionLost(const QString &reason);
    void scheduleReconnect(const QString &reason);
    void onNotification(const QString &name);
    void healthCheck();
    void setState(ConnectionState state, const QString &message);

    core::ConnInfo m_info;
    StoreClientOptions m_options;
    QString m_connectionName;
    QSqlDatabase m_db;
    ConnectionState m_state = ConnectionState::Disconnected;
    QString m_stateMessage;
    bool m_everConnected = false;
    std::chrono::milliseconds m_backoff;
    QTimer *m_reconnectTimer;
    QTimer *m_debounceTimer;
    QTimer *m_healthTimer;
};

} // namespace outbox::console
