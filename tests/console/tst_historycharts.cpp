// The Charts dock on a database whose dispatchers run elsewhere: the
// history they recorded (sql/006_throughput_history.sql) is drawn without a
// dispatcher in the console, lines break where a minute has no row, a
// viewer sees it too, and a database without history says so.

#include "console/widgets/historycharts.h"
#include "store/historystore.h"
#include "store/queuegauges.h"
#include "store/registrystore.h"
#include "windowtestbase.h"

#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QLabel>
#include <QLineSeries>
#include <QStackedWidget>
#include <QValueAxis>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestHistoryCharts final : public WindowTestBase {
    Q_OBJECT

private:
    QChartView *chartView(const QString &name) const { return part<QChartView>(name); }

    // The points of every line named `name` in the chart, and in how many
    // unbroken lines they are drawn.
    static std::pair<QList<QPointF>, int> line(const QChartView *view, const QString &name) {
        QList<QPointF> points;
        int segments = 0;
        const auto all = view->chart()->series();
        for (QAbstractSeries *s : all) {
            auto *series = qobject_cast<QLineSeries *>(s);
            if (!series || series->name() != name || series->count() == 0)
                continue;
            points += series->points();
            ++segments;
        }
        return {points, segments};
    }

    QString message() const { return part<QLabel>(QStringLiteral("historyMessage"))->text(); }
    bool chartsShown() const {
        const auto *view = chartView(QStringLiteral("historyThroughputChart"));
        return view && view->isVisible();
    }

    // A dispatcher elsewhere: registered, and its deliveries of the current
    // minute recorded through the store as its heartbeat does.
    void recordAsDispatcher(qint64 delivered, qint64 failed, qint64 dead) {
        const QUuid worker = QUuid::createUuid();
        const QString token = store::RegistryStore::newToken();
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("SELECT outbox_dispatcher_register(?::uuid, ?, 'elsewhere',"
                                       " 42, 'test', 'outboxctl', NULL, 'http://127.0.0.1:1/', 4,"
                                       " 5000, now())"),
                        {worker.toString(QUuid::WithoutBraces), token}));
        store::HistoryStore history(m_db);
        auto wanted = history.record(worker, token, delivered, failed, dead);
        QVERIFY2(wanted.ok(), qPrintable(wanted.errorMessage()));
        store::QueueGauges gauges;
        gauges.pending = 12;
        gauges.dueNow = 9;
        gauges.oldestDueAgeSeconds = 30;
        QVERIFY(history.recordBacklog(worker, token, gauges).ok());
    }

    // The window on a database with history (from a dispatcher elsewhere and
    // earlier minutes), connected as `user`, without a dispatcher of its own.
    void checkHistoryShown(const QString &user) {
        // Ten minutes ago for three minutes, a gap, then the current minute.
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_throughput_history (minute,"
                                         " worker_id, delivered, failed, dead) SELECT"
                                         " date_trunc('minute', now()) - g * interval '1 minute',"
                                         " gen_random_uuid(), 100 * g, g, 0"
                                         " FROM generate_series(8, 10) g")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_backlog_history (minute, pending,"
                                             " processing, dead, due_now, oldest_due_age_s,"
                                             " recorded_by) SELECT date_trunc('minute', now()) -"
                                             " g * interval '1 minute', 50 * g, 2, 1, 40 * g, g,"
                                             " gen_random_uuid() FROM generate_series(8, 10) g")));
        recordAsDispatcher(60, 5, 1);
        openWindow(false, user);

        auto *dock = part<QDockWidget>(QStringLiteral("chartsDock"));
        QVERIFY(dock);
        QVERIFY(dock->isVisible()); // shown by default, for every connection
        QVERIFY(!part<QDockWidget>(QStringLiteral("dispatcherDock"))->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(chartsShown(), kWindowTimeout);

        const auto delivered =
            line(chartView(QStringLiteral("historyThroughputChart")), QStringLiteral("delivered"));
        QCOMPARE(delivered.first.size(), 4);
        QCOMPARE(delivered.second, 2); // the gap breaks the line
        // ... and a caption says why, with the missing minutes (7 to 1 ago).
        auto *gaps = part<QLabel>(QStringLiteral("historyGaps"));
        QVERIFY(gaps && gaps->isVisible());
        const auto minutesAgo = [&delivered](int n) {
            return QDateTime::fromMSecsSinceEpoch(qint64(delivered.first.last().x()) - n * 60000)
                .toLocalTime()
                .toString(QStringLiteral("HH:mm"));
        };
        QVERIFY2(gaps->text().contains(QLatin1String("no dispatcher was running")) &&
                     gaps->text().contains(minutesAgo(7) + QStringLiteral("–") + minutesAgo(1)),
                 qPrintable(gaps->text()));
        double sum = 0;
        for (const QPointF &p : delivered.first)
            sum += p.y();
        QCOMPARE(sum, 60.0 + 800 + 900 + 1000);
        // Oldest minute first, on whole minutes.
        QVERIFY(delivered.first.first().x() < delivered.first.last().x());
        QCOMPARE(qint64(delivered.first.last().x()) % 60000, 0);

        const auto pending =
            line(chartView(QStringLiteral("historyBacklogChart")), QStringLiteral("pending"));
        QCOMPARE(pending.first.size(), 4);
        QCOMPARE(pending.first.last().y(), 12.0);
        const auto due =
            line(chartView(QStringLiteral("historyBacklogChart")), QStringLiteral("due now"));
        QCOMPARE(due.first.size(), 4);
        const auto age =
            line(chartView(QStringLiteral("historyAgeChart")), QStringLiteral("oldest due"));
        QCOMPARE(age.first.size(), 4);
        QCOMPARE(age.first.last().y(), 30.0);
        // Whole seconds on the waiting axis, never "0.005 s".
        const auto axes = chartView(QStringLiteral("historyAgeChart"))->chart()->axes(Qt::Vertical);
        QCOMPARE(axes.size(), 1);
        auto *seconds = qobject_cast<QValueAxis *>(axes.first());
        QVERIFY(seconds);
        QCOMPARE(seconds->labelFormat(), QStringLiteral("%.0f"));
        QVERIFY(seconds->max() >= 10.0);
    }

private Q_SLOTS:
    void initTestCase() {
        startCluster();
        if (!QTest::currentTestFailed())
            createLoginRoles(QStringLiteral("tst_charts_"), {QStringLiteral("viewer")});
    }

    void historyWithoutEmbeddedDispatcher() { checkHistoryShown({}); }
    // The viewer role may read the history (sql/006 and roles.sql grant it).
    void historyShownToAViewer() { checkHistoryShown(QStringLiteral("tst_charts_viewer")); }

    // Minutes one after the other: one line each, and no word about gaps.
    void noGapNoCaption() {
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_throughput_history (minute,"
                                             " worker_id, delivered, failed, dead) SELECT"
                                             " date_trunc('minute', now()) - g * interval '1"
                                             " minute', gen_random_uuid(), 10, 0, 0"
                                             " FROM generate_series(1, 3) g")));
        recordAsDispatcher(60, 5, 1);
        openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(chartsShown(), kWindowTimeout);
        const auto delivered =
            line(chartView(QStringLiteral("historyThroughputChart")), QStringLiteral("delivered"));
        QCOMPARE(delivered.first.size(), 4);
        QCOMPARE(delivered.second, 1);
        auto *gaps = part<QLabel>(QStringLiteral("historyGaps"));
        QVERIFY(gaps);
        QVERIFY(!gaps->isVisible());
    }

    void noHistorySaysSo() {
        openWindow();
        QTRY_VERIFY_WITH_TIMEOUT(message().contains(QStringLiteral("No dispatcher has recorded "
                                                                   "history on this database yet")),
                                 kWindowTimeout);
        QVERIFY(part<QLabel>(QStringLiteral("historyMessage"))->isVisible());
        QVERIFY(!chartsShown());
    }
};

QTEST_MAIN(TestHistoryCharts)
#include "tst_historycharts.moc"
