#include "benchapplication.h"

#include "stallmeter.h"

#include <QEvent>
#include <QMetaEnum>
#include <QThread>
#include <QWidget>

#include <algorithm>
#include <optional>
#include <utility>

namespace outbox::consolebench {

// Taken before the event is handled: the receiver may be gone afterwards
// (DeferredDelete).
struct BenchApplication::Receiver {
    const char *className = nullptr;
    const char *parentClassName = nullptr;
    QString name;

    explicit Receiver(QObject *receiver)
        : className(receiver->metaObject()->className())
        , parentClassName(receiver->parent() ? receiver->parent()->metaObject()->className()
                                             : nullptr)
        , name(receiver->objectName()) {}
};

namespace {

QString describe(const BenchApplication::Receiver &receiver, int eventType) {
    const char *key = QMetaEnum::fromType<QEvent::Type>().valueToKey(eventType);
    QString text = (key ? QString::fromLatin1(key) : QString::number(eventType)) +
                   QStringLiteral(" -> ") + QString::fromLatin1(receiver.className);
    if (!receiver.name.isEmpty()) {
        text += QLatin1Char(' ') + receiver.name;
    }
    if (receiver.parentClassName) {
        text += QStringLiteral(" (in ") + QString::fromLatin1(receiver.parentClassName) +
                QLatin1Char(')');
    }
    return text;
}

} // namespace

BenchApplication::BenchApplication(int &argc, char **argv)
    : QApplication(argc, argv)
    , m_guiThread(QThread::currentThread()) {
    m_clock.start();
}

BenchApplication::~BenchApplication() = default;

void BenchApplication::startEventProfile(int keep) {
    m_keep = std::max(1, keep);
    m_slowest.clear();
    m_profiling = true;
}

QList<SlowEvent> BenchApplication::stopEventProfile() {
    m_profiling = false;
    return std::exchange(m_slowest, {});
}

bool BenchApplication::notify(QObject *receiver, QEvent *event) {
    // Worker threads (store worker, dispatcher, producer) deliver their
    // events through here too; only the GUI thread's are of interest, and
    // the bookkeeping below is not thread-safe.
    if (QThread::currentThread() != m_guiThread) {
        return QApplication::notify(receiver, event);
    }
    const int type = event->type();
    const bool timed = m_profiling && m_depth == 0;
    const std::optional<Receiver> who = timed ? std::optional<Receiver>(receiver) : std::nullopt;
    const qint64 start = timed ? m_clock.nsecsElapsed() : 0;
    const qint64 startCpu = timed ? threadCpuNs() : 0;
    ++m_depth;
    const bool result = QApplication::notify(receiver, event);
    --m_depth;
    if (type == QEvent::Paint && m_paintHook && receiver->isWidgetType()) {
        m_paintHook(static_cast<QWidget *>(receiver));
    }
    if (timed) {
        recordSlow(m_clock.nsecsElapsed() - start, threadCpuNs() - startCpu, *who, type);
    }
    return result;
}

void BenchApplication::recordSlow(qint64 nanos, qint64 cpuNanos, const Receiver &receiver,
                                  int eventType) {
    const double ms = double(nanos) / 1e6;
    if (m_slowest.size() >= m_keep && ms <= m_slowest.constLast().ms) {
        return;
    }
    // Only the cheap comparison above runs for the many fast events.
    SlowEvent slow{ms, double(cpuNanos) / 1e6, describe(receiver, eventType)};
    const auto at =
        std::upper_bound(m_slowest.begin(), m_slowest.end(), slow,
                         [](const SlowEvent &a, const SlowEvent &b) { return a.ms > b.ms; });
    m_slowest.insert(at, slow);
    if (m_slowest.size() > m_keep) {
        m_slowest.removeLast();
    }
}

} // namespace outbox::consolebench
