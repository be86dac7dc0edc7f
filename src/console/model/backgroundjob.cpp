#include "console/model/backgroundjob.h"

namespace outbox::console {

BackgroundJob::BackgroundJob(QObject *parent)
    : QObject(parent)
    , m_control(std::make_shared<JobControl>()) {
    m_control->job = this;
}

BackgroundJob::~BackgroundJob() {
    if (m_running) {
        m_control->cancelRequested.store(true);
    }
}

void BackgroundJob::cancel() {
    m_control->cancelRequested.store(true);
}

bool BackgroundJob::isCancelRequested() const {
    return m_control->cancelRequested.load();
}

void BackgroundJob::reportProgress(qint64 done, qint64 total) {
    if (!m_running) {
        return;
    }
    m_done = done;
    m_total = total;
    Q_EMIT progress(done, total);
}

std::function<bool(qint64 done, qint64 total)>
progressUntilCancelled(std::shared_ptr<JobControl> control,
                       std::function<void(qint64 done, qint64 total)> report) {
    // Both captured by value: the callback outlives neither, but owns its copies.
    return [control = std::move(control), report = std::move(report)](qint64 done, qint64 total) {
        report(done, total);
        return !control->cancelRequested.load();
    };
}

} // namespace outbox::console
