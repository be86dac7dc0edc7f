#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "devtools/embeddedpostgres.h"
#include "store/benchqueries.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

// What both benchmarks stand on: a throwaway cluster with the outbox schema,
// and the clocks and meters of this process and machine.
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
// CPU time of the calling thread, nanoseconds.
qint64 threadCpuNs();

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
    // The postmaster's process id (first line of postmaster.pid), 0 if unknown.
    qint64 serverProcessId() const;

private:
    devtools::EmbeddedPostgres m_cluster;
    core::ConnInfo m_connInfo;
    QString m_connectionName;
    QSqlDatabase m_db;
    store::BenchQueries m_sql;
    QString m_serverVersion;
};

} // namespace outbox::bench
