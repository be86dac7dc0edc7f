#include "gaptrace.h"

#include "bench/report.h"

#include <QJsonObject>

#include <algorithm>
#include <ctime>
#include <fcntl.h>
#include <iterator>
#include <unistd.h>

namespace outbox::consolebench {

namespace {

GapTrace *g_current = nullptr;

std::int64_t clockNs(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The run-queue delay of the calling thread: the second figure of its
// schedstat ("time spent waiting on a runqueue"), -1 when unavailable.
std::int64_t runQueueWaitNs() {
    thread_local const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    char text[128];
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) {
        return -1;
    }
    text[n] = '\0';
    long long cpu = 0;
    long long wait = 0;
    if (std::sscanf(text, "%lld %lld", &cpu, &wait) != 2) {
        return -1;
    }
    return wait;
}

double ms(std::int64_t ns) {
    return double(ns) / 1e6;
}

QString msText(std::int64_t ns) {
    return QString::number(ms(ns), 'f', 0) + QStringLiteral(" ms");
}

} // namespace

ThreadTimes ThreadTimes::now() {
    ThreadTimes t;
    t.wallNs = clockNs(CLOCK_MONOTONIC);
    t.cpuNs = clockNs(CLOCK_THREAD_CPUTIME_ID);
    t.waitNs = runQueueWaitNs();
    return t;
}

GapTrace *GapTrace::current() {
    return g_current;
}

void GapTrace::install() {
    g_current = this;
}

void GapTrace::uninstall() {
    if (g_current == this) {
        g_current = nullptr;
    }
}

void GapTrace::step(const QString &what, const ThreadTimes &from) {
    m_activities.push_back({what, 0, from, ThreadTimes::now()});
}

void GapTrace::event(const QString &what, int depth, const ThreadTimes &from,
                     const ThreadTimes &to) {
    m_activities.push_back({what, depth, from, to});
}

QList<const GapTrace::Activity *> GapTrace::overlapping(const Gap &gap) const {
    QList<const Activity *> found;
    for (const Activity &a : m_activities) {
        if (a.from.wallNs < gap.to.wallNs && a.to.wallNs > gap.from.wallNs) {
            found << &a;
        }
    }
    if (found.isEmpty()) {
        return found;
    }
    // The outermost work first (an event inside a step, or inside another
    // event, is part of it): that level and the one below, by start.
    const int top = (*std::min_element(found.begin(), found.end(), [](auto *a, auto *b) {
                        return a->depth < b->depth;
                    }))->depth;
    found.removeIf([top](const Activity *a) { return a->depth > top + 1; });
    std::sort(found.begin(), found.end(), [](auto *a, auto *b) {
        return a->depth != b->depth ? a->depth < b->depth : a->from.wallNs < b->from.wallNs;
    });
    return found.mid(0, 6);
}

std::vector<GapTrace::Gap> GapTrace::shown() const {
    constexpr std::int64_t kLongNs = 50'000'000;
    const auto length = [](const Gap &g) { return g.to.wallNs - g.from.wallNs; };
    std::vector<Gap> out;
    std::copy_if(m_gaps.begin(), m_gaps.end(), std::back_inserter(out),
                 [&](const Gap &g) { return length(g) > kLongNs; });
    if (out.empty() && !m_gaps.empty()) {
        out.push_back(*std::max_element(m_gaps.begin(), m_gaps.end(),
                                        [&](auto &a, auto &b) { return length(a) < length(b); }));
    }
    return out;
}

QStringList GapTrace::lines(std::int64_t originNs) const {
    QStringList out;
    for (const Gap &g : shown()) {
        const std::int64_t wall = g.to.wallNs - g.from.wallNs;
        const std::int64_t cpu = g.to.cpuNs - g.from.cpuNs;
        QString line = QStringLiteral("%1 at +%2 ms: on a CPU %3")
                           .arg(msText(wall))
                           .arg(std::max(0.0, ms(g.from.wallNs - originNs)), 0, 'f', 0)
                           .arg(msText(cpu));
        if (g.from.waitNs >= 0 && g.to.waitNs >= 0) {
            const std::int64_t wait = g.to.waitNs - g.from.waitNs;
            line += QStringLiteral(", waiting for a CPU %1, blocked %2")
                        .arg(msText(wait))
                        .arg(msText(std::max<std::int64_t>(0, wall - cpu - wait)));
        }
        const auto doing = overlapping(g);
        if (doing.isEmpty()) {
            line += QStringLiteral("; in the event loop, no event over %1 ms")
                        .arg(kMinEventNs / 1'000'000);
        }
        for (const Activity *a : doing) {
            line += QStringLiteral("\n      %1%2: %3 (on a CPU %4)")
                        .arg(QString(a->depth * 2, QLatin1Char(' ')), a->what,
                             msText(a->to.wallNs - a->from.wallNs),
                             msText(a->to.cpuNs - a->from.cpuNs));
        }
        out << line;
    }
    return out;
}

QJsonArray GapTrace::json(std::int64_t originNs) const {
    QJsonArray out;
    for (const Gap &g : shown()) {
        QJsonArray doing;
        for (const Activity *a : overlapping(g)) {
            doing.append(QJsonObject{
                {QStringLiteral("what"), a->what},
                {QStringLiteral("depth"), a->depth},
                {QStringLiteral("wall_ms"), bench::rounded(ms(a->to.wallNs - a->from.wallNs), 1)},
                {QStringLiteral("cpu_ms"), bench::rounded(ms(a->to.cpuNs - a->from.cpuNs), 1)}});
        }
        const bool haveWait = g.from.waitNs >= 0 && g.to.waitNs >= 0;
        out.append(QJsonObject{
            {QStringLiteral("at_ms"), bench::rounded(ms(g.from.wallNs - originNs), 1)},
            {QStringLiteral("wall_ms"), bench::rounded(ms(g.to.wallNs - g.from.wallNs), 1)},
            {QStringLiteral("cpu_ms"), bench::rounded(ms(g.to.cpuNs - g.from.cpuNs), 1)},
            {QStringLiteral("cpu_wait_ms"),
             haveWait ? bench::rounded(ms(g.to.waitNs - g.from.waitNs), 1) : -1.0},
            {QStringLiteral("doing"), doing}});
    }
    return out;
}

} // namespace outbox::consolebench
