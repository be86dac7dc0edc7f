#include "console/model/storeclient.h"

#include "console/model/storeworker.h"
#include "store/session.h"

#include <QPointer>
#include <QTimer>

namespace outbox::console {

namespace {

// Pauses shorter than this are not worth a timer.
constexpr qint64 kMinPauseMs = 20;

StoreClientOptions aggregateOptions(StoreClientOptions options) {
    options.listen = false;
    return options;
}

} // namespace

StoreClient::StoreClient(core::ConnInfo info, StoreClientOptions options, QObject *parent)
    : QObject(parent)
    , m_info(options.readOnly ? store::readOnlySession(std::move(info)) : std::move(info))
    , m_options(std::move(options))
    , m_worker(new StoreWorker(m_info, m_options))
    , m_aggregateWorker(new StoreWorker(m_info, aggregateOptions(m_options))) {
    m_thread.setObjectName(QStringLiteral("console-store"));
    m_aggregateThread.setObjectName(QStringLiteral("console-aggregates"));
    m_bulkPool.setObjectName(QStringLiteral("console-bulk"));
    // Background jobs run side by side (each with its own connection); a
    // dry run is never queued behind two long redrives.
    m_bulkPool.setMaxThreadCount(6);
    m_worker->moveToThread(&m_thread);
    m_aggregateWorker->moveToThread(&m_aggregateThread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(&m_aggregateThread, &QThread::finished, m_aggregateWorker, &QObject::deleteLater);

    connect(m_worker, &StoreWorker::gaveUp, this,
            [this](core::ErrorKind kind) { m_gaveUpFor = kind; });
    connect(m_worker, &StoreWorker::connectionStateChanged, this, &StoreClient::onWorkerState);
    connect(m_worker, &StoreWorker::changed, this, &StoreClient::changed);
    wireResults(m_worker);
    wireResults(m_aggregateWorker);
    m_thread.start();
    m_aggregateThread.start();
}

template <typename Value>
void StoreClient::forward(StoreWorker *worker, void (StoreWorker::*from)(RequestId, const Value &),
                          void (StoreClient::*to)(RequestId, const Value &)) {
    connect(worker, from, this, [this, to](RequestId id, const Value &value) {
        if (const auto as = settle(id)) {
            (this->*to)(*as, value); // emits the signal `to`
        }
    });
}

void StoreClient::wireResults(StoreWorker *worker) {
    forward(worker, &StoreWorker::countsReady, &StoreClient::countsReady);
    forward(worker, &StoreWorker::pageReady, &StoreClient::pageReady);
    forward(worker, &StoreWorker::detailReady, &StoreClient::detailReady);
    forward(worker, &StoreWorker::errorGroupsReady, &StoreClient::errorGroupsReady);
    forward(worker, &StoreWorker::privilegesReady, &StoreClient::privilegesReady);
    forward(worker, &StoreWorker::serverInfoReady, &StoreClient::serverInfoReady);
    forward(worker, &StoreWorker::historyReady, &StoreClient::historyReady);
    connect(worker, &StoreWorker::requestFailed, this,
            [this](RequestId id, RequestKind kind, const core::Error &error) {
                if (const auto as = settle(id)) {
                    Q_EMIT requestFailed(*as, kind, error);
                }
            });
}

StoreWorker *StoreClient::workerFor(RequestKind kind) const {
    return kind == RequestKind::Counts || kind == RequestKind::ErrorGroups ? m_aggregateWorker
                                                                           : m_worker;
}

StoreClient::~StoreClient() {
    for (const auto &control : std::as_const(m_jobControls)) {
        control->cancelRequested.store(true);
    }
    m_bulkPool.waitForDone();
    m_thread.quit();
    m_aggregateThread.quit();
    m_thread.wait();
    m_aggregateThread.wait();
}

void StoreClient::start() {
    m_state = ConnectionState::Connecting;
    QMetaObject::invokeMethod(m_worker, &StoreWorker::open, Qt::QueuedConnection);
    QMetaObject::invokeMethod(m_aggregateWorker, &StoreWorker::open, Qt::QueuedConnection);
}

void StoreClient::reconnectNow() {
    QMetaObject::invokeMethod(m_worker, &StoreWorker::reconnectNow, Qt::QueuedConnection);
    QMetaObject::invokeMethod(m_aggregateWorker, &StoreWorker::reconnectNow, Qt::QueuedConnection);
}

void StoreClient::onWorkerState(ConnectionState state, const QString &message) {
    if (state == ConnectionState::Connected) {
        // The server is back: the aggregate worker must not wait out its own
        // backoff. Posted before the state is announced, so it runs before
        // any request made in reaction to it.
        QMetaObject::invokeMethod(m_aggregateWorker, &StoreWorker::connectIfDown,
                                  Qt::QueuedConnection);
    }
    m_state = state;
    m_stateMessage = message;
    // The worker sends why it gave up right before the state it leads to.
    m_needsPassword = state == ConnectionState::Disconnected &&
                      m_gaveUpFor == core::ErrorKind::AuthenticationFailed;
    m_gaveUpFor.reset();
    Q_EMIT connectionStateChanged(state, message);
}

RequestId StoreClient::submit(RequestKind kind, const QString &supersedeKey,
                              std::function<void(StoreWorker *, RequestId)> call,
                              const QString &question) {
    const RequestId id = m_nextId++;
    Q_EMIT requestMade(id, kind);
    if (m_state == ConnectionState::Reconnecting || m_state == ConnectionState::Disconnected) {
        // Fail fast, but still asynchronously, so callers see one code path.
        const core::Error error{core::ErrorKind::Unavailable,
                                QStringLiteral("Cannot load %1: the database is not connected (%2)")
                                    .arg(requestKindName(kind), m_stateMessage.isEmpty()
                                                                    ? QStringLiteral("not started")
                                                                    : m_stateMessage)};
        QMetaObject::invokeMethod(
            this, [this, id, kind, error] { Q_EMIT requestFailed(id, kind, error); },
            Qt::QueuedConnection);
        return id;
    }
    auto send = [this, id, kind, call = std::move(call)] {
        StoreWorker *worker = workerFor(kind);
        QMetaObject::invokeMethod(
            worker, [worker, id, call] { call(worker, id); }, Qt::QueuedConnection);
    };
    if (supersedeKey.isEmpty()) {
        send();
        return id;
    }
    Lane &lane = m_lanes[supersedeKey];
    lane.latest = id;
    lane.latestQuestion = question;
    if (lane.inFlight == 0) {
        lane.inFlight = id;
        lane.sent.start();
        m_laneOf.insert(id, supersedeKey);
        m_questionOf.insert(id, question);
        send();
    } else {
        // Replaces (and so drops) any request that was already waiting.
        lane.waiting = [this, id, supersedeKey, question, send] {
            m_lanes[supersedeKey].sent.start();
            m_laneOf.insert(id, supersedeKey);
            m_questionOf.insert(id, question);
            send();
        };
    }
    return id;
}

std::optional<RequestId> StoreClient::settle(RequestId id) {
    const auto it = m_laneOf.constFind(id);
    if (it == m_laneOf.cend()) {
        return id; // not in a lane
    }
    const QString key = *it;
    m_laneOf.erase(it);
    const QString question = m_questionOf.take(id);
    Lane &lane = m_lanes[key];
    std::optional<RequestId> deliverAs;
    if (lane.latest == id) {
        deliverAs = id;
    } else if (!question.isEmpty() && question == lane.latestQuestion) {
        // The newest request asks the same thing: this answer is a valid,
        // slightly older answer to it. Without this, requests arriving faster
        // than a slow query answers would never show anything.
        deliverAs = lane.latest;
    }
    const qint64 took = lane.sent.isValid() ? lane.sent.elapsed() : 0;
    lane.inFlight = 0;
    if (lane.waiting) {
        // Reserved until the waiting request goes: newer ones replace it.
        lane.inFlight = lane.latest;
        const qint64 pause = question.isEmpty() ? 0 : took;
        if (pause < kMinPauseMs) {
            auto next = std::move(lane.waiting);
            lane.waiting = nullptr;
            next();
        } else {
            QTimer::singleShot(pause, this, [this, key] {
                const auto found = m_lanes.find(key);
                if (found == m_lanes.end() || !found->waiting) {
                    return;
                }
                auto next = std::move(found->waiting);
                found->waiting = nullptr;
                found->inFlight = found->latest;
                next();
            });
        }
    } else if (lane.latest == id) {
        m_lanes.remove(key);
    }
    return deliverAs;
}

RequestId StoreClient::requestCounts(const QString &supersedeKey, qint64 exactCap) {
    return submit(
        RequestKind::Counts, supersedeKey,
        [exactCap](StoreWorker *w, RequestId id) { w->counts(id, exactCap); },
        QStringLiteral("counts/%1").arg(exactCap));
}

RequestId StoreClient::requestPage(const store::PageRequest &request, const QString &supersedeKey) {
    return submit(RequestKind::Page, supersedeKey,
                  [request](StoreWorker *w, RequestId id) { w->page(id, request); });
}

RequestId StoreClient::requestDetail(const QUuid &eventId, const QString &supersedeKey) {
    return submit(RequestKind::Detail, supersedeKey,
                  [eventId](StoreWorker *w, RequestId id) { w->detail(id, eventId); });
}

RequestId StoreClient::requestErrorGroups(const store::EventFilter &filter, int limit,
                                          const QString &supersedeKey) {
    return submit(
        RequestKind::ErrorGroups, supersedeKey,
        [filter, limit](StoreWorker *w, RequestId id) { w->errorGroups(id, filter, limit); },
        QStringLiteral("error-groups/%1/").arg(limit) + filter.key());
}

RequestId StoreClient::requestPrivileges() {
    return submit(RequestKind::Privileges, {},
                  [](StoreWorker *w, RequestId id) { w->privileges(id); });
}

RequestId StoreClient::requestServerInfo() {
    return submit(RequestKind::ServerInfo, {},
                  [](StoreWorker *w, RequestId id) { w->serverInfo(id); });
}

RequestId StoreClient::requestHistory(int minutes, const QString &supersedeKey) {
    return submit(
        RequestKind::History, supersedeKey,
        [minutes](StoreWorker *w, RequestId id) { w->history(id, minutes); },
        QStringLiteral("history/%1").arg(minutes));
}

template <typename Job, typename Task> void StoreClient::startJob(Job *job, Task task) {
    const auto control = job->m_control;
    // Drop controls of jobs that are over; keep the list short.
    m_jobControls.removeIf([](const auto &c) { return c->job.isNull(); });
    m_jobControls.append(control);
    task.control = control;
    // The pool thread posts to this client, which outlives every task (its
    // destructor waits for the pool); the job itself may be gone by then.
    task.reportProgress = [this, control](qint64 done, qint64 total) {
        QMetaObject::invokeMethod(
            this,
            [control, done, total] {
                if (BackgroundJob *j = control->job.data()) {
                    j->reportProgress(done, total);
                }
            },
            Qt::QueuedConnection);
    };
    task.reportResult = [this, control](const auto &result) {
        QMetaObject::invokeMethod(
            this,
            [control, result] {
                if (BackgroundJob *j = control->job.data()) {
                    static_cast<Job *>(j)->reportResult(result);
                }
            },
            Qt::QueuedConnection);
    };
    m_bulkPool.start([task = std::move(task)] { task.run(); });
}

BulkJob *StoreClient::startBulk(store::Action action, const store::EventFilter &filter,
                                store::BulkOptions options) {
    const RequestId id = m_nextId++;
    auto *job = new BulkJob(id, action, filter, options.dryRun, this);
    options.progress = nullptr;
    BulkTask task;
    task.connInfo = m_info;
    task.actor = store::Actor::fromEnvironment(m_options.application);
    task.action = action;
    task.filter = filter;
    task.options = std::move(options);
    startJob(job, std::move(task));
    return job;
}

ExportJob *StoreClient::startExport(const store::EventFilter &filter, const QString &path,
                                    std::function<QByteArray(const core::OutboxEvent &)> format,
                                    int pageSize) {
    auto *job = new ExportJob(filter, path, this);
    ExportTask task;
    task.connInfo = m_info;
    task.application = m_options.application;
    task.filter = filter;
    task.path = path;
    task.pageSize = pageSize;
    task.format = std::move(format);
    startJob(job, std::move(task));
    return job;
}

} // namespace outbox::console
