#pragma once

#include "core/result.h"

#include <QObject>
#include <QPointer>

#include <atomic>
#include <functional>
#include <memory>

namespace outbox::console {

class BackgroundJob;

// State shared between a job (GUI thread) and the pool thread running it.
// Only the atomic is touched from the pool thread; `job` is read and written
// in the GUI thread only.
struct JobControl {
    std::atomic<bool> cancelRequested{false};
    QPointer<BackgroundJob> job;
};

// What every job run on a pool thread by the StoreClient shares (BulkJob,
// ExportJob): a cancellation flag the pool thread polls, the running state and
// the last progress. Deleting a running job requests cancellation.
class BackgroundJob : public QObject {
    Q_OBJECT

public:
    ~BackgroundJob() override;
    Q_DISABLE_COPY_MOVE(BackgroundJob)

    bool isRunning() const { return m_running; }
    qint64 done() const { return m_done; }
    qint64 total() const { return m_total; }

    // Thread-safe; the job stops after its current batch or page.
    void cancel();
    bool isCancelRequested() const;

Q_SIGNALS:
    void progress(qint64 done, qint64 total);
    void failed(const outbox::core::Error &error);

protected:
    explicit BackgroundJob(QObject *parent);

    // Called in the GUI thread when the pool thread reports.
    void reportProgress(qint64 done, qint64 total);
    // Called by the subclass once the result is in, before it emits it.
    void stopRunning() { m_running = false; }
    void setDone(qint64 done) { m_done = done; }

private:
    friend class StoreClient;

    std::shared_ptr<JobControl> m_control;
    bool m_running = true;
    qint64 m_done = 0;
    qint64 m_total = 0;
};

// The progress callback a store operation polls from the pool thread: passes
// the progress on and asks the operation to stop once the job is cancelled.
std::function<bool(qint64 done, qint64 total)>
progressUntilCancelled(std::shared_ptr<JobControl> control,
                       std::function<void(qint64 done, qint64 total)> report);

} // namespace outbox::console
