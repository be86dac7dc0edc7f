#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "core/result.h"
#include "devtools/embeddedpostgres.h"
#include "store/benchqueries.h"

#include <QJsonObject>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QtGlobal>

#include <atomic>
#include <thread>

// What both benchmarks stand on: a throwaway cluster with the outbox schema,
// a producer, and the clocks and meters of this process and machine.
namespace outbox::bench {

core::Error failure(const QString &message);

// Resident memory of this process in MB (VmRSS), and its high-water mark
// (VmHWM); 0 when /proc is not available.
double residentMb();
double peakResidentMb();
// /proc/loadavg's first three figures: how busy the machine was.
QString loadAverage();
QString cpuModel();
// CLOCK_MONOTONIC in nanoseconds: the same clock in every process.
qint64 steadyNowNs();

double median(QList<double> values);
// Nearest-rank percentile (q in [0, 1]); -1 when empty.
double percentile(QList<double> samples, double q);

// The cluster (unix socket only), migrated, with one connection for
// loading and checking, used in the thread that started it.
class BenchCluster final {
public:
    BenchCluster();
    ~BenchCluster();
    Q_DISABLE_COPY_MOVE(BenchCluster)

    core::Result<void> start(const devtools::EmbeddedPostgres::Options &options);
    core::ConnInfo connInfo() const { return m_connInfo; }
    store::BenchQueries &sql() { return m_sql; }
    QString serverVersion() const { return m_serverVersion; }

private:
    devtools::EmbeddedPostgres m_cluster;
    core::ConnInfo m_connInfo;
    QString m_connectionName;
    QSqlDatabase m_db;
    store::BenchQueries m_sql;
    QString m_serverVersion;
};

// Enqueues events through outbox_enqueue() as an application would: every
// `interval` one transaction with `batch.events` events, from a thread and
// connection of its own (never the GUI thread's, never the dispatcher's).
// Its commits are what make the dispatcher's and the console's LISTEN fire.
class Producer final {
public:
    Producer(core::ConnInfo info, store::ProduceBatch batch, core::Millis interval,
             qint64 limit = -1)
        : m_info(std::move(info))
        , m_batch(std::move(batch))
        , m_interval(interval)
        , m_limit(limit) {}
    ~Producer() { stop(); }
    Q_DISABLE_COPY_MOVE(Producer)

    void start();
    void stop();
    qint64 produced() const { return m_produced.load(); }
    // The events committed and the first error; read after stop().
    const QList<store::ProducedEvent> &events() const { return m_events; }
    const QString &lastError() const { return m_lastError; }

private:
    void run();

    core::ConnInfo m_info;
    store::ProduceBatch m_batch;
    core::Millis m_interval;
    qint64 m_limit; // events in all; -1 = until stopped
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::atomic<qint64> m_produced{0};
    QList<store::ProducedEvent> m_events;
    QString m_lastError;
};

} // namespace outbox::bench
