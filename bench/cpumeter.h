#pragma once

#include <QJsonObject>
#include <QtGlobal>

// Where the CPU time of a benchmark phase went: the machine as a whole
// (/proc/stat), this process, and the runner's process when it has its own.
// The rest of the busy time is PostgreSQL (and anything else running).
namespace outbox::bench {

struct CpuSnapshot {
    qint64 busyTicks = 0;  // user, nice, system, irq, softirq of every CPU
    qint64 idleTicks = 0;  // idle and iowait
    qint64 stealTicks = 0; // taken by the hypervisor
    qint64 selfTicks = 0;  // this process, all threads
    qint64 runnerTicks = 0;
    qint64 atNs = 0; // monotonic clock
};

struct CpuUsage {
    bool valid = false; // false where /proc is not available
    double seconds = 0; // wall time between the two snapshots
    int cpus = 0;
    double busySeconds = 0; // CPU seconds, all CPUs
    double idleSeconds = 0;
    double stealSeconds = 0;
    double selfSeconds = 0;
    double runnerSeconds = 0;

    double busyFraction() const; // of the CPU time available (busy + idle + steal)
    double stealFraction() const;
    // Microseconds of CPU per event (request), by party.
    double totalPerEventUs(qint64 events) const;
    double selfPerEventUs(qint64 events) const;
    double runnerPerEventUs(qint64 events) const;
    double restPerEventUs(qint64 events) const; // PostgreSQL and everything else
    QJsonObject json(qint64 events) const;
};

class CpuMeter final {
public:
    // runnerPid: the runner's process, 0 when it runs inside this one.
    explicit CpuMeter(qint64 runnerPid = 0);
    CpuSnapshot sample() const;
    CpuUsage between(const CpuSnapshot &from, const CpuSnapshot &to) const;

private:
    qint64 m_runnerPid = 0;
    double m_tickSeconds = 0.01;
    int m_cpus = 1;
};

} // namespace outbox::bench
