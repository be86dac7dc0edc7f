#pragma once

#include "bench/benchmark.h"
#include "core/result.h"

#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <QThread>
#include <QUrl>

#include <memory>

namespace outbox::devtools {
class DevRunner;
}

namespace outbox::bench {

struct RunnerCounts {
    qint64 received = 0;
    qint64 delivered = 0;
    qint64 duplicates = 0;
    qint64 unique = 0;
    qint64 badSignatures = 0;
};

// The development runner the HTTP phases post to: a child `outboxctl runner`
// process, or a DevRunner in its own thread of this process. It verifies
// signatures with a secret made up for the run.
class BenchRunner final {
public:
    BenchRunner();
    ~BenchRunner();
    Q_DISABLE_COPY_MOVE(BenchRunner)

    core::Result<void> start(RunnerPlacement placement, const QString &program);
    QUrl url() const { return m_url; }
    QString secret() const { return m_secret; }
    // The runner's process, 0 when it runs in a thread of this one.
    qint64 processId() const;
    // Cumulative since start (compare before/after a phase).
    core::Result<RunnerCounts> counts();
    void stop();

private:
    core::Result<void> startProcess(const QString &program);
    core::Result<void> startThread();

    QString m_secret;
    QUrl m_url;
    QTemporaryDir m_dir;
    std::unique_ptr<QProcess> m_process;
    QThread m_thread;
    devtools::DevRunner *m_runner = nullptr; // lives in m_thread
};

} // namespace outbox::bench
