#pragma once

#include "bench/benchmark.h"
#include "bench/harness.h"
#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "core/result.h"
#include "dispatch/dispatcher.h"
#include "dispatch/dispatcherstats.h"

#include <QList>
#include <QProcess>
#include <QString>
#include <QUrl>

#include <functional>
#include <memory>

namespace outbox::bench {

struct DeliverySample {
    double seconds = 0; // since the dispatcher reported started()
    qint64 delivered = 0;
};

struct DispatchRun {
    double seconds = 0; // started() until `target` events were delivered
    QList<DeliverySample> samples;
    double rssMbStart = 0;
    double rssMbMax = 0;
    double rssMbEnd = 0;
    dispatch::DispatcherStats stats; // the last snapshot
};

struct DispatchPlan {
    core::ConnInfo connInfo;
    core::DispatcherConfig config;
    dispatch::PublisherFactory publisherFactory; // empty = HTTP
    dispatch::DispatcherOptions options;
    qint64 target = 0;               // stop once this many were delivered
    std::function<void()> onStarted; // e.g. start a producer (called in this thread)
};

// Runs a dispatcher (DispatcherHost: its own thread and connections) until
// `target` events are delivered, then stops it gracefully, sampling the
// delivered count and RSS every 100 ms. Fails after 30 minutes, or after a
// minute without a delivery. Runs an event loop in the calling thread.
core::Result<DispatchRun> runDispatcher(const DispatchPlan &plan);

struct HttpCeiling {
    double requestsPerSecond = 0;
    int managers = 0;
    qint64 failures = 0; // non-2xx answers or transport errors
};

// The HTTP ceiling: QNetworkAccessManagers posting signed webhook requests
// (the same headers, attributes and body size as the dispatcher's
// HttpPublisher, and the same pool of one manager per 6 connections) to the
// runner with `concurrency` requests in flight, no database. Runs its own
// event loop in the calling thread.
core::Result<HttpCeiling> measureHttpCeiling(const QUrl &url, const QString &secret, int requests,
                                             int concurrency, int payloadBytes);

struct RunnerCounts {
    qint64 duplicates = 0;
    qint64 badSignatures = 0;
};

// The development runner the HTTP phases post to: a child `outboxctl runner`
// process. It verifies signatures with a secret made up for the run.
class BenchRunner final {
public:
    BenchRunner();
    ~BenchRunner();
    Q_DISABLE_COPY_MOVE(BenchRunner)

    // Starts this program (outboxctl) as the runner, in a process of its
    // own: its CPU work is then not counted in the dispatcher's process.
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

} // namespace outbox::bench
