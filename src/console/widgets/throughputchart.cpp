#include "console/widgets/throughputchart.h"

#include "console/widgets/chartstyle.h"
#include "store/queries.h"

#include <QBoxLayout>
#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QLegendMarker>
#include <QLineSeries>
#include <QResizeEvent>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace outbox::console {

namespace {

constexpr qint64 kMinimumGapMs = 10'000;

} // namespace

ThroughputChart::ThroughputChart(QWidget *parent)
    : QWidget(parent) {
    auto *throughput = makeChart(tr("Throughput (events/s)"));
    m_delivered = makeSeries(throughput, tr("delivered/s"), QColor(0x26, 0xa2, 0x69));
    m_failed = makeSeries(throughput, tr("failed/s"), QColor(0xe0, 0x1b, 0x24));

    auto *backlog = makeChart(tr("Backlog (rows)"));
    m_pending = makeSeries(backlog, tr("pending"), QColor(0x1c, 0x71, 0xd8));
    m_retrying = makeSeries(backlog, tr("retrying"), QColor(0xe6, 0x61, 0x00));
    m_processing = makeSeries(backlog, tr("processing"), QColor(0x91, 0x41, 0xac));
    m_dead = makeSeries(backlog, tr("dead"), QColor(0x3d, 0x38, 0x46));

    // Ticks are spread over the window, not on whole minutes, so the labels
    // carry seconds (HH:mm alone would misname them).
    const QString timeFormat = QStringLiteral("HH:mm:ss");
    addTimeAxes(throughput, m_throughputX, m_throughputY, timeFormat, QStringLiteral("%g"));
    addTimeAxes(backlog, m_backlogX, m_backlogY, timeFormat, QStringLiteral("%.0f")); // whole rows

    m_throughputView = new QChartView(throughput, this);
    m_backlogView = new QChartView(backlog, this);
    for (QChartView *view : {m_throughputView, m_backlogView}) {
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumHeight(160);
    }
    m_throughputView->setObjectName(QStringLiteral("throughputChart"));
    m_backlogView->setObjectName(QStringLiteral("backlogChart"));

    m_layout = new QBoxLayout(QBoxLayout::LeftToRight, this);
    auto *layout = m_layout;
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_throughputView);
    layout->addWidget(m_backlogView);

    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    trimAndRescale(throughput, m_throughputX, m_throughputY, {m_delivered, m_failed}, now);
    trimAndRescale(backlog, m_backlogX, m_backlogY, {m_pending, m_retrying, m_processing, m_dead},
                   now);
}

ThroughputChart::~ThroughputChart() = default;

void ThroughputChart::resizeEvent(QResizeEvent *event) {
    // Side by side in a wide (bottom) dock, stacked in a tall (side) one.
    m_layout->setDirection(event->size().width() * 5 >= event->size().height() * 8
                               ? QBoxLayout::LeftToRight
                               : QBoxLayout::TopToBottom);
    QWidget::resizeEvent(event);
}

void ThroughputChart::setWindow(core::Millis window) {
    m_window = std::max(window, core::Millis(10'000));
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    trimAndRescale(m_throughputView->chart(), m_throughputX, m_throughputY,
                   segments({Series::Delivered, Series::Failed}), now);
    trimAndRescale(m_backlogView->chart(), m_backlogX, m_backlogY,
                   segments({Series::Pending, Series::Retrying, Series::Processing, Series::Dead}),
                   now);
}

QLineSeries *ThroughputChart::series(Series which) const {
    switch (which) {
    case Series::Delivered:
        return m_delivered;
    case Series::Failed:
        return m_failed;
    case Series::Pending:
        return m_pending;
    case Series::Retrying:
        return m_retrying;
    case Series::Processing:
        return m_processing;
    case Series::Dead:
        return m_dead;
    }
    return nullptr;
}

QList<QPointF> ThroughputChart::points(Series which) const {
    QList<QPointF> all;
    for (const QLineSeries *segment : m_earlier.value(int(which))) {
        all += segment->points();
    }
    return all + series(which)->points();
}

int ThroughputChart::segmentCount(Series which) const {
    return int(m_earlier.value(int(which)).size()) + 1;
}

QLineSeries *ThroughputChart::segmentFor(Series which, qint64 x) {
    QLineSeries *current = series(which);
    const int n = current->count();
    if (n < 2) {
        return current; // the usual interval is not known yet
    }
    const qint64 last = qint64(current->at(n - 1).x());
    const qint64 usual = last - qint64(current->at(n - 2).x());
    if (x - last <= std::max(kMinimumGapMs, 3 * usual)) {
        return current;
    }
    // The line so far stays as it is; the series goes on in a new segment
    // that looks the same and has no legend entry of its own.
    QChart *chart = current->chart();
    auto *next = makeSeries(chart, current->name(), current->pen().color());
    for (QAbstractAxis *axis : current->attachedAxes()) {
        next->attachAxis(axis);
    }
    for (QLegendMarker *marker : chart->legend()->markers(next)) {
        marker->setVisible(false);
    }
    m_earlier[int(which)].append(current);
    QLineSeries **slot = nullptr;
    switch (which) {
    case Series::Delivered:
        slot = &m_delivered;
        break;
    case Series::Failed:
        slot = &m_failed;
        break;
    case Series::Pending:
        slot = &m_pending;
        break;
    case Series::Retrying:
        slot = &m_retrying;
        break;
    case Series::Processing:
        slot = &m_processing;
        break;
    case Series::Dead:
        slot = &m_dead;
        break;
    }
    *slot = next;
    return next;
}

void ThroughputChart::append(Series which, qint64 x, double y) {
    segmentFor(which, x)->append(double(x), y);
}

QList<QLineSeries *> ThroughputChart::segments(std::initializer_list<Series> which) const {
    QList<QLineSeries *> all;
    for (Series s : which) {
        all += m_earlier.value(int(s));
        all.append(series(s));
    }
    return all;
}

void ThroughputChart::addThroughputSample(const QDateTime &at, double deliveredPerSecond,
                                          double failedPerSecond) {
    const qint64 x = (at.isValid() ? at : QDateTime::currentDateTimeUtc()).toMSecsSinceEpoch();
    append(Series::Delivered, x, std::max(0.0, deliveredPerSecond));
    append(Series::Failed, x, std::max(0.0, failedPerSecond));
    trimAndRescale(m_throughputView->chart(), m_throughputX, m_throughputY,
                   segments({Series::Delivered, Series::Failed}), x);
}

void ThroughputChart::addBacklogSample(const store::StatusCounts &counts) {
    const QDateTime at =
        counts.serverTime.isValid() ? counts.serverTime : QDateTime::currentDateTimeUtc();
    const qint64 x = at.toMSecsSinceEpoch();
    append(Series::Pending, x, double(counts.pending));
    append(Series::Retrying, x, double(counts.retrying));
    append(Series::Processing, x, double(counts.processing));
    append(Series::Dead, x, double(counts.dead));
    trimAndRescale(m_backlogView->chart(), m_backlogX, m_backlogY,
                   segments({Series::Pending, Series::Retrying, Series::Processing, Series::Dead}),
                   x);
}

void ThroughputChart::clear() {
    for (const QList<QLineSeries *> &earlier : std::as_const(m_earlier)) {
        for (QLineSeries *segment : earlier) {
            segment->chart()->removeSeries(segment);
            delete segment;
        }
    }
    m_earlier.clear();
    for (QLineSeries *s : {m_delivered, m_failed, m_pending, m_retrying, m_processing, m_dead})
        s->clear();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    trimAndRescale(m_throughputView->chart(), m_throughputX, m_throughputY, {m_delivered, m_failed},
                   now);
    trimAndRescale(m_backlogView->chart(), m_backlogX, m_backlogY,
                   {m_pending, m_retrying, m_processing, m_dead}, now);
}

void ThroughputChart::trimAndRescale(QChart *chart, QDateTimeAxis *xAxis, QValueAxis *yAxis,
                                     const QList<QLineSeries *> &seriesList, qint64 nowMs) {
    Q_UNUSED(chart)
    const qint64 windowMs = m_window.count();
    // Samples can arrive with a slightly older timestamp (server vs. local
    // clock); the right edge is the newest point seen.
    qint64 right = nowMs;
    for (QLineSeries *s : seriesList) {
        if (s->count() > 0)
            right = std::max(right, qint64(s->at(s->count() - 1).x()));
    }
    const double cutoff = double(right - windowMs);
    double maxY = 0.0;
    // Segments wholly left of the window go (the current ones stay).
    QList<QLineSeries *> shown = seriesList;
    for (auto it = m_earlier.begin(); it != m_earlier.end(); ++it) {
        QList<QLineSeries *> &earlier = it.value();
        while (!earlier.isEmpty() && seriesList.contains(earlier.constFirst()) &&
               (earlier.constFirst()->count() == 0 ||
                earlier.constFirst()->at(earlier.constFirst()->count() - 1).x() < cutoff)) {
            QLineSeries *gone = earlier.takeFirst();
            shown.removeAll(gone);
            gone->chart()->removeSeries(gone);
            delete gone;
        }
    }
    for (QLineSeries *s : std::as_const(shown)) {
        int drop = 0;
        const int count = s->count();
        // Keep one point left of the edge so the line enters the chart.
        while (drop + 1 < count && s->at(drop + 1).x() < cutoff)
            ++drop;
        if (drop > 0)
            s->removePoints(0, drop);
        for (int i = 0; i < s->count(); ++i)
            maxY = std::max(maxY, s->at(i).y());
    }
    xAxis->setRange(QDateTime::fromMSecsSinceEpoch(right - windowMs),
                    QDateTime::fromMSecsSinceEpoch(right));
    // Row counts get whole-number ticks (3 ticks: an even top).
    const bool rows = yAxis == m_backlogY;
    double top = niceCeiling(maxY * 1.1);
    if (rows)
        top = std::max(2.0, std::ceil(top / 2.0) * 2.0);
    yAxis->setRange(0.0, top);
}

} // namespace outbox::console
