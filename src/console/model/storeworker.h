#pragma once

#include "console/model/consoletypes.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "store/errorgroups.h"
#include "store/eventfilter.h"
#include "store/historystore.h"
#include "store/livecounts.h"
#include "store/queries.h"
#include "store/sessionkeeper.h"

#include <QObject>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::console {

// The console's database side. Lives in its own QThread (see StoreClient,
// which owns the thread and is the only thing that talks to it) and keeps one
// store session opened in that thread (store::SessionKeeper). Every request
// runs here, so the GUI thread never waits on PostgreSQL; results leave as
// value snapshots by signal, never as queries or models.
//
// The same connection LISTENs on the outbox's channel; notifications are
// folded into one debounced changed(). A lost connection (noticed by a
// failing request or by the periodic health check) is reported and re-opened
// with backoff; requests meanwhile fail at once with an Unavailable error.
class StoreWorker final : public QObject {
    Q_OBJECT

public:
    StoreWorker(core::ConnInfo info, StoreClientOptions options);
    ~StoreWorker() override;
    Q_DISABLE_COPY_MOVE(StoreWorker)

    // Everything below must run in the worker's thread.
    void open();          // first connection attempt
    void reconnectNow();  // skip the remaining backoff
    void connectIfDown(); // reconnectNow(), unless connected
    void counts(RequestId id, qint64 exactCap);
    void page(RequestId id, const store::PageRequest &request);
    void detail(RequestId id, const QUuid &eventId);
    void errorGroups(RequestId id, const store::EventFilter &filter, int limit);
    void privileges(RequestId id);
    void serverInfo(RequestId id);
    void history(RequestId id, int minutes);

Q_SIGNALS:
    void connectionStateChanged(outbox::console::ConnectionState state, const QString &message);
    // Just before the Disconnected state of a connect that retrying cannot
    // fix: why, as the store classified it.
    void gaveUp(outbox::core::ErrorKind kind);
    void changed();
    void countsReady(outbox::console::RequestId id, const outbox::store::StatusCounts &counts);
    void pageReady(outbox::console::RequestId id, const outbox::console::PageResult &result);
    void detailReady(outbox::console::RequestId id, const outbox::store::EventDetail &detail);
    void errorGroupsReady(outbox::console::RequestId id,
                          const outbox::console::ErrorGroupsResult &result);
    void privilegesReady(outbox::console::RequestId id,
                         const outbox::store::Privileges &privileges);
    void serverInfoReady(outbox::console::RequestId id, const outbox::store::ServerInfo &info);
    void historyReady(outbox::console::RequestId id,
                      const outbox::store::ThroughputHistory &history);
    void requestFailed(outbox::console::RequestId id, outbox::console::RequestKind kind,
                       const outbox::core::Error &error);

private:
    bool ensureConnected(RequestId id, RequestKind kind);
    // Asks `ask` (EventQueries on the session) and emits its answer by
    // `ready`, or requestFailed.
    template <typename T, typename Ask>
    void answer(RequestId id, RequestKind kind, Ask &&ask,
                void (StoreWorker::*ready)(RequestId, const T &));
    void fail(RequestId id, RequestKind kind, const core::Error &error);
    void onRetrying(const QString &reason, core::Millis delay);
    void setState(ConnectionState state, const QString &message);

    core::ConnInfo m_info; // as given: for the messages
    // The listening worker is the console's connection in the log; the
    // aggregate worker's state follows it and is not logged twice.
    bool m_logConnection;
    ConnectionState m_state = ConnectionState::Disconnected;
    QString m_stateMessage;
    store::SessionKeeper m_keeper;
    // Counts remember their last breakdown per namespace/topic (see LiveCounts).
    std::optional<store::LiveCounts> m_liveCounts;
    // Error groups are grouped again only when the table changed (see
    // ErrorGroupWatch): an idle console's refreshes cost a counter read.
    std::optional<store::ErrorGroupWatch> m_errorGroups;
};

} // namespace outbox::console
