// The window at work while jobs run, offscreen against a real cluster: a
// bulk redrive leaves the window free (no modal dialog, the table answers),
// two jobs run at once, Stop stops one, closing with a job running asks;
// "Export all matching" streams exactly the matching events and a stopped
// export leaves no file; an alert shows in the window and opens its page.

#include "console/model/databasesettings.h"
#include "console/model/eventtablemodel.h"
#include "console/model/joblistmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/bulkdialog.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/jobscontroller.h"
#include "core/uuidtext.h"
#include "windowtestbase.h"

#include <QDir>
#include <QDockWidget>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSqlQuery>
#include <QTabWidget>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace outbox;
using namespace outbox::console;
using namespace outbox::testing;

class TestJobsWindow : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void redriveRunsInTheBackground();
    void closingWithAJobRunningAsks();
    void exportAllMatching();
    void stoppedExportLeavesNoFile();
    void alertShowsInTheWindow();

private:
    JobListModel *jobs() const { return part<JobListModel>(); }
    // Opens the bulk dialog for `kind` on the current filter and starts it
    // slowly (batches of 10 at `rate` events/s) once it has counted.
    void startSlowBulk(ActionController::Kind kind, qint64 matched, double rate);
    QStringList idsWhere(const QString &condition);
};

void TestJobsWindow::startSlowBulk(ActionController::Kind kind, qint64 matched, double rate) {
    action(kind)->trigger();
    auto *dialog = m_window->findChild<BulkDialog *>();
    QVERIFY(dialog);
    QTRY_COMPARE_WITH_TIMEOUT(dialog->stage(), BulkDialog::Stage::Confirm, kWindowTimeout);
    QCOMPARE(dialog->matched(), matched);
    dialog->setRate(rate);
    dialog->setBatchSize(10);
    auto *start = dialog->findChild<QPushButton *>(QStringLiteral("startButton"));
    QVERIFY(start && start->isVisible());
    start->click();
    // The dialog hands the job over and goes.
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->findChild<BulkDialog *>(), kWindowTimeout);
}

QStringList TestJobsWindow::idsWhere(const QString &condition) {
    return testing::sqlColumn(m_db, QStringLiteral("SELECT id::text FROM outbox_events WHERE %1 "
                                                   "ORDER BY created_at, id")
                                        .arg(condition));
}

void TestJobsWindow::redriveRunsInTheBackground() {
    insertDead(600, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    insertDead(300, QStringLiteral("shipping"), QStringLiteral("timeout"));
    openWindow();
    QVERIFY(jobs());
    auto *dock = part<QDockWidget>(QStringLiteral("jobsDock"));
    QVERIFY(dock && !dock->isVisible());

    part<console::FilterBar>()->setNamespace(QStringLiteral("billing"));
    showLoaded(core::Status::Dead, 200);
    QVERIFY(!QTest::currentTestFailed());
    // 600 events at 20/s: half a minute, far longer than this test waits.
    startSlowBulk(ActionController::RequeueMatching, 600, 20);
    QVERIFY(!QTest::currentTestFailed());
    QVERIFY(dock->isVisible());
    QCOMPARE(jobs()->rowCount(), 1);
    QCOMPARE(jobs()->stateAt(0), JobListModel::State::Running);
    QVERIFY2(jobs()->titleAt(0).contains(QLatin1String("Requeue 600 events")),
             qPrintable(jobs()->titleAt(0)));
    QVERIFY(!QApplication::activeModalWidget());

    // The window keeps working: the Pending page loads the requeued events
    // while the job is still running.
    QTRY_VERIFY_WITH_TIMEOUT(
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'pending'"))
                .toInt() >= 20,
        kWindowTimeout);
    showPage(core::Status::Pending);
    refresh();
    QTRY_VERIFY_WITH_TIMEOUT(page(core::Status::Pending)->model()->rowCount() >= 20,
                             kWindowTimeout);
    QCOMPARE(jobs()->stateAt(0), JobListModel::State::Running);
    // Its progress, rate and time left are shown.
    QTRY_VERIFY_WITH_TIMEOUT(
        !jobs()->index(0, JobListModel::RateColumn).data().toString().isEmpty(), kWindowTimeout);
    QVERIFY(jobs()
                ->index(0, JobListModel::RemainingColumn)
                .data()
                .toString()
                .contains(QLatin1String("left")));
    auto *indicator = part<QToolButton>(QStringLiteral("jobsIndicator"));
    QVERIFY(indicator && indicator->isVisible());
    QCOMPARE(indicator->text(), QStringLiteral("1 job running"));

    // A second job at the same time: cancel the shipping events.
    part<console::FilterBar>()->setNamespace(QStringLiteral("shipping"));
    showPage(core::Status::Dead);
    startSlowBulk(ActionController::CancelMatching, 300, 0);
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(jobs()->rowCount(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(jobs()->stateAt(1), JobListModel::State::Finished, kWindowTimeout);
    QCOMPARE(jobs()->stateAt(0), JobListModel::State::Running); // both ran side by side
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE namespace = "
                                   "'shipping' AND last_error LIKE 'cancelled by %'")),
             QStringLiteral("300"));

    // Stop the redrive from the panel: the row's Stop button.
    QTreeView *view = part<QTreeView>(QStringLiteral("jobsView"));
    QVERIFY(view);
    // Every column in view, Rate and Time left too, without scrolling.
    for (int column = 0; column < view->model()->columnCount(); ++column) {
        const QRect cell = view->visualRect(view->model()->index(0, column));
        QVERIFY2(view->viewport()->rect().contains(cell),
                 qPrintable(QStringLiteral("column %1 at %2..%3 of a viewport %4 wide")
                                .arg(column)
                                .arg(cell.left())
                                .arg(cell.right())
                                .arg(view->viewport()->width())));
    }
    const QModelIndex stopCell = view->model()->index(0, JobListModel::StopColumn);
    view->scrollTo(stopCell);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(stopCell).center());
    QTRY_COMPARE_WITH_TIMEOUT(jobs()->stateAt(0), JobListModel::State::Stopped, kWindowTimeout);
    const QString requeued =
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE namespace = 'billing' AND "
                              "status = 'pending'"));
    QVERIFY2(requeued.toInt() >= 20 && requeued.toInt() < 600, qPrintable(requeued));
    QVERIFY2(jobs()->index(0, 0).data(JobListModel::SummaryRole).toString().contains(requeued),
             qPrintable(jobs()->index(0, 0).data(JobListModel::SummaryRole).toString()));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit WHERE action = 'requeue' "
                                   "AND finished_at IS NOT NULL AND affected = ?"),
                    {requeued.toInt()}),
             QStringLiteral("1"));
    QTRY_VERIFY_WITH_TIMEOUT(!indicator->isVisible(), kWindowTimeout);
}

void TestJobsWindow::closingWithAJobRunningAsks() {
    insertDead(400, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    showLoaded(core::Status::Dead, 200);
    QVERIFY(!QTest::currentTestFailed());
    startSlowBulk(ActionController::RequeueMatching, 400, 10);
    QVERIFY(!QTest::currentTestFailed());

    // Keep running (the default): the window stays, the job too.
    answerNext<QMessageBox>([](QMessageBox *box) {
        QCOMPARE(box->objectName(), QStringLiteral("closeWithJobsBox"));
        QCOMPARE(box->defaultButton()->objectName(), QStringLiteral("keepRunningButton"));
        box->defaultButton()->click();
    });
    m_window->close();
    QTRY_VERIFY_WITH_TIMEOUT(!QApplication::activeModalWidget(), kWindowTimeout);
    QTest::qWait(200);
    QVERIFY(m_window->isVisible());
    QCOMPARE(jobs()->stateAt(0), JobListModel::State::Running);

    // Stop and close: the job stops after its batch and the window goes.
    answerNext<QMessageBox>([](QMessageBox *box) {
        box->findChild<QPushButton *>(QStringLiteral("stopAndCloseButton"))->click();
    });
    m_window->close();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->isVisible(), kWindowTimeout);
    m_window.reset(); // the client waits for the job's last batch
    const int requeued =
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'pending'"))
            .toInt();
    QVERIFY2(requeued < 400, qPrintable(QString::number(requeued)));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit WHERE finished_at IS NOT "
                                   "NULL AND affected = ?"),
                    {requeued}),
             QStringLiteral("1"));
}

void TestJobsWindow::exportAllMatching() {
    insertDead(2500, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    insertDead(70, QStringLiteral("shipping"), QStringLiteral("timeout"));
    openWindow();
    part<console::FilterBar>()->setNamespace(QStringLiteral("billing"));
    showLoaded(core::Status::Dead, 200); // only the first page is loaded
    QVERIFY(!QTest::currentTestFailed());

    // Saved under the suggested name.
    auto *exportAction = part<QAction>(QStringLiteral("exportMatchingAction"));
    QVERIFY(exportAction && exportAction->isEnabled());
    const QString path = saveAs(exportAction);
    QTRY_COMPARE_WITH_TIMEOUT(jobs()->rowCount(), 1, kWindowTimeout);
    QVERIFY2(path.startsWith(m_dir->path()), qPrintable(path));
    QTRY_COMPARE_WITH_TIMEOUT(jobs()->stateAt(0), JobListModel::State::Finished, kWindowTimeout);

    QFile file(path);
    QVERIFY2(file.open(QIODevice::ReadOnly),
             qPrintable(jobs()->titleAt(0) + QLatin1Char('\n') +
                        jobs()->index(0, 0).data(JobListModel::SummaryRole).toString()));
    QStringList ids;
    for (const QByteArray &line : file.readAll().trimmed().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        QCOMPARE(o.value(QStringLiteral("namespace")).toString(), QStringLiteral("billing"));
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("dead"));
        ids << o.value(QStringLiteral("id")).toString();
    }
    // Every matching event once, not only the rows on screen.
    QCOMPARE(ids.size(), 2500);
    QCOMPARE(ids, idsWhere(QStringLiteral("namespace = 'billing' AND status = 'dead'")));
    QVERIFY2(jobs()->index(0, 0).data(JobListModel::SummaryRole).toString().contains(path),
             qPrintable(jobs()->index(0, 0).data(JobListModel::SummaryRole).toString()));
}

void TestJobsWindow::stoppedExportLeavesNoFile() {
    insertDead(2000, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    QVERIFY(info.ok());
    console::StoreClient client(info.value());
    JobListModel jobs;
    QAbstractItemModelTester tester(&jobs);
    const QString path = m_dir->filePath(QStringLiteral("stopped.jsonl"));
    store::EventFilter filter;
    filter.status = core::Status::Dead;
    // One row a page, stopped at the first progress report.
    console::ExportJob *job = client.startExport(filter, path, &console::eventJsonLine, 1);
    const int id = jobs.addExport(job, QStringLiteral("stopped export"));
    connect(job, &console::ExportJob::progress, job, [&jobs, id](qint64 done) {
        if (done > 0)
            jobs.stop(jobs.rowOf(id));
    });
    QTRY_COMPARE_WITH_TIMEOUT(jobs.stateAt(jobs.rowOf(id)), JobListModel::State::Stopped,
                              kWindowTimeout);
    QVERIFY(!QFile::exists(path));
    // No temporary file is left beside it either.
    QCOMPARE(QDir(m_dir->path()).entryList({QStringLiteral("stopped*")}, QDir::Files),
             QStringList());
    const QString summary = jobs.index(0, 0).data(JobListModel::SummaryRole).toString();
    QVERIFY2(summary.contains(QLatin1String("nothing was saved")), qPrintable(summary));
}

void TestJobsWindow::alertShowsInTheWindow() {
    // Events waiting for an hour on a database whose alert is at 60 s.
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    QVERIFY(info.ok());
    console::AlertThresholds thresholds;
    thresholds.oldestDueAge = std::chrono::seconds(60);
    thresholds.oldestDueFor = std::chrono::seconds(0);
    console::DatabaseSettings(m_qsettings.get(), console::DatabaseSettings::keyFor(info.value()))
        .setAlertThresholds(thresholds);
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, "
                             " created_at, next_attempt_at) "
                             "SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}', "
                             " now() - interval '1 hour', now() - interval '1 hour' "
                             "FROM generate_series(1, 5)")));
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    showPage(core::Status::Dead);
    auto *marker = part<QToolButton>(QStringLiteral("alertMarker"));
    auto *banner = part<QFrame>(QStringLiteral("alertBanner"));
    QVERIFY(marker && banner);
    QTRY_VERIFY_WITH_TIMEOUT(marker->isVisible(), kWindowTimeout);
    QCOMPARE(marker->text(), QStringLiteral("Events are waiting too long"));
    QVERIFY2(marker->toolTip().contains(QLatin1String("1 h")), qPrintable(marker->toolTip()));
    QVERIFY(banner->isVisible());
    const QString text = banner->findChild<QLabel *>(QStringLiteral("alertText"))->text();
    QVERIFY2(text.contains(QLatin1String("has waited 1 h")), qPrintable(text));
    // "Show events" opens the page that shows them.
    QTest::mouseClick(banner->findChild<QPushButton *>(QStringLiteral("alertShowButton")),
                      Qt::LeftButton);
    QCOMPARE(currentPage(), page(core::Status::Pending));
    // Dismissed, the banner goes; the status bar keeps the alert, and its
    // click opens the page too.
    QTest::mouseClick(banner->findChild<QPushButton *>(QStringLiteral("alertDismissButton")),
                      Qt::LeftButton);
    QVERIFY(!banner->isVisible());
    showPage(core::Status::Dead);
    refresh();
    QTest::qWait(300);
    QVERIFY(!banner->isVisible());
    QVERIFY(marker->isVisible());
    QTest::mouseClick(marker, Qt::LeftButton);
    QCOMPARE(currentPage(), page(core::Status::Pending));

    // Once nothing waits any more the alert goes.
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("DELETE FROM outbox_events WHERE status = "
                                                  "'pending'")));
    refresh();
    QTRY_VERIFY_WITH_TIMEOUT(!marker->isVisible(), kWindowTimeout);
}

QTEST_MAIN(TestJobsWindow)
#include "tst_jobswindow.moc"
