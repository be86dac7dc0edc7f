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

QString actionPastTense(store::Action action) {
    switch (action) {
    case store::Action::RetryNow:
        return BulkJob::tr("retried");
    case store::Action::Requeue:
        return BulkJob::tr("requeued");
    case store::Action::Cancel:
        return BulkJob::tr("cancelled");
    case store::Action::Purge:
        return BulkJob::tr("purged");
    case store::Action::Replay:
        return BulkJob::tr("replayed");
    }
    return store::actionName(action);
}

QString actionOutcome(store::Action action, qint64 done, qint64 of, qint64 skipped, bool stopped) {
    const QString past = actionPastTense(action);
    const QString events = of == 1 ? BulkJob::tr("event") : BulkJob::tr("events");
    QString text =
        done == of && skipped == 0
            ? BulkJob::tr("%1 %2 %3").arg(past, formatCount(done), events)
            : BulkJob::tr("%1 %2 of %3 %4").arg(past, formatCount(done), formatCount(of), events);
    if (skipped > 0) {
        text += BulkJob::tr("; %1 had changed state meanwhile").arg(formatCount(skipped));
    }
    return stopped ? BulkJob::tr("Stopped: %1").arg(text) : text.at(0).toUpper() + text.mid(1);
}

} // namespace outbox::console
