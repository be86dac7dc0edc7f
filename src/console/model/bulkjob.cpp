#include "console/model/bulkjob.h"

#include "store/session.h"

namespace outbox::console {

BulkJob::BulkJob(RequestId id, store::Action action, store::EventFilter filter, bool dryRun,
                 QObject *parent)
    : BackgroundJob(parent)
    , m_id(id)
    , m_action(action)
    , m_filter(std::move(filter))
    , m_dryRun(dryRun) {}

void BulkJob::reportResult(const core::Result<store::BulkResult> &result) {
    stopRunning();
    if (result.ok()) {
        setDone(result->changed + result->skipped);
        Q_EMIT finished(result.value());
    } else {
        Q_EMIT failed(result.error());
    }
}

void BulkTask::run() const {
    if (control->cancelRequested.load()) {
        // Cancelled while still queued: nothing was touched.
        store::BulkResult result;
        result.action = action;
        result.dryRun = options.dryRun;
        result.cancelled = true;
        reportResult(result);
        return;
    }
    store::Session session(connInfo, {.applicationName = actor.application});
    core::Result<store::BulkResult> result = [&]() -> core::Result<store::BulkResult> {
        if (auto opened = session.open(); !opened.ok()) {
            return opened.error();
        }
        store::OperatorStore operations(session, actor);
        store::BulkOptions runOptions = options;
        runOptions.progress = progressUntilCancelled(control, reportProgress);
        return operations.run(action, filter, runOptions);
    }();
    session.close();
    reportResult(result);
}

} // namespace outbox::console
