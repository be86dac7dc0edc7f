// The console's background-job list, its alert rules and the per-database
// settings, headless: no database, no widgets. The models are wrapped in
// QAbstractItemModelTester; time comes from a clock the test moves.

#include "console/model/alertmonitor.h"
#include "console/model/databasesettings.h"
#include "console/model/joblistmodel.h"

#include <QAbstractItemModelTester>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox;
using console::AlertKind;
using console::AlertMonitor;
using console::ConnectionState;
using console::DatabaseSettings;
using console::JobListModel;

namespace {

QString cell(const JobListModel &model, int row, int column) {
    return model.index(row, column).data().toString();
}

// Counts at `seconds` after a fixed moment on the server's clock.
store::StatusCounts countsAt(qint64 seconds, qint64 pending, qint64 dead, qint64 delivered = 0,
                             qint64 processing = 0, qint64 oldestAgeSeconds = 0) {
    const QDateTime base = QDateTime::fromSecsSinceEpoch(1'800'000'000, Qt::UTC);
    store::StatusCounts c;
    c.serverTime = base.addSecs(seconds);
    c.pending = pending;
    c.dead = dead;
    c.delivered = delivered;
    c.processing = processing;
    if (pending > 0) {
        c.oldestPendingAt = c.serverTime.addSecs(-oldestAgeSeconds);
        c.oldestDueAt = c.oldestPendingAt; // every pending event is due
    }
    return c;
}

} // namespace

class TestJobsAndAlerts final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void jobListShowsProgressRateAndTimeLeft();
    void jobListStopsAndClears();
    void alertsAreEdgeTriggered();
    void alertOnDeathRate();
    void alertWhenNothingClaims();
    void alertOnLostConnectionOnlyAfterConnected();
    void settingsArePerDatabase();
};

void TestJobsAndAlerts::jobListShowsProgressRateAndTimeLeft() {
    JobListModel model;
    QAbstractItemModelTester tester(&model);
    qint64 now = 0;
    model.setClock([&now] { return now; });
    QSignalSpy running(&model, &JobListModel::runningCountChanged);

    const int a = model.addJob(QStringLiteral("Requeue 1,000 events"), [] {});
    const int b = model.addJob(QStringLiteral("Export to out.jsonl"), [] {});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.runningCount(), 2);
    QCOMPARE(running.constLast().at(0).toInt(), 2);
    QCOMPARE(cell(model, 0, JobListModel::TitleColumn), QStringLiteral("Requeue 1,000 events"));
    QCOMPARE(cell(model, 0, JobListModel::ProgressColumn), QStringLiteral("Counting…"));
    QCOMPARE(model.index(0, 0).data(JobListModel::PermilleRole).toInt(), -1);

    // 200 of 1,000 after 4 s: 50 events/s, 16 s left.
    now = 4000;
    model.setProgress(a, 200, 1000);
    QCOMPARE(model.index(0, 0).data(JobListModel::PermilleRole).toInt(), 200);
    QVERIFY2(cell(model, 0, JobListModel::ProgressColumn).contains(QLatin1String("200")),
             qPrintable(cell(model, 0, JobListModel::ProgressColumn)));
    QCOMPARE(cell(model, 0, JobListModel::RateColumn), JobListModel::rateText(50));
    QCOMPARE(cell(model, 0, JobListModel::RemainingColumn), QStringLiteral("about 16 s left"));
    QCOMPARE(cell(model, 0, JobListModel::StopColumn), QStringLiteral("Stop"));
    // The other job is untouched.
    QCOMPARE(cell(model, 1, JobListModel::ProgressColumn), QStringLiteral("Counting…"));

    QCOMPARE(JobListModel::remainingText(90'000), QStringLiteral("about 2 min left"));
    QCOMPARE(JobListModel::remainingText(3'720'000), QStringLiteral("about 1 h 2 min left"));
    QVERIFY(JobListModel::rateText(0).isEmpty());

    QSignalSpy ended(&model, &JobListModel::jobEnded);
    model.setEnded(a, JobListModel::State::Finished, QStringLiteral("Changed 1,000"));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(model.stateAt(0), JobListModel::State::Finished);
    QCOMPARE(cell(model, 0, JobListModel::ProgressColumn), QStringLiteral("Changed 1,000"));
    QVERIFY(cell(model, 0, JobListModel::StopColumn).isEmpty());
    QCOMPARE(model.runningCount(), 1);
    // An ended job reports nothing more.
    model.setEnded(a, JobListModel::State::Failed, QStringLiteral("late"));
    model.setProgress(a, 5, 10);
    QCOMPARE(ended.size(), 1);
    QCOMPARE(model.stateAt(0), JobListModel::State::Finished);
    Q_UNUSED(b)
}

void TestJobsAndAlerts::jobListStopsAndClears() {
    JobListModel model;
    QAbstractItemModelTester tester(&model);
    int stopped = 0;
    const int a = model.addJob(QStringLiteral("a"), [&stopped] { ++stopped; });
    model.addJob(QStringLiteral("b"), [&stopped] { ++stopped; });
    model.addJob(QStringLiteral("c"), [&stopped] { ++stopped; });

    QVERIFY(model.stop(0));
    QCOMPARE(stopped, 1);
    QCOMPARE(model.stateAt(0), JobListModel::State::Stopping);
    QVERIFY(!model.index(0, 0).data(JobListModel::CanStopRole).toBool());
    QVERIFY(!model.stop(0)); // asked once
    QCOMPARE(stopped, 1);
    QCOMPARE(model.runningCount(), 3); // stopping jobs still run their batch

    model.setEnded(a, JobListModel::State::Stopped, QStringLiteral("Stopped: changed 20"));
    QCOMPARE(model.runningCount(), 2);
    model.stopAll();
    QCOMPARE(stopped, 3);
    model.clearFinished();
    QCOMPARE(model.rowCount(), 2); // only ended jobs go
    QCOMPARE(model.titleAt(0), QStringLiteral("b"));
    QVERIFY(!model.stop(7));
}

void TestJobsAndAlerts::alertsAreEdgeTriggered() {
    AlertMonitor monitor;
    console::AlertThresholds t{.oldestDueAge = std::chrono::minutes(5),
                               .deathsPerMinute = 0,
                               .unclaimedFor = std::chrono::seconds(0)};
    monitor.setThresholds(t);
    QSignalSpy raised(&monitor, &AlertMonitor::raised);
    QSignalSpy cleared(&monitor, &AlertMonitor::cleared);

    monitor.addCounts(countsAt(0, 10, 0, 0, 1, 60));
    QCOMPARE(raised.size(), 0);
    // Over the threshold, but only for a moment (a requeue of old events
    // that are delivered at once): no alert.
    monitor.addCounts(countsAt(2, 10, 0, 0, 1, 301));
    monitor.addCounts(countsAt(4, 10, 0, 0, 1, 60));
    monitor.addCounts(countsAt(6, 10, 0, 0, 1, 400));
    monitor.addCounts(countsAt(34, 10, 0, 0, 1, 428));
    QCOMPARE(raised.size(), 0);
    // Half a minute over it: raised.
    monitor.addCounts(countsAt(36, 10, 0, 0, 1, 430));
    QCOMPARE(raised.size(), 1);
    const auto alert = raised.at(0).at(0).value<console::Alert>();
    QCOMPARE(alert.kind, AlertKind::OldestDue);
    QCOMPARE(alert.view, std::optional(core::Status::Pending));
    QVERIFY2(alert.text.contains(QLatin1String("5 min")), qPrintable(alert.text));
    // No repeat while it holds.
    for (int i = 0; i < 10; ++i)
        monitor.addCounts(countsAt(38 + 2 * i, 10, 0, 0, 1, 432 + i));
    QCOMPARE(raised.size(), 1);
    QVERIFY(monitor.isActive(AlertKind::OldestDue));
    // Cleared once it stops holding, and re-armed.
    monitor.addCounts(countsAt(60, 0, 0, 10));
    QCOMPARE(cleared.size(), 1);
    QVERIFY(!monitor.isActive(AlertKind::OldestDue));
    monitor.addCounts(countsAt(62, 0, 0, 10));
    QCOMPARE(cleared.size(), 1);
    monitor.addCounts(countsAt(64, 3, 0, 10, 0, 600));
    monitor.addCounts(countsAt(94, 3, 0, 10, 0, 630));
    QCOMPARE(raised.size(), 2);

    // Zero turns the alert off.
    t.oldestDueAge = std::chrono::seconds(0);
    monitor.reset();
    monitor.setThresholds(t);
    monitor.addCounts(countsAt(0, 10, 0, 0, 1, 100000));
    QCOMPARE(raised.size(), 2);
}

void TestJobsAndAlerts::alertOnDeathRate() {
    AlertMonitor monitor;
    const console::AlertThresholds t{.oldestDueAge = std::chrono::seconds(0),
                                     .deathsPerMinute = 10,
                                     .unclaimedFor = std::chrono::seconds(0)};
    monitor.setThresholds(t);
    QSignalSpy raised(&monitor, &AlertMonitor::raised);

    // 8 a minute: below.
    for (int s = 0; s <= 120; s += 2)
        monitor.addCounts(countsAt(s, 0, 100 + s * 8 / 60));
    QCOMPARE(raised.size(), 0);
    const qint64 base = 100 + 120 * 8 / 60;
    // 30 a minute for a minute: above, once however long it lasts.
    for (int s = 122; s <= 300; s += 2)
        monitor.addCounts(countsAt(s, 0, base + (s - 120) / 2));
    QCOMPARE(raised.size(), 1);
    QCOMPARE(raised.at(0).at(0).value<console::Alert>().kind, AlertKind::DeathRate);
    QCOMPARE(raised.at(0).at(0).value<console::Alert>().view, std::optional(core::Status::Dead));
    // While it holds, its figures follow the live ones (the banner shows
    // them), without a second notice.
    QSignalSpy updated(&monitor, &AlertMonitor::updated);
    const QString firstText = raised.at(0).at(0).value<console::Alert>().text;
    monitor.addCounts(countsAt(302, 0, base + 90 + 600));
    QCOMPARE(raised.size(), 1);
    QVERIFY(!updated.isEmpty());
    const QString now = monitor.activeAlerts().constFirst().text;
    QVERIFY2(now != firstText && now.contains(console::formatCount(629)),
             qPrintable(firstText + QLatin1String(" / ") + now));
    // A requeue lowers the dead count: that is no death, and no new alert.
    monitor.addCounts(countsAt(242, 0, 5));
    QCOMPARE(raised.size(), 1);
    QVERIFY(!monitor.isActive(AlertKind::DeathRate));

    // A burst right after the start: a rate needs a minute of history, then
    // the burst counts.
    AlertMonitor fresh;
    fresh.setThresholds(t);
    QSignalSpy burst(&fresh, &AlertMonitor::raised);
    fresh.addCounts(countsAt(0, 0, 100));
    fresh.addCounts(countsAt(2, 0, 150));
    QCOMPARE(burst.size(), 0);
    fresh.addCounts(countsAt(60, 0, 150));
    QCOMPARE(burst.size(), 1);
    QVERIFY2(burst.at(0).at(0).value<console::Alert>().text.contains(QLatin1String("50 events")),
             qPrintable(burst.at(0).at(0).value<console::Alert>().text));
}

void TestJobsAndAlerts::alertWhenNothingClaims() {
    AlertMonitor monitor;
    monitor.setThresholds({.oldestDueAge = std::chrono::seconds(0),
                           .deathsPerMinute = 0,
                           .unclaimedFor = std::chrono::minutes(2)});
    QSignalSpy raised(&monitor, &AlertMonitor::raised);

    // Deliveries move: fine, however long it runs.
    for (int s = 0; s <= 300; s += 10)
        monitor.addCounts(countsAt(s, 50, 0, s, 0, 200));
    QCOMPARE(raised.size(), 0);
    // Nothing moves any more while 50 events wait.
    for (int s = 310; s < 420; s += 10)
        monitor.addCounts(countsAt(s, 50, 0, 300, 0, 200 + s));
    QCOMPARE(raised.size(), 0);
    monitor.addCounts(countsAt(430, 50, 0, 300, 0, 700));
    QCOMPARE(raised.size(), 1);
    QCOMPARE(raised.at(0).at(0).value<console::Alert>().kind, AlertKind::Unclaimed);
    // A dispatcher claims: cleared.
    QSignalSpy cleared(&monitor, &AlertMonitor::cleared);
    monitor.addCounts(countsAt(440, 45, 0, 300, 5, 700));
    QCOMPARE(cleared.size(), 1);
}

void TestJobsAndAlerts::alertOnLostConnectionOnlyAfterConnected() {
    AlertMonitor monitor;
    QSignalSpy raised(&monitor, &AlertMonitor::raised);
    QSignalSpy cleared(&monitor, &AlertMonitor::cleared);
    // A first connection that never came up is the connection dialog's
    // business, not an alert.
    monitor.setConnectionState(ConnectionState::Connecting);
    monitor.setConnectionState(ConnectionState::Reconnecting, QStringLiteral("refused"));
    QCOMPARE(raised.size(), 0);
    monitor.setConnectionState(ConnectionState::Connected);
    monitor.setConnectionState(ConnectionState::Reconnecting,
                               QStringLiteral("server closed the connection"));
    monitor.setConnectionState(ConnectionState::Reconnecting, QStringLiteral("refused"));
    QCOMPARE(raised.size(), 1);
    const auto alert = raised.at(0).at(0).value<console::Alert>();
    QCOMPARE(alert.kind, AlertKind::ConnectionLost);
    QVERIFY(!alert.view);
    QVERIFY2(alert.text.contains(QLatin1String("server closed")), qPrintable(alert.text));
    monitor.setConnectionState(ConnectionState::Connected);
    QCOMPARE(cleared.size(), 1);
    monitor.setConnectionState(ConnectionState::Reconnecting);
    QCOMPARE(raised.size(), 2);
}

void TestJobsAndAlerts::settingsArePerDatabase() {
    QTemporaryDir dir;
    QSettings qs(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
    core::ConnInfo demo;
    demo.host = QStringLiteral("/tmp/outbox-demo-x1");
    demo.port = 54011;
    demo.dbname = QStringLiteral("outbox_demo");
    core::ConnInfo prod;
    prod.host = QStringLiteral("db1.internal");
    prod.dbname = QStringLiteral("orders");
    core::ConnInfo prodExplicitPort = prod;
    prodExplicitPort.port = 5432;
    QCOMPARE(DatabaseSettings::keyFor(prod), DatabaseSettings::keyFor(prodExplicitPort));
    QVERIFY(DatabaseSettings::keyFor(prod) != DatabaseSettings::keyFor(demo));

    // A rate chosen on the demo stays with the demo.
    DatabaseSettings(&qs, DatabaseSettings::keyFor(demo)).setRequeueRate(5);
    QCOMPARE(DatabaseSettings(&qs, DatabaseSettings::keyFor(demo)).requeueRate(), 5.0);
    QCOMPARE(DatabaseSettings(&qs, DatabaseSettings::keyFor(prod)).requeueRate(),
             DatabaseSettings::kDefaultRequeueRate);
    DatabaseSettings(&qs, DatabaseSettings::keyFor(prod)).setRequeueRate(-3);
    QCOMPARE(DatabaseSettings(&qs, DatabaseSettings::keyFor(prod)).requeueRate(), 0.0);

    console::AlertThresholds t;
    t.oldestDueAge = std::chrono::seconds(90);
    t.deathsPerMinute = 2.5;
    t.oldestDueFor = std::chrono::seconds(5);
    t.unclaimedFor = std::chrono::seconds(0);
    t.connectionLost = false;
    DatabaseSettings(&qs, DatabaseSettings::keyFor(prod)).setAlertThresholds(t);
    qs.sync();
    QSettings reread(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
    QCOMPARE(DatabaseSettings(&reread, DatabaseSettings::keyFor(prod)).alertThresholds(), t);
    QCOMPARE(DatabaseSettings(&reread, DatabaseSettings::keyFor(demo)).alertThresholds(),
             console::AlertThresholds());
    // No key: defaults, nothing written.
    DatabaseSettings(&reread, QString()).setRequeueRate(1);
    QCOMPARE(DatabaseSettings(&reread, QString()).requeueRate(),
             DatabaseSettings::kDefaultRequeueRate);
}

QTEST_GUILESS_MAIN(TestJobsAndAlerts)
#include "tst_jobsandalerts.moc"
