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

// A server in a child process, answering on a loopback URL once start()
// succeeded. stop(), and destruction, terminate it (killed if it has not
// exited within 5 s).
class SinkProcess {
public:
    virtual ~SinkProcess();
    Q_DISABLE_COPY_MOVE(SinkProcess)

    QUrl url() const { return m_url; }
    qint64 processId() const { return m_process ? m_process->processId() : 0; }
    virtual void stop();

protected:
    SinkProcess() = default;

    std::unique_ptr<QProcess> m_process;
    QUrl m_url;

private:
    void terminate();
};

// The development runner as a child process (outboxctl-runner, beside this
// program): it verifies signatures with a secret made up for the run and
// counts duplicates.
class RunnerProcess final : public SinkProcess {
public:
    RunnerProcess();

    core::Result<void> start();
    QString secret() const { return m_secret; }
    // Cumulative since start (compare before/after a phase).
    core::Result<RunnerCounts> counts();

private:
    QString m_secret;
};

// nginx (Debian's nginx-light) answering 204 to every request on a free port
// of 127.0.0.1: a server that costs next to nothing, for the client's own
// ceiling. Its prefix, configuration, logs and temporary files live in a
// directory of its own, removed by stop().
class NginxProcess final : public SinkProcess {
public:
    NginxProcess();
    ~NginxProcess() override;

    // Errors name what is missing (the nginx binary: install nginx-light)
    // or nginx's own message.
    core::Result<void> start();
    void stop() override;

private:
    std::unique_ptr<QTemporaryDir> m_dir;
};

} // namespace outbox::devtools
