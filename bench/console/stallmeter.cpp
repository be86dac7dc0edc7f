#include "stallmeter.h"

#include <algorithm>
#include <time.h>

namespace outbox::consolebench {

qint64 threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

StallMeter::StallMeter(QObject *parent)
    : QObject(parent) {
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(1);
    connect(&m_timer, &QTimer::timeout, this, &StallMeter::tick);
}

void StallMeter::start() {
    m_gaps.clear();
    m_gaps.reserve(100000);
    m_clock.start();
    m_last = 0;
    m_lastCpu = threadCpuNs();
    m_maxGap = 0;
    m_cpuInMaxGap = 0;
    m_maxCpuInGap = 0;
    m_timer.start();
}

void StallMeter::stop() {
    m_timer.stop();
    tick(); // a stall running into the end counts too
}

void StallMeter::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    const qint64 cpu = threadCpuNs();
    const qint64 gap = now - m_last;
    const qint64 used = cpu - m_lastCpu;
    m_gaps.push_back(gap);
    if (gap > m_maxGap) {
        m_maxGap = gap;
        m_cpuInMaxGap = used;
    }
    m_maxCpuInGap = std::max(m_maxCpuInGap, used);
    m_last = now;
    m_lastCpu = cpu;
}

StallFigures StallMeter::figures() const {
    StallFigures f;
    if (m_gaps.empty()) {
        return f;
    }
    std::vector<qint64> sorted = m_gaps;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&sorted](double q) {
        const auto index = std::size_t(q * double(sorted.size() - 1));
        return double(sorted[index]) / 1e6;
    };
    f.ticks = qint64(sorted.size());
    f.maxGapMs = double(sorted.back()) / 1e6;
    f.p99GapMs = at(0.99);
    f.p50GapMs = at(0.50);
    f.cpuInMaxGapMs = double(m_cpuInMaxGap) / 1e6;
    f.maxCpuInGapMs = double(m_maxCpuInGap) / 1e6;
    for (qint64 gap : sorted) {
        f.gapsOver16Ms += gap > 16'000'000 ? 1 : 0;
        f.gapsOver50Ms += gap > 50'000'000 ? 1 : 0;
    }
    return f;
}

} // namespace outbox::consolebench
