#include "bench/cpumeter.h"

#include <QFile>
#include <QList>

#include <algorithm>
#include <unistd.h>

namespace outbox::bench {

namespace {

// utime + stime of /proc/<pid>/stat, in clock ticks. The second field (the
// command) may contain spaces and parentheses: count from the last ')'.
qint64 processTicks(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray line = file.readAll();
    const qsizetype close = line.lastIndexOf(')');
    if (close < 0)
        return 0;
    const QList<QByteArray> fields = line.mid(close + 2).split(' ');
    // After the command: state is field 3, utime field 14, stime field 15.
    if (fields.size() < 13)
        return 0;
    return fields.at(11).toLongLong() + fields.at(12).toLongLong();
}

} // namespace

CpuFigures CpuUsage::perEvent(qint64 events) const {
    CpuFigures figures;
    const double available = busySeconds + idleSeconds + stealSeconds;
    if (!valid || events <= 0 || available <= 0)
        return figures;
    const double us = 1e6 / double(events);
    figures.valid = true;
    figures.totalUs = busySeconds * us;
    figures.selfUs = selfSeconds * us;
    figures.runnerUs = runnerSeconds * us;
    figures.restUs = std::max(busySeconds - selfSeconds - runnerSeconds, 0.0) * us;
    figures.busy = busySeconds / available;
    figures.steal = stealSeconds / available;
    return figures;
}

CpuMeter::CpuMeter(qint64 runnerPid)
    : m_runnerPid(runnerPid) {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    m_tickSeconds = ticks > 0 ? 1.0 / double(ticks) : 0.01;
}

CpuSnapshot CpuMeter::sample() const {
    CpuSnapshot snapshot;
    QFile stat(QStringLiteral("/proc/stat"));
    if (stat.open(QIODevice::ReadOnly)) {
        // "cpu  user nice system idle iowait irq softirq steal guest guest_nice";
        // guest time is already counted in user.
        const QList<QByteArray> fields = stat.readLine().simplified().split(' ');
        if (fields.size() >= 9 && fields.first() == "cpu") {
            const auto at = [&](int i) { return fields.at(i).toLongLong(); };
            snapshot.busyTicks = at(1) + at(2) + at(3) + at(6) + at(7);
            snapshot.idleTicks = at(4) + at(5);
            snapshot.stealTicks = at(8);
        }
    }
    snapshot.selfTicks = processTicks(QStringLiteral("/proc/self/stat"));
    if (m_runnerPid > 0)
        snapshot.runnerTicks = processTicks(QStringLiteral("/proc/%1/stat").arg(m_runnerPid));
    return snapshot;
}

CpuUsage CpuMeter::between(const CpuSnapshot &from, const CpuSnapshot &to) const {
    CpuUsage usage;
    usage.busySeconds = double(to.busyTicks - from.busyTicks) * m_tickSeconds;
    usage.idleSeconds = double(to.idleTicks - from.idleTicks) * m_tickSeconds;
    usage.stealSeconds = double(to.stealTicks - from.stealTicks) * m_tickSeconds;
    usage.selfSeconds = double(to.selfTicks - from.selfTicks) * m_tickSeconds;
    usage.runnerSeconds = double(to.runnerTicks - from.runnerTicks) * m_tickSeconds;
    usage.valid = usage.busySeconds + usage.idleSeconds + usage.stealSeconds > 0;
    return usage;
}

} // namespace outbox::bench
