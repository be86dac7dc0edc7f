#pragma once

#include "core/duration.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QPointF>
#include <QWidget>

class QBoxLayout;
class QChart;
class QChartView;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace outbox::store {
struct StatusCounts;
}

namespace outbox::console {

// Two rolling time-series charts (Qt Charts) for the dispatcher panel:
//  - throughput: delivered/s and failed/s as computed from the dispatcher's
//    stats snapshots;
//  - backlog: pending, retrying, processing and dead row counts from the
//    console's count refreshes.
// Only the last window() of samples is kept (default 5 minutes), so memory
// and repaint cost stay bounded however long the dispatcher runs. Where
// samples stopped for a while (the dispatcher was stopped, the connection
// lost) the lines break instead of bridging the gap: a sample more than
// three of the usual intervals (and 10 s) after the previous one starts a
// new segment.
class ThroughputChart final : public QWidget {
    Q_OBJECT
public:
    enum class Series { Delivered, Failed, Pending, Retrying, Processing, Dead };

    explicit ThroughputChart(QWidget *parent = nullptr);
    ~ThroughputChart() override;
    Q_DISABLE_COPY_MOVE(ThroughputChart)

    void setWindow(core::Millis window); // >= 10 s
    core::Millis window() const { return m_window; }

    // The points currently held for one series: x = msecs since epoch, y = value.
    QList<QPointF> points(Series series) const;
    // How many unbroken lines the series is drawn as.
    int segmentCount(Series series) const;

public Q_SLOTS:
    // `at` is the sample time (UTC or local; compared as absolute time).
    void addThroughputSample(const QDateTime &at, double deliveredPerSecond,
                             double failedPerSecond);
    // Takes the sample time from counts.serverTime when set, else now.
    void addBacklogSample(const outbox::store::StatusCounts &counts);
    void clear();

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    QLineSeries *series(Series series) const;
    // The series' current segment, a new one after a gap before `x`.
    QLineSeries *segmentFor(Series series, qint64 x);
    void append(Series series, qint64 x, double y);
    QList<QLineSeries *> segments(std::initializer_list<Series> series) const;
    void trimAndRescale(QChart *chart, QDateTimeAxis *xAxis, QValueAxis *yAxis,
                        const QList<QLineSeries *> &series, qint64 nowMs);

    core::Millis m_window{5 * 60 * 1000};
    QBoxLayout *m_layout = nullptr;
    QChartView *m_throughputView = nullptr;
    QChartView *m_backlogView = nullptr;
    QDateTimeAxis *m_throughputX = nullptr;
    QValueAxis *m_throughputY = nullptr;
    QDateTimeAxis *m_backlogX = nullptr;
    QValueAxis *m_backlogY = nullptr;
    QLineSeries *m_delivered = nullptr;
    QLineSeries *m_failed = nullptr;
    QLineSeries *m_pending = nullptr;
    QLineSeries *m_retrying = nullptr;
    QLineSeries *m_processing = nullptr;
    QLineSeries *m_dead = nullptr;
    // Earlier segments of each series (oldest first), by Series.
    QHash<int, QList<QLineSeries *>> m_earlier;
};

} // namespace outbox::console
