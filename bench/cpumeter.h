#pragma once

#include <QtGlobal>

// Where the CPU time of a benchmark phase went: the machine as a whole
// (/proc/stat), this process, and the runner's process when it has its own.
// PostgreSQL (the postmaster and its children), and the rest of the busy
// time: anything else running on the machine.
namespace outbox::bench {

struct CpuSnapshot {
    qint64 busyTicks = 0;  // user, nice, system, irq, softirq of every CPU
    qint64 idleTicks = 0;  // idle and iowait
    qint64 stealTicks = 0; // taken by the hypervisor
    qint64 selfTicks = 0;  // this process, all threads
    qint64 runnerTicks = 0;
    qint64 databaseTicks = 0; // the postmaster, its children, and its reaped children
};

// Per event (request): microseconds of CPU by party, and how busy the
// machine was. Rates follow from these: events/s = busy fraction x CPUs /
// CPU per event.
struct CpuFigures {
    bool valid = false;
    double totalUs = 0;
    double selfUs = 0;     // this process: the client, or the dispatcher and its HTTP
    double runnerUs = 0;   // the runner's process (0 when it runs in this one)
    double databaseUs = 0; // PostgreSQL's processes
    double restUs = 0;     // anything else on the machine
    double busy = 0;       // fraction of the CPU time available
    double steal = 0;      // fraction taken by the hypervisor
};

// CPU seconds between two snapshots.
struct CpuUsage {
    bool valid = false;     // false where /proc is not available
    double busySeconds = 0; // all CPUs
    double idleSeconds = 0;
    double stealSeconds = 0;
    double selfSeconds = 0;
    double runnerSeconds = 0;
    double databaseSeconds = 0;

    CpuFigures perEvent(qint64 events) const;
};

class CpuMeter final {
public:
    // runnerPid: the runner's process, 0 when it runs inside this one;
    // databasePid: the postmaster, 0 when unknown.
    explicit CpuMeter(qint64 runnerPid = 0, qint64 databasePid = 0);
    CpuSnapshot sample() const;
    CpuUsage between(const CpuSnapshot &from, const CpuSnapshot &to) const;

private:
    qint64 m_runnerPid = 0;
    qint64 m_databasePid = 0;
    double m_tickSeconds = 0.01;
};

} // namespace outbox::bench
