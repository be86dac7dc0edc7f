#include "instruments.h"

#include "bench/harness.h"
#include "console/model/eventtablemodel.h"
#include "console/widgets/eventview.h"

#include <QEvent>
#include <QEventLoop>
#include <QMetaEnum>
#include <QTableView>
#include <QThread>
#include <QWidget>

#include <algorithm>
#include <utility>

namespace outbox::consolebench {

using bench::threadCpuNs;

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
    if (!receiver.name.isEmpty())
        text += QLatin1Char(' ') + receiver.name;
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
    if (QThread::currentThread() != m_guiThread)
        return QApplication::notify(receiver, event);
    const int type = event->type();
    const bool timed = m_profiling && m_depth == 0;
    const std::optional<Receiver> who = timed ? std::optional<Receiver>(receiver) : std::nullopt;
    const qint64 start = timed ? m_clock.nsecsElapsed() : 0;
    const qint64 startCpu = timed ? threadCpuNs() : 0;
    ++m_depth;
    const bool result = QApplication::notify(receiver, event);
    --m_depth;
    if (type == QEvent::Paint && m_paintHook && receiver->isWidgetType())
        m_paintHook(static_cast<QWidget *>(receiver));
    if (timed)
        recordSlow(m_clock.nsecsElapsed() - start, threadCpuNs() - startCpu, *who, type);
    return result;
}

void BenchApplication::recordSlow(qint64 nanos, qint64 cpuNanos, const Receiver &receiver,
                                  int eventType) {
    const double ms = double(nanos) / 1e6;
    if (m_slowest.size() >= m_keep && ms <= m_slowest.constLast().ms)
        return;
    // Only the cheap comparison above runs for the many fast events.
    SlowEvent slow{ms, double(cpuNanos) / 1e6, describe(receiver, eventType)};
    const auto at =
        std::upper_bound(m_slowest.begin(), m_slowest.end(), slow,
                         [](const SlowEvent &a, const SlowEvent &b) { return a.ms > b.ms; });
    m_slowest.insert(at, slow);
    if (m_slowest.size() > m_keep)
        m_slowest.removeLast();
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
    if (m_gaps.empty())
        return f;
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

RowsProbe::RowsProbe(BenchApplication *app, console::EventView *view, qint64 t0)
    : m_app(app)
    , m_view(view)
    , m_t0(t0) {
    m_app->setPaintHook([this](QWidget *widget) { onPaint(widget); });
    const console::EventTableModel *model = m_view->model();
    connect(model, &QAbstractItemModel::rowsInserted, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::rowsMoved, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::modelReset, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &, const QModelIndex &, const QList<int> &roles) {
                // The once-a-second clock names its roles; a row that changed
                // in a refresh does not.
                if (roles.isEmpty())
                    markDirty();
            });
    connect(model, &console::EventTableModel::refreshed, this, [this] {
        if (!m_refreshedAt) {
            m_refreshedAt = m_app->now();
            m_dirtyAtRefresh = m_dirty;
        }
    });
    connect(model, &console::EventTableModel::loadFailed, this,
            [this](const QString &message) { m_loadError = message; });
}

RowsProbe::~RowsProbe() {
    m_app->setPaintHook({});
}

void RowsProbe::markDirty() {
    m_dirty = true;
}

void RowsProbe::onPaint(QWidget *widget) {
    const qint64 at = m_app->now();
    if (!m_firstFrameAt)
        m_firstFrameAt = at;
    if (widget != m_view->table()->viewport())
        return;
    const bool hasRows = m_view->model()->rowCount() > 0;
    if (hasRows && !m_shownAt)
        m_shownAt = at;
    if (m_refreshedAt && !m_paintAfterRefresh)
        m_paintAfterRefresh = at;
}

std::optional<qint64> RowsProbe::freshAt() const {
    if (!m_refreshedAt)
        return std::nullopt;
    qint64 at = *m_refreshedAt;
    const bool hasRows = m_view->model()->rowCount() > 0;
    if (m_dirtyAtRefresh || (hasRows && !m_shownAt)) {
        if (!m_paintAfterRefresh)
            return std::nullopt;
        at = *m_paintAfterRefresh;
    }
    if (hasRows) {
        if (!m_shownAt)
            return std::nullopt;
        at = std::max(at, *m_shownAt);
    }
    return at;
}

double RowsProbe::shownMs() const {
    return m_shownAt ? double(*m_shownAt - m_t0) / 1e6 : -1.0;
}

double RowsProbe::freshMs() const {
    const auto at = freshAt();
    return at ? double(*at - m_t0) / 1e6 : -1.0;
}

bool waitUntil(const std::function<bool()> &done, int timeoutMs) {
    if (done())
        return true;
    QElapsedTimer clock;
    clock.start();
    QEventLoop loop;
    QTimer poll;
    // Polling only decides when to stop waiting; the figures are taken in
    // the paint and signal handlers, so its period does not bias them.
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done() || clock.elapsed() >= timeoutMs) {
            loop.quit();
        }
    });
    poll.start(2);
    loop.exec();
    return done();
}

void runFor(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace outbox::consolebench
