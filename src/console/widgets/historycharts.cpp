#include "console/widgets/historycharts.h"

#include "console/model/storeclient.h"
#include "console/widgets/chartstyle.h"

#include <QBoxLayout>
#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMap>
#include <QResizeEvent>
#include <QScrollArea>
#include <QStackedWidget>
#include <QValueAxis>

#include <algorithm>

namespace outbox::console {

namespace {

constexpr qint64 kMinuteMs = 60'000;
constexpr QSize kChartMinimum{220, 190}; // axis labels and a legend still fit

enum LineIndex {
    Delivered,
    Failed,
    DeadPerMinute,
    Pending,
    Processing,
    Dead,
    DueNow,
    OldestDue,
};

} // namespace

HistoryCharts::HistoryCharts(QWidget *parent)
    : QWidget(parent)
    , m_stack(new QStackedWidget(this))
    , m_message(new QLabel) {
    setObjectName(QStringLiteral("historyCharts"));
    auto *throughput = makeChart(tr("Per minute, all dispatchers (events)"));
    auto *backlog = makeChart(tr("Backlog (rows)"));
    auto *age = makeChart(tr("Oldest due event (waiting, s)"));
    const auto line = [](QChart *chart, const QString &name, QColor color) {
        return Line{chart, name, color, {makeSeries(chart, name, color)}};
    };
    m_lines = {line(throughput, tr("delivered"), QColor(0x26, 0xa2, 0x69)),
               line(throughput, tr("failed"), QColor(0xe0, 0x1b, 0x24)),
               line(throughput, tr("dead"), QColor(0x3d, 0x38, 0x46)),
               line(backlog, tr("pending"), QColor(0x1c, 0x71, 0xd8)),
               line(backlog, tr("processing"), QColor(0x91, 0x41, 0xac)),
               line(backlog, tr("dead"), QColor(0x3d, 0x38, 0x46)),
               line(backlog, tr("due now"), QColor(0xe6, 0x61, 0x00)),
               line(age, tr("oldest due"), QColor(0x1a, 0x5f, 0xb4))};
    // Due now is most of pending while a backlog drains: dashed, so the
    // line under it shows.
    QPen dashed = m_lines[DueNow].segments.constFirst()->pen();
    dashed.setStyle(Qt::DashLine);
    m_lines[DueNow].segments.constFirst()->setPen(dashed);
    QDateTimeAxis *x = nullptr;
    // Whole minutes: HH:mm names each point.
    const QString minutes = QStringLiteral("HH:mm");
    addTimeAxes(throughput, x, m_throughputY, minutes, QStringLiteral("%.0f"));
    m_timeAxes << x;
    addTimeAxes(backlog, x, m_backlogY, minutes, QStringLiteral("%.0f"));
    m_timeAxes << x;
    // Whole seconds: a due event that waited 5 ms is "0 s", not "0.005 s".
    addTimeAxes(age, x, m_ageY, minutes, QStringLiteral("%.0f"));
    m_timeAxes << x;

    m_throughputView = new QChartView(throughput);
    m_backlogView = new QChartView(backlog);
    m_ageView = new QChartView(age);
    m_throughputView->setObjectName(QStringLiteral("historyThroughputChart"));
    m_backlogView->setObjectName(QStringLiteral("historyBacklogChart"));
    m_ageView->setObjectName(QStringLiteral("historyAgeChart"));
    auto *charts = new QWidget;
    auto *page = new QVBoxLayout(charts);
    page->setContentsMargins(0, 0, 0, 0);
    // Said only when a line breaks, so that a gap is not read as a fault of
    // the chart or as "nothing happened".
    m_gaps = new QLabel;
    m_gaps->setObjectName(QStringLiteral("historyGaps"));
    m_gaps->setWordWrap(true);
    m_gaps->setContentsMargins(4, 2, 4, 0);
    m_gaps->hide();
    page->addWidget(m_gaps);
    m_row = new QBoxLayout(QBoxLayout::LeftToRight);
    m_row->setContentsMargins(0, 0, 0, 0);
    page->addLayout(m_row, 1);
    for (QChartView *view : {m_throughputView, m_backlogView, m_ageView}) {
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumSize(kChartMinimum);
        m_row->addWidget(view);
    }
    // The charts keep a readable size and scroll in a small pane: what they
    // need never grows the window (WindowLayout keeps it on the screen).
    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("historyScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setWidget(charts);

    m_message->setObjectName(QStringLiteral("historyMessage"));
    m_message->setAlignment(Qt::AlignCenter);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_stack->addWidget(m_message);
    m_stack->addWidget(scroll);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);
    showMessage(tr("Not connected."));

    m_timer.setInterval(std::chrono::minutes(1)); // one row per minute
    connect(&m_timer, &QTimer::timeout, this, &HistoryCharts::refresh);
}

HistoryCharts::~HistoryCharts() = default;

void HistoryCharts::resizeEvent(QResizeEvent *event) {
    // In a row in the (wide) bottom dock, stacked when moved to a tall one
    // that holds all three.
    const QSize size = event->size();
    const bool tall =
        size.width() < 2 * size.height() && size.height() >= 3 * kChartMinimum.height();
    m_row->setDirection(tall ? QBoxLayout::TopToBottom : QBoxLayout::LeftToRight);
    QWidget::resizeEvent(event);
}

void HistoryCharts::setClient(StoreClient *client) {
    if (m_client)
        disconnect(m_client, nullptr, this, nullptr);
    m_client = client;
    m_requestId = 0;
    m_timer.stop();
    showMessage(client ? tr("Connecting…") : tr("Not connected."));
    if (!client)
        return;
    connect(client, &StoreClient::connectionStateChanged, this, [this](ConnectionState state) {
        if (state == ConnectionState::Connected)
            refresh();
    });
    connect(client, &StoreClient::historyReady, this,
            [this](RequestId id, const store::ThroughputHistory &history) {
                if (id == m_requestId)
                    showHistory(history);
            });
    connect(client, &StoreClient::requestFailed, this,
            [this](RequestId id, RequestKind, const core::Error &error) {
                if (id == m_requestId)
                    showMessage(tr("Cannot read the history: %1").arg(error.message));
            });
    m_timer.start();
    refresh();
}

void HistoryCharts::refresh() {
    if (m_client && m_client->connectionState() == ConnectionState::Connected)
        m_requestId = m_client->requestHistory(kMinutes, QStringLiteral("history"));
}

void HistoryCharts::showMessage(const QString &text) {
    m_message->setText(text);
    m_stack->setCurrentWidget(m_message);
}

void HistoryCharts::showHistory(const store::ThroughputHistory &history) {
    if (history.unsupported) {
        return showMessage(tr("This database's outbox schema has no history yet: run "
                              "`outboxctl migrate`, and the dispatchers record it."));
    }
    if (history.isEmpty()) {
        return showMessage(history.recordedEarlier
                               ? tr("No dispatcher has recorded history on this database in the "
                                    "last hour.")
                               : tr("No dispatcher has recorded history on this database yet."));
    }
    m_stack->setCurrentIndex(1);
    const auto x = [](const QDateTime &minute) { return double(minute.toMSecsSinceEpoch()); };
    QList<QList<QPointF>> points(m_lines.size());
    for (const store::ThroughputMinute &m : history.throughput) {
        points[Delivered].append({x(m.minute), double(m.delivered)});
        points[Failed].append({x(m.minute), double(m.failed)});
        points[DeadPerMinute].append({x(m.minute), double(m.dead)});
    }
    for (const store::BacklogMinute &m : history.backlog) {
        points[Pending].append({x(m.minute), double(m.pending)});
        points[Processing].append({x(m.minute), double(m.processing)});
        points[Dead].append({x(m.minute), double(m.dead)});
        points[DueNow].append({x(m.minute), double(m.dueNow)});
        points[OldestDue].append({x(m.minute), m.oldestDueAgeSeconds});
    }
    QMap<qint64, qint64> gaps; // first missing minute -> last missing minute (ms)
    for (int i = 0; i < m_lines.size(); ++i)
        plot(m_lines[i], points.at(i), gaps);
    showGaps(gaps);
    const qint64 right =
        (history.serverTime.isValid() ? history.serverTime : QDateTime::currentDateTimeUtc())
            .toMSecsSinceEpoch();
    for (QDateTimeAxis *axis : std::as_const(m_timeAxes)) {
        axis->setRange(QDateTime::fromMSecsSinceEpoch(right - kMinutes * kMinuteMs),
                       QDateTime::fromMSecsSinceEpoch(right));
    }
    rescale(m_throughputY, {&m_lines[Delivered], &m_lines[Failed], &m_lines[DeadPerMinute]});
    rescale(m_backlogY,
            {&m_lines[Pending], &m_lines[Processing], &m_lines[Dead], &m_lines[DueNow]});
    rescale(m_ageY, {&m_lines[OldestDue]});
}

void HistoryCharts::showGaps(const QMap<qint64, qint64> &gaps) {
    QStringList spans;
    const auto time = [](qint64 ms) {
        return QDateTime::fromMSecsSinceEpoch(ms).toLocalTime().toString(QStringLiteral("HH:mm"));
    };
    for (auto gap = gaps.cbegin(); gap != gaps.cend(); ++gap) {
        spans << (gap.key() == gap.value() ? time(gap.key())
                                           : tr("%1–%2").arg(time(gap.key()), time(gap.value())));
    }
    m_gaps->setText(tr("The lines break where no dispatcher was running (nothing was "
                       "recorded): %1.")
                        .arg(spans.join(QStringLiteral(", "))));
    m_gaps->setVisible(!gaps.isEmpty());
}

void HistoryCharts::plot(Line &line, const QList<QPointF> &points, QMap<qint64, qint64> &gaps) {
    // One segment per run of consecutive minutes: a missing minute had no
    // dispatcher (or no sample), and the line breaks there.
    QList<QList<QPointF>> runs;
    for (const QPointF &p : points) {
        if (runs.isEmpty() || p.x() - runs.constLast().constLast().x() > double(kMinuteMs)) {
            if (!runs.isEmpty()) {
                const qint64 first = qint64(runs.constLast().constLast().x()) + kMinuteMs;
                gaps.insert(first, std::max(gaps.value(first), qint64(p.x()) - kMinuteMs));
            }
            runs.append(QList<QPointF>());
        }
        runs.last().append(p);
    }
    if (runs.isEmpty())
        runs.append(QList<QPointF>());
    while (line.segments.size() < runs.size()) {
        QLineSeries *segment = makeSeries(line.chart, line.name, line.color);
        segment->setPen(line.segments.constFirst()->pen());
        for (QAbstractAxis *axis : line.segments.constFirst()->attachedAxes())
            segment->attachAxis(axis);
        for (QLegendMarker *marker : line.chart->legend()->markers(segment))
            marker->setVisible(false); // one legend entry per line
        line.segments.append(segment);
    }
    while (line.segments.size() > runs.size()) {
        QLineSeries *gone = line.segments.takeLast();
        line.chart->removeSeries(gone);
        delete gone;
    }
    for (int i = 0; i < runs.size(); ++i) {
        // A lone minute is a dot, not an invisible line.
        line.segments[i]->setPointsVisible(runs.at(i).size() == 1);
        line.segments[i]->replace(runs.at(i));
    }
}

void HistoryCharts::rescale(QValueAxis *axis, std::initializer_list<const Line *> lines) {
    double top = 0.0;
    for (const Line *line : lines) {
        for (const QLineSeries *segment : line->segments) {
            for (const QPointF &p : segment->points())
                top = std::max(top, p.y());
        }
    }
    // At least 0..10, so that whole-number labels stay apart.
    axis->setRange(0.0, niceCeiling(std::max(top * 1.1, 10.0)));
}

} // namespace outbox::console
