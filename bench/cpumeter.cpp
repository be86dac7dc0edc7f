#include "bench/cpumeter.h"

#include <QElapsedTimer>
#include <QFile>
#include <QList>
#include <QThread>

#include <cmath>
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

qint64 monotonicNs() {
    static QElapsedTimer clock = [] {
        QElapsedTimer c;
        c.start();
        return c;
    }();
    return clock.nsecsElapsed();
}

double perEvent(double seconds, qint64 events) {
    return events > 0 ? seconds * 1e6 / double(events) : 0.0;
}

double rounded(double value) {
    return std::round(value * 10.0) / 10.0;
}

} // namespace

double CpuUsage::busyFraction() const {
    const double all = busySeconds + idleSeconds + stealSeconds;
    return all > 0 ? busySeconds / all : 0.0;
}

double CpuUsage::stealFraction() const {
    const double all = busySeconds + idleSeconds + stealSeconds;
    return all > 0 ? stealSeconds / all : 0.0;
}

double CpuUsage::totalPerEventUs(qint64 events) const {
    return perEvent(busySeconds, events);
}

double CpuUsage::selfPerEventUs(qint64 events) const {
    return perEvent(selfSeconds, events);
}

double CpuUsage::runnerPerEventUs(qint64 events) const {
    return perEvent(runnerSeconds, events);
}

double CpuUsage::restPerEventUs(qint64 events) const {
    return perEvent(std::max(busySeconds - selfSeconds - runnerSeconds, 0.0), events);
}

QJsonObject CpuUsage::json(qint64 events) const {
    return QJsonObject{
        {QStringLiteral("busy_pct"), rounded(busyFraction() * 100.0)},
        {QStringLiteral("steal_pct"), rounded(stealFraction() * 100.0)},
        {QStringLiteral("total_us_per_event"), rounded(totalPerEventUs(events))},
        {QStringLiteral("self_us_per_event"), rounded(selfPerEventUs(events))},
        {QStringLiteral("runner_us_per_event"), rounded(runnerPerEventUs(events))},
        {QStringLiteral("rest_us_per_event"), rounded(restPerEventUs(events))},
    };
}

CpuMeter::CpuMeter(qint64 runnerPid)
    : m_runnerPid(runnerPid) {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    m_tickSeconds = ticks > 0 ? 1.0 / double(ticks) : 0.01;
    m_cpus = std::max(QThread::idealThreadCount(), 1);
}

CpuSnapshot CpuMeter::sample() const {
    CpuSnapshot snapshot;
    snapshot.atNs = monotonicNs();
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
    usage.cpus = m_cpus;
    usage.seconds = double(to.atNs - from.atNs) / 1e9;
    usage.busySeconds = double(to.busyTicks - from.busyTicks) * m_tickSeconds;
    usage.idleSeconds = double(to.idleTicks - from.idleTicks) * m_tickSeconds;
    usage.stealSeconds = double(to.stealTicks - from.stealTicks) * m_tickSeconds;
    usage.selfSeconds = double(to.selfTicks - from.selfTicks) * m_tickSeconds;
    usage.runnerSeconds = double(to.runnerTicks - from.runnerTicks) * m_tickSeconds;
    usage.valid = usage.busySeconds + usage.idleSeconds + usage.stealSeconds > 0;
    return usage;
}

} // namespace outbox::bench
