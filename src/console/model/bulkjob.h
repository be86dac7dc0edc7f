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

// The past tense of an action as an operator says it: "retried",
// "requeued", "cancelled", "purged", "replayed".
QString actionPastTense(store::Action action);

// What an action did, the one rule for every action's report (a selection's
// in the status bar, a job's in the jobs pane): "Replayed 1 event",
// "Requeued 3 of 5 events; 2 had changed state meanwhile", "Stopped:
// requeued 20 of 400 events". `of` is what was asked (the selection, or the
// confirmed set); `skipped` those left alone because someone changed them.
QString actionOutcome(store::Action action, qint64 done, qint64 of, qint64 skipped,
                      bool stopped = false);

} // namespace outbox::console
