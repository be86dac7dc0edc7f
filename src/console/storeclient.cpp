#include "console/storeclient.h"

#include "console/storeworker.h"

#include <QPointer>

namespace outbox::console {

StoreClient::StoreClient(core::ConnInfo info, StoreClientOptions options, QObject *parent)
    : QObject(parent)
    , m_info(std::move(info))
    , m_options(std::move(options))
    , m_worker(new StoreWorker(m_info, m_options)) {
    m_thread.setObjectName(QStringLiteral("console-store"));
    m_bulkPool.setObjectName(QStringLiteral("console-bulk"));
    m_bulkPool.setMaxThreadCount(2);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);

    connect(m_worker, &StoreWorker::connectionStateChanged, this, &StoreClient::onWorkerState);
    connect(m_worker, &StoreWorker::changed, this, &StoreClient::changed);
    connect(m_worker, &StoreWorker::countsReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT countsReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::pageReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT pageReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::detailReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT detailReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::errorGroupsReady, this,
            [this](RequestId id, const auto &value) {
                if (settle(id)) {
                    Q_EMIT errorGroupsReady(id, value);
                }
            });
    connect(m_worker, &StoreWorker::privilegesReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT privilegesReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::serverInfoReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT serverInfoReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::executeReady, this, [this](RequestId id, const auto &value) {
        if (settle(id)) {
            Q_EMIT executeReady(id, value);
        }
    });
    connect(m_worker, &StoreWorker::requestFailed, this,
            [this](RequestId id, RequestKind kind, const core::Error &error) {
                if (settle(id)) {
                    Q_EMIT requestFailed(id, kind, error);
                }
            });
    m_thread.start();
}

StoreClient::~StoreClient() {
    for (const auto &control : std::as_const(m_bulkControls)) {
        control->cancelRequested.store(true);
    }
    m_bulkPool.waitForDone();
    m_thread.quit();
    m_thread.wait();
}

void StoreClient::start() {
    m_state = ConnectionState::Connecting;
    QMetaObject::invokeMethod(m_worker, &StoreWorker::open, Qt::QueuedConnection);
}

void StoreClient::reconnectNow() {
    QMetaObject::invokeMethod(m_worker, &StoreWorker::reconnectNow, Qt::QueuedConnection);
}

void StoreClient::onWorkerState(ConnectionState state, const QString &message) {
    m_state = state;
    m_stateMessage = message;
    Q_EMIT connectionStateChanged(state, message);
}

RequestId StoreClient::submit(RequestKind kind, const QString &supersedeKey,
                              std::function<void(StoreWorker *, RequestId)> call) {
    const RequestId id = m_nextId++;
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
    auto send = [this, id, call = std::move(call)] {
        StoreWorker *worker = m_worker;
        QMetaObject::invokeMethod(
            worker, [worker, id, call] { call(worker, id); }, Qt::QueuedConnection);
    };
    if (supersedeKey.isEmpty()) {
        send();
        return id;
    }
    Lane &lane = m_lanes[supersedeKey];
    lane.latest = id;
    if (lane.inFlight == 0) {
        lane.inFlight = id;
        m_laneOf.insert(id, supersedeKey);
        send();
    } else {
        // Replaces (and so drops) any request that was already waiting.
        lane.waiting = [this, id, supersedeKey, send] {
            m_laneOf.insert(id, supersedeKey);
            send();
        };
    }
    return id;
}

bool StoreClient::settle(RequestId id) {
    const auto it = m_laneOf.constFind(id);
    if (it == m_laneOf.cend()) {
        return true; // not in a lane
    }
    const QString key = *it;
    m_laneOf.erase(it);
    Lane &lane = m_lanes[key];
    const bool current = lane.latest == id;
    lane.inFlight = 0;
    if (lane.waiting) {
        auto next = std::move(lane.waiting);
        lane.waiting = nullptr;
        lane.inFlight = lane.latest;
        next();
    } else if (current) {
        m_lanes.remove(key);
    }
    return current;
}

RequestId StoreClient::requestCounts(const QString &supersedeKey, qint64 exactDeliveredCap) {
    return submit(
        RequestKind::Counts, supersedeKey,
        [exactDeliveredCap](StoreWorker *w, RequestId id) { w->counts(id, exactDeliveredCap); });
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
        [filter, limit](StoreWorker *w, RequestId id) { w->errorGroups(id, filter, limit); });
}

RequestId StoreClient::requestPrivileges() {
    return submit(RequestKind::Privileges, {},
                  [](StoreWorker *w, RequestId id) { w->privileges(id); });
}

RequestId StoreClient::requestServerInfo() {
    return submit(RequestKind::ServerInfo, {},
                  [](StoreWorker *w, RequestId id) { w->serverInfo(id); });
}

RequestId StoreClient::requestExecute(const QString &sql, const QVariantList &values) {
    return submit(RequestKind::Execute, {},
                  [sql, values](StoreWorker *w, RequestId id) { w->execute(id, sql, values); });
}

BulkJob *StoreClient::startBulk(store::Action action, const store::EventFilter &filter,
                                store::BulkOptions options) {
    const RequestId id = m_nextId++;
    auto *job = new BulkJob(id, action, filter, options.dryRun, this);
    auto control = job->m_control;
    // Drop controls of jobs that are over; keep the list short.
    m_bulkControls.removeIf([](const auto &c) { return c->job.isNull(); });
    m_bulkControls.append(control);

    options.progress = nullptr;
    BulkTask task;
    task.connInfo = m_info;
    if (task.connInfo.option(QStringLiteral("application_name")).isEmpty()) {
        task.connInfo.setOption(QStringLiteral("application_name"), m_options.application);
    }
    task.actor = store::Actor::fromEnvironment(m_options.application);
    task.action = action;
    task.filter = filter;
    task.options = std::move(options);
    task.control = control;
    // The pool thread posts to this client, which outlives every task (its
    // destructor waits for the pool); the job itself may be gone by then.
    task.reportProgress = [this, control](qint64 done, qint64 total) {
        QMetaObject::invokeMethod(
            this,
            [control, done, total] {
                if (BulkJob *j = control->job.data()) {
                    j->reportProgress(done, total);
                }
            },
            Qt::QueuedConnection);
    };
    task.reportResult = [this, control, id](const core::Result<store::BulkResult> &result) {
        QMetaObject::invokeMethod(
            this,
            [this, control, id, result] {
                if (BulkJob *j = control->job.data()) {
                    j->reportResult(result);
                }
                if (result.ok()) {
                    Q_EMIT bulkFinished(id, result.value());
                }
            },
            Qt::QueuedConnection);
    };
    m_bulkPool.start([task = std::move(task)] { task.run(); });
    return job;
}

} // namespace outbox::console
