#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <vector>

namespace outbox::consolebench {
// CPU time of the calling thread, nanoseconds.
qint64 threadCpuNs();
} // namespace outbox::consolebench

namespace outbox::consolebench {

struct StallFigures {
    qint64 ticks = 0;
    double maxGapMs = 0;
    double p99GapMs = 0;
    double p50GapMs = 0;
    qint64 gapsOver16Ms = 0; // a dropped frame at 60 Hz
    qint64 gapsOver50Ms = 0;
    // GUI-thread CPU time spent within the longest gap: far below the gap
    // means the thread was waiting (for a CPU, or blocked), not working.
    double cpuInMaxGapMs = 0;
    double maxCpuInGapMs = 0; // the most CPU time the GUI thread used within any one gap
};

// A 1 ms timer on the GUI thread: the gap between two ticks is how long
// the event loop could not run a timer, i.e. how long the GUI was frozen.
class StallMeter final : public QObject {
    Q_OBJECT

public:
    explicit StallMeter(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(StallMeter)

    void start();
    void stop();
    StallFigures figures() const;

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    std::vector<qint64> m_gaps; // nanoseconds
    qint64 m_lastCpu = 0;
    qint64 m_maxGap = 0;
    qint64 m_cpuInMaxGap = 0;
    qint64 m_maxCpuInGap = 0;
};

} // namespace outbox::consolebench
