#include "instruments.h"

#include "bench/harness.h"
#include "bench/report.h"
#include "console/model/eventtablemodel.h"
#include "console/widgets/eventview.h"

#include <QEvent>
#include <QEventLoop>
#include <QTableView>
#include <QWidget>

#include <algorithm>

namespace outbox::consolebench {

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
    m_timer.start();
}

void StallMeter::stop() {
    m_timer.stop();
    tick(); // a stall running into the end counts too
}

void StallMeter::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    m_gaps.push_back(now - m_last);
    m_last = now;
}

QJsonObject StallMeter::figures() const {
    if (m_gaps.empty())
        return {};
    std::vector<qint64> sorted = m_gaps;
    std::sort(sorted.begin(), sorted.end());
    const auto at = [&sorted](double q) {
        return bench::rounded(double(sorted[std::size_t(q * double(sorted.size() - 1))]) / 1e6, 2);
    };
    const auto over = [&sorted](qint64 ns) {
        return qint64(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), ns));
    };
    return QJsonObject{{QStringLiteral("ticks"), qint64(sorted.size())},
                       {QStringLiteral("max_gap_ms"), at(1.0)},
                       {QStringLiteral("p99_gap_ms"), at(0.99)},
                       {QStringLiteral("p50_gap_ms"), at(0.50)},
                       {QStringLiteral("gaps_over_16ms"), over(16'000'000)},
                       {QStringLiteral("gaps_over_50ms"), over(50'000'000)}};
}

RowsProbe::RowsProbe(BenchApplication *app, console::EventView *view, qint64 t0)
    : m_app(app)
    , m_view(view)
    , m_t0(t0) {
    m_app->setPaintHook([this](QWidget *widget) { onPaint(widget); });
    const console::EventTableModel *model = m_view->model();
    const auto markDirty = [this] { m_dirty = true; };
    connect(model, &QAbstractItemModel::rowsInserted, this, markDirty);
    connect(model, &QAbstractItemModel::rowsRemoved, this, markDirty);
    connect(model, &QAbstractItemModel::rowsMoved, this, markDirty);
    connect(model, &QAbstractItemModel::modelReset, this, markDirty);
    connect(model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &, const QModelIndex &, const QList<int> &roles) {
                // The once-a-second clock names its roles; a row that changed
                // in a refresh does not.
                if (roles.isEmpty())
                    m_dirty = true;
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

core::Result<double> RowsProbe::wait(bool fresh, const QString &what, int timeoutMs) {
    const auto reached = [&] { return (fresh ? freshAt() : m_shownAt).has_value(); };
    if (!waitUntil([&] { return reached() || !m_loadError.isEmpty(); }, timeoutMs))
        return bench::failure(
            QStringLiteral("%1: no rows within %2 s").arg(what).arg(timeoutMs / 1000));
    if (!m_loadError.isEmpty())
        return bench::failure(what + QStringLiteral(": ") + m_loadError);
    return msFromT0(fresh ? freshAt() : m_shownAt);
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
