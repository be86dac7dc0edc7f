#pragma once

#include "core/result.h"

#include <QProcess>
#include <QString>
#include <QUrl>

#include <memory>

class QTemporaryDir;

// The HTTP servers a benchmark posts to, each in a process of its own: its
// CPU work is then not counted in the benchmark's process.
namespace outbox::devtools {

struct RunnerCounts {
    qint64 duplicates = 0;
    qint64 badSignatures = 0;
};

// The development runner as a child `outboxctl runner` (this program): it
// verifies signatures with a secret made up for the run and counts
// duplicates.
class RunnerProcess final {
public:
    RunnerProcess();
    ~RunnerProcess();
    Q_DISABLE_COPY_MOVE(RunnerProcess)

    core::Result<void> start();
    QUrl url() const { return m_url; }
    QString secret() const { return m_secret; }
    qint64 processId() const { return m_process ? m_process->processId() : 0; }
    // Cumulative since start (compare before/after a phase).
    core::Result<RunnerCounts> counts();
    void stop();

private:
    QString m_secret;
    QUrl m_url;
    std::unique_ptr<QProcess> m_process;
};

// nginx (Debian's nginx-light) answering 204 to every request on a free port
// of 127.0.0.1: a server that costs next to nothing, for the client's own
// ceiling. Its prefix, configuration, logs and temporary files live in a
// directory of its own, removed by stop().
class NginxProcess final {
public:
    NginxProcess();
    ~NginxProcess();
    Q_DISABLE_COPY_MOVE(NginxProcess)

    // Errors name what is missing (the nginx binary: install nginx-light)
    // or nginx's own message.
    core::Result<void> start();
    QUrl url() const { return m_url; }
    void stop();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QProcess> m_process;
    QUrl m_url;
};

} // namespace outbox::devtools
