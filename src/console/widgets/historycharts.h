#pragma once

#include "console/model/consoletypes.h"
#include "store/historystore.h"

#include <QMap>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <initializer_list>

class QChart;
class QChartView;
class QDateTimeAxis;
class QBoxLayout;
class QLabel;
class QLineSeries;
class QStackedWidget;
class QValueAxis;

namespace outbox::console {

class StoreClient;

// The last hour of the database the console is connected to, from the
// history its dispatchers write (store::HistoryStore): delivered, failed and
// dead per minute summed over every dispatcher, the backlog per status with
// the events due now, and the age of the oldest due event. Shown for any
// connection, whether or not a dispatcher runs in this console; read when the
// connection comes up and then every minute, through the StoreClient (the
// GUI thread never waits on the database). A minute without a row breaks
// the lines, and a caption above the charts says so with the minutes. Without any history the
// charts give way to a sentence saying so.
class HistoryCharts final : public QWidget {
    Q_OBJECT
public:
    static constexpr int kMinutes = 60;

    explicit HistoryCharts(QWidget *parent = nullptr);
    ~HistoryCharts() override;
    Q_DISABLE_COPY_MOVE(HistoryCharts)

    // Not owned; null to let go (before the client is destroyed).
    void setClient(StoreClient *client);

public Q_SLOTS:
    void refresh();
    void showHistory(const outbox::store::ThroughputHistory &history);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    struct Line {
        QChart *chart;
        QString name;
        QColor color;
        QList<QLineSeries *> segments;
    };
    void showMessage(const QString &text);
    // Draws `points` as one segment per run of whole minutes; each missing
    // span is added to `gaps` (its first and last missing minute, ms).
    void plot(Line &line, const QList<QPointF> &points, QMap<qint64, qint64> &gaps);
    // The caption that says why the lines break, shown only when they do.
    void showGaps(const QMap<qint64, qint64> &gaps);
    void rescale(QValueAxis *axis, std::initializer_list<const Line *> lines);

    QPointer<StoreClient> m_client;
    RequestId m_requestId = 0;
    QTimer m_timer;
    QStackedWidget *m_stack = nullptr;
    QBoxLayout *m_row = nullptr; // the three charts
    QLabel *m_message = nullptr;
    QLabel *m_gaps = nullptr;
    QChartView *m_throughputView = nullptr;
    QChartView *m_backlogView = nullptr;
    QChartView *m_ageView = nullptr;
    QList<QDateTimeAxis *> m_timeAxes;
    QValueAxis *m_throughputY = nullptr;
    QValueAxis *m_backlogY = nullptr;
    QValueAxis *m_ageY = nullptr;
    // By chart: delivered, failed, dead | pending, processing, dead, due | oldest due.
    QList<Line> m_lines;
};

} // namespace outbox::console
