#pragma once

#include "console/model/backgroundjob.h"
#include "console/model/consoletypes.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "store/eventfilter.h"
#include "store/operations.h"

#include <functional>
#include <memory>

namespace outbox::console {

// One operator bulk action (retry, requeue, cancel, purge, replay) running on
// a pool thread with its own connection, so the store worker keeps serving
// the live views (and their counts show the progress) meanwhile. Made by
// StoreClient::startBulk(); parented to the client unless reparented.
// Deleting a running job requests cancellation; the action then stops after
// its current batch (each batch is its own transaction, so nothing is left
// half-done).
class BulkJob final : public BackgroundJob {
    Q_OBJECT

public:
    ~BulkJob() override = default;
    Q_DISABLE_COPY_MOVE(BulkJob)

    RequestId id() const { return m_id; }
    store::Action action() const { return m_action; }
    const store::EventFilter &filter() const { return m_filter; }
    bool dryRun() const { return m_dryRun; }

    // cancel() makes the job finish with BulkResult::cancelled set.

Q_SIGNALS:
    void finished(const outbox::store::BulkResult &result);

private:
    friend class StoreClient;
    BulkJob(RequestId id, store::Action action, store::EventFilter filter, bool dryRun,
            QObject *parent);

    // Called in the GUI thread by the client when the pool thread reports.
    void reportResult(const core::Result<store::BulkResult> &result);

    RequestId m_id;
    store::Action m_action;
    store::EventFilter m_filter;
    bool m_dryRun;
};

// The body of a bulk job, run on a pool thread: opens a private connection,
// runs the action with progress and cancellation, closes the connection.
// `report*` are called from that pool thread.
struct BulkTask {
    core::ConnInfo connInfo;
    store::Actor actor;
    store::Action action = store::Action::Requeue;
    store::EventFilter filter;
    store::BulkOptions options;
    std::shared_ptr<JobControl> control;
    std::function<void(qint64 done, qint64 total)> reportProgress;
    std::function<void(const core::Result<store::BulkResult> &result)> reportResult;

    void run() const;
};

} // namespace outbox::console
