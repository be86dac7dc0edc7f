#include "instruments.h"

#include "bench/harness.h"
#include "console/model/eventtablemodel.h"
#include "console/widgets/eventview.h"

#include <QEvent>
#include <QEventLoop>
#include <QTableView>
#include <QWidget>

#include <algorithm>

namespace outbox::consolebench {

using bench::threadCpuNs;

BenchApplication::BenchApplication(int &argc, char **argv)
    : QApplication(argc, argv) {
    m_clock.start();
}

bool BenchApplication::notify(QObject *receiver, QEvent *event) {
    // Paint events are the GUI thread's only: worker threads (store worker,
    // dispatcher, producer) that deliver their events through here never
    // touch the hook, which is not thread-safe.
    const bool paint = event->type() == QEvent::Paint && receiver->isWidgetType();
    const bool result = QApplication::notify(receiver, event);
    if (paint && m_paintHook)
        m_paintHook(static_cast<QWidget *>(receiver));
    return result;
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
    if (widget != m_view->table()->viewport())
        return;
    const qint64 at = m_app->now();
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
