#pragma once

#include <QJsonArray>
#include <QList>
#include <QString>

#include <cstdint>
#include <vector>

// What the GUI thread did during a stall: the benchmark's attribution of
// each long gap of the StallMeter to the work the thread did (events it
// handled, steps the benchmark timed) and to the time it was runnable but
// not on a CPU ("waiting for a CPU", the scheduler's run-queue delay).
namespace outbox::consolebench {

// One thread's clocks in nanoseconds: wall (monotonic), time on a CPU, and
// time it was runnable and waited for a CPU (Linux schedstat; -1 where the
// kernel does not keep it). Read from the thread they describe.
struct ThreadTimes {
    std::int64_t wallNs = 0;
    std::int64_t cpuNs = 0;
    std::int64_t waitNs = -1;

    static ThreadTimes now();
};

// Long stretches of the GUI thread's work: events it handled (recorded by
// BenchApplication::notify) and steps the benchmark names itself (the
// window's constructor). Then, per gap of the StallMeter, what overlapped it.
class GapTrace final {
public:
    struct Activity {
        QString what;
        int depth = 0; // 0: a step of the benchmark or a top-level event
        ThreadTimes from, to;
    };
    struct Gap {
        ThreadTimes from, to; // the ticks either side
    };

    GapTrace() = default;
    ~GapTrace() { uninstall(); }
    GapTrace(const GapTrace &) = delete;
    GapTrace &operator=(const GapTrace &) = delete;

    // The trace the running benchmark records into (one at a time), or null.
    static GapTrace *current();
    void install();
    void uninstall();

    // A step of the benchmark, from `from` to now.
    void step(const QString &what, const ThreadTimes &from);
    // Events of the GUI thread that took at least kMinEventNs.
    void event(const QString &what, int depth, const ThreadTimes &from, const ThreadTimes &to);
    void gap(const ThreadTimes &from, const ThreadTimes &to) { m_gaps.push_back({from, to}); }

    static constexpr std::int64_t kMinEventNs = 2'000'000;

    // One line per gap over 50 ms (none: the longest gap): its length, CPU
    // time, wait for a CPU, the rest (blocked), and what the thread was
    // doing, times from `originNs`.
    QStringList lines(std::int64_t originNs) const;
    QJsonArray json(std::int64_t originNs) const;

private:
    std::vector<Gap> shown() const;
    QList<const Activity *> overlapping(const Gap &gap) const;

    std::vector<Activity> m_activities;
    std::vector<Gap> m_gaps;
};

} // namespace outbox::consolebench
