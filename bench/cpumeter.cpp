#include "bench/cpumeter.h"

#include <QDir>
#include <QFile>
#include <QList>

#include <algorithm>
#include <unistd.h>

namespace outbox::bench {

namespace {

// The fields of /proc/<pid>/stat after the command (the second field, which
// may contain spaces and parentheses: cut at the last ')'), so that index 0
// is field 3 (state), 1 the parent, 11 and 12 utime and stime, 13 and 14 the
// reaped children's. Empty when the process is gone.
QList<QByteArray> statFields(qint64 pid) {
    QFile file(pid > 0 ? QStringLiteral("/proc/%1/stat").arg(pid)
                       : QStringLiteral("/proc/self/stat"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray line = file.readAll();
    const qsizetype close = line.lastIndexOf(')');
    if (close < 0)
        return {};
    QList<QByteArray> fields = line.mid(close + 2).split(' ');
    if (fields.size() < 15)
        return {};
    return fields;
}

// utime + stime, in clock ticks (0 = this process).
qint64 processTicks(qint64 pid) {
    const QList<QByteArray> fields = statFields(pid);
    return fields.isEmpty() ? 0 : fields.at(11).toLongLong() + fields.at(12).toLongLong();
}

// A server and its children, those still running and those it has reaped
// (a backend or an autovacuum worker that exits moves its time into the
// server's cutime/cstime, so the sum stays steady across exits).
qint64 processTreeTicks(qint64 pid) {
    const QList<QByteArray> server = statFields(pid);
    if (server.isEmpty())
        return 0;
    qint64 ticks = server.at(11).toLongLong() + server.at(12).toLongLong() +
                   server.at(13).toLongLong() + server.at(14).toLongLong();
    const QByteArray parent = QByteArray::number(pid);
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 child = entry.toLongLong(&numeric);
        if (!numeric || child == pid)
            continue;
        const QList<QByteArray> fields = statFields(child);
        if (!fields.isEmpty() && fields.at(1) == parent)
            ticks += fields.at(11).toLongLong() + fields.at(12).toLongLong();
    }
    return ticks;
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
    figures.databaseUs = databaseSeconds * us;
    figures.restUs =
        std::max(busySeconds - selfSeconds - runnerSeconds - databaseSeconds, 0.0) * us;
    figures.busy = busySeconds / available;
    figures.steal = stealSeconds / available;
    return figures;
}

CpuMeter::CpuMeter(qint64 runnerPid, qint64 databasePid)
    : m_runnerPid(runnerPid)
    , m_databasePid(databasePid) {
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
    snapshot.selfTicks = processTicks(0);
    if (m_runnerPid > 0)
        snapshot.runnerTicks = processTicks(m_runnerPid);
    if (m_databasePid > 0)
        snapshot.databaseTicks = processTreeTicks(m_databasePid);
    return snapshot;
}

CpuUsage CpuMeter::between(const CpuSnapshot &from, const CpuSnapshot &to) const {
    CpuUsage usage;
    usage.busySeconds = double(to.busyTicks - from.busyTicks) * m_tickSeconds;
    usage.idleSeconds = double(to.idleTicks - from.idleTicks) * m_tickSeconds;
    usage.stealSeconds = double(to.stealTicks - from.stealTicks) * m_tickSeconds;
    usage.selfSeconds = double(to.selfTicks - from.selfTicks) * m_tickSeconds;
    usage.runnerSeconds = double(to.runnerTicks - from.runnerTicks) * m_tickSeconds;
    usage.databaseSeconds = double(to.databaseTicks - from.databaseTicks) * m_tickSeconds;
    usage.valid = usage.busySeconds + usage.idleSeconds + usage.stealSeconds > 0;
    return usage;
}

} // namespace outbox::bench
