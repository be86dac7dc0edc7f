#pragma once

#include "console/model/bulkjob.h"
#include "console/model/consoletypes.h"
#include "console/model/exportjob.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "store/eventfilter.h"
#include "store/historystore.h"
#include "store/operations.h"
#include "store/queries.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QThread>
#include <QThreadPool>
#include <QUuid>

#include <functional>
#include <optional>

namespace outbox::console {

class StoreWorker;

// The GUI thread's handle on the database. Owns the worker thread and the
// StoreWorker in it (quits and waits on destruction), and a small pool for
// bulk jobs. Every request returns at once with an id; the answer arrives
// later as one of the *Ready signals or requestFailed, with the same id.
//
// Superseding: requests that share a non-empty `supersedeKey` (e.g. one key
// per view) form a lane in which only the newest request's answer is
// delivered; older answers are dropped silently. A lane also keeps at most
// one request in flight and one waiting, so a slow database never piles up
// refreshes in the worker's queue.
//
// While the connection is down (Reconnecting/Disconnected) requests fail at
// once with an Unavailable error instead of waiting for the reconnect.
//
// Two workers, each with its own thread and connection: counts and error
// groups (aggregates that read many rows and may take a second on a large
// table) run on the second one, so a page or a detail never queues behind
// them. The first worker alone LISTENs and reports the connection state.
//
// Pacing: in a lane of repeated questions (counts, error groups), the next
// request waits as long as the previous one took, so a console on a big,
// busy table spends at most half of a database core on its aggregates.
class StoreClient final : public QObject {
    Q_OBJECT

public:
    explicit StoreClient(core::ConnInfo info, StoreClientOptions options = {},
                         QObject *parent = nullptr);
    ~StoreClient() override;
    Q_DISABLE_COPY_MOVE(StoreClient)

    // Opens the connection (asynchronously); watch connectionStateChanged.
    void start();
    // Skip the reconnect backoff (a "Retry now" button).
    void reconnectNow();

    ConnectionState connectionState() const { return m_state; }
    // Disconnected because the server refused the login's password or
    // wanted one (the store's classification of its error code, whatever
    // the language of its message): ask for a password.
    bool needsPassword() const { return m_needsPassword; }
    // Connection description without the password, for the UI.
    QString connectionDescription() const { return m_info.redacted(); }
    const core::ConnInfo &connInfo() const { return m_info; }

    // Delivered and dead are exact up to `exactCap` (see store::LiveCounts).
    RequestId requestCounts(const QString &supersedeKey = {}, qint64 exactCap = 10000);
    RequestId requestPage(const store::PageRequest &request, const QString &supersedeKey = {});
    RequestId requestDetail(const QUuid &eventId, const QString &supersedeKey = {});
    RequestId requestErrorGroups(const store::EventFilter &filter, int limit = 50,
                                 const QString &supersedeKey = {});
    RequestId requestPrivileges();
    RequestId requestServerInfo();
    // The dispatchers' throughput and backlog history of the last `minutes`.
    RequestId requestHistory(int minutes = 60, const QString &supersedeKey = {});

    // Starts an operator action on a pool thread. The returned job is
    // parented to this client; connect to its signals right away (they are
    // delivered through the event loop, never before this returns).
    // options.progress is ignored: use BulkJob::progress.
    BulkJob *startBulk(store::Action action, const store::EventFilter &filter,
                       store::BulkOptions options = {});
    // Writes every event matching `filter` to `path` as lines of `format`,
    // on a pool thread like startBulk (see ExportJob).
    ExportJob *startExport(const store::EventFilter &filter, const QString &path,
                           std::function<QByteArray(const core::OutboxEvent &)> format,
                           int pageSize = 1000);

Q_SIGNALS:
    void connectionStateChanged(outbox::console::ConnectionState state, const QString &message);
    // Something changed in the outbox (debounced LISTEN/NOTIFY, or a
    // reconnect): views should refresh.
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
    // Every request as it is made, before a lane holds it back or drops it:
    // what the console asks of the database, and how often.
    void requestMade(outbox::console::RequestId id, outbox::console::RequestKind kind);

private:
    struct Lane {
        RequestId inFlight = 0;
        RequestId latest = 0;
        QString latestQuestion;
        std::function<void()> waiting;
        QElapsedTimer sent; // when the request in flight was sent
    };

    // `question` (optional) names what is asked: in a lane, an older answer
    // to the same question is delivered as the answer to the newest request.
    RequestId submit(RequestKind kind, const QString &supersedeKey,
                     std::function<void(StoreWorker *, RequestId)> call,
                     const QString &question = {});
    // The id to deliver the answer for `id` as, or nothing when it is stale;
    // starts a waiting request of the same lane.
    std::optional<RequestId> settle(RequestId id);
    void onWorkerState(ConnectionState state, const QString &message);
    void wireResults(StoreWorker *worker);
    // Re-emits a worker's answer signal as this client's, settled.
    template <typename Value>
    void forward(StoreWorker *worker, void (StoreWorker::*from)(RequestId, const Value &),
                 void (StoreClient::*to)(RequestId, const Value &));
    StoreWorker *workerFor(RequestKind kind) const;
    // Runs a job's task on the pool, its reports posted back to the job.
    template <typename Job, typename Task> void startJob(Job *job, Task task);

    core::ConnInfo m_info;
    StoreClientOptions m_options;
    QThread m_thread;
    StoreWorker *m_worker; // lives in m_thread; deleted there when it finishes
    QThread m_aggregateThread;
    StoreWorker *m_aggregateWorker; // counts and error groups; in m_aggregateThread
    QThreadPool m_bulkPool;
    ConnectionState m_state = ConnectionState::Disconnected;
    QString m_stateMessage;
    std::optional<core::ErrorKind> m_gaveUpFor; // from the worker, for the next state
    bool m_needsPassword = false;
    RequestId m_nextId = 1;
    QHash<QString, Lane> m_lanes;
    QHash<RequestId, QString> m_laneOf; // requests sent in a lane and not yet answered
    QHash<RequestId, QString> m_questionOf;
    QList<std::shared_ptr<JobControl>> m_jobControls; // of bulk and export jobs
};

} // namespace outbox::console
