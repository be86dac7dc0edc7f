#include "console/model/bulkjob.h"

#include "store/session.h"

namespace outbox::console {

BulkJob::BulkJob(RequestId id, store::Action action, store::EventFilter filter, bool dryRun,
                 QObject *parent)
    : QObject(parent)
    , m_control(std::make_shared<BulkJobControl>())
    , m_id(id)
    , m_action(action)
    , m_filter(std::move(filter))
    , m_dryRun(dryRun) {
    m_control->job = this;
}

BulkJob::~BulkJob() {
    if (m_running) {
        m_control->cancelRequested.store(true);
    }
}

void BulkJob::cancel() {
    m_control->cancelRequested.store(true);
}

bool BulkJob::isCancelRequested() const {
    return m_control->cancelRequested.load();
}

void BulkJob::reportProgress(qint64 done, qint64 total) {
    if (!m_running) {
        return;
    }
    m_done = done;
    m_total = total;
    Q_EMIT progress(done, total);
}

void BulkJob::reportResult(const core::Result<store::BulkResult> &result) {
    m_running = false;
    if (result.ok()) {
        m_done = result->changed + result->skipped;
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
        const auto flag = control; // keeps the flag alive inside the callback
        const auto progressSink = reportProgress;
        runOptions.progress = [flag, progressSink](qint64 done, qint64 total) {
            progressSink(done, total);
            return !flag->cancelRequested.load();
        };
        return operations.run(action, filter, runOptions);
    }();
    session.close();
    reportResult(result);
}

} // namespace outbox::console
