// The operator actions of the main window driven like an operator would,
// offscreen, against a real PostgreSQL cluster: selection and filter
// actions, the bulk dialog with cancel, purge by age, read-only modes,
// export and copy. Real actions, dialogs and store (no mocks).

#include "console/model/consolesettings.h"
#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
#include "console/model/joblistmodel.h"
#include "console/model/statusnavmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/bulkdialog.h"
#include "console/widgets/connectiondialog.h"
#include "console/widgets/detailpane.h"
#include "console/widgets/errorgroupsview.h"
#include "console/widgets/eventview.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/mainwindow.h"
#include "console/widgets/purgedialog.h"
#include "console/widgets/statusindicators.h"
#include "store/database.h"
#include "store/migrator.h"
#include "support/pgfixture.h"
#include "windowtestbase.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSqlQuery>
#include <QTableView>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::console;
using namespace outbox::testing;

namespace {

const QList<ActionController::Kind> kChanging{
    ActionController::RetrySelected,   ActionController::RequeueSelected,
    ActionController::CancelSelected,  ActionController::ReplaySelected,
    ActionController::PurgeSelected,   ActionController::RetryMatching,
    ActionController::RequeueMatching, ActionController::CancelMatching,
    ActionController::ReplayMatching,  ActionController::PurgeMatching,
    ActionController::PurgeOld};

} // namespace

class TestConsoleActions : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void requeueSelectedDeadRows();
    void replaySelectedAsksBeforeReplayingAgain();
    void bulkRequeueByFilterCanBeCancelled();
    void readOnlyFlagDisablesActions();
    void viewerRoleIsReadOnly();
    void purgeOldDeliveredWithPreview();
    void purgeChangesNoMoreThanConfirmed();
    void exportAndCopySelectedRows();

private:
    // Edit > Purge old events: the dialog and its controls (null when
    // missing).
    struct PurgeOldDialog {
        console::PurgeDialog *dialog = nullptr;
        QComboBox *states = nullptr;
        QLineEdit *age = nullptr;
        QLabel *preview = nullptr;
        QPushButton *purgeButton = nullptr;
        QDialogButtonBox *buttons = nullptr;
        bool complete() const {
            return dialog && states && age && preview && purgeButton && buttons;
        }
    };
    PurgeOldDialog openPurgeOld();
};

TestConsoleActions::PurgeOldDialog TestConsoleActions::openPurgeOld() {
    action(ActionController::PurgeOld)->trigger();
    PurgeOldDialog purge;
    purge.dialog = m_window->findChild<console::PurgeDialog *>();
    if (!purge.dialog)
        return purge;
    purge.states = purge.dialog->findChild<QComboBox *>(QStringLiteral("statusCombo"));
    purge.age = purge.dialog->findChild<QLineEdit *>(QStringLiteral("ageEdit"));
    purge.preview = purge.dialog->findChild<QLabel *>(QStringLiteral("previewLabel"));
    purge.purgeButton = purge.dialog->findChild<QPushButton *>(QStringLiteral("purgeButton"));
    purge.buttons = purge.dialog->findChild<QDialogButtonBox *>(QStringLiteral("buttons"));
    return purge;
}

void TestConsoleActions::requeueSelectedDeadRows() {
    insertDead(5, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 5);
    QVERIFY(!QTest::currentTestFailed());

    const QList<QUuid> chosen = clickRowsAt(view, {0, 1, 2});
    QCOMPARE(chosen.size(), 3);

    QString asked;
    answerNext<QMessageBox>([&](QMessageBox *box) {
        asked = box->text();
        box->button(QMessageBox::Yes)->click();
    });
    QAction *requeue = action(ActionController::RequeueSelected);
    QVERIFY(requeue->isEnabled());
    // Retry applies to pending events only; none is selected.
    QVERIFY(!action(ActionController::RetrySelected)->isEnabled());
    QSignalSpy said(actions(), &ActionController::message);
    requeue->trigger(); // the question opens without a nested event loop
    QTRY_VERIFY2_WITH_TIMEOUT(asked.contains(QLatin1String("3 events")), qPrintable(asked),
                              kWindowTimeout);

    const QString ids = uuidArray(chosen);
    QTRY_COMPARE_WITH_TIMEOUT(
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE id = ANY(?::uuid[]) "
                              "AND status = 'pending' AND attempts = 0"),
               {ids}),
        QStringLiteral("3"), kWindowTimeout);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'dead'")),
             QStringLiteral("2"));
    QCOMPARE(scalar(QStringLiteral("SELECT action || ':' || affected || ':' || skipped "
                                   "FROM outbox_audit")),
             QStringLiteral("requeue:3:0"));
    // Said as the operator would: what was done, to how many.
    QTRY_VERIFY_WITH_TIMEOUT(!said.isEmpty() && said.constLast().constFirst().toString() ==
                                                    QStringLiteral("Requeued 3 events."),
                             kWindowTimeout);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit_events "
                                   "WHERE event_id = ANY(?::uuid[])"),
                    {ids}),
             QStringLiteral("3"));
    // The page follows: the requeued rows leave the dead view.
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    for (const auto &event : view->model()->events())
        QVERIFY(!chosen.contains(event.id));
}

// Replay on a selection that holds an event replayed before: the question
// names it, Yes stays disabled until "replay those again too" is ticked,
// Cancel changes nothing; ticked, every selected event gets a new copy.
void TestConsoleActions::replaySelectedAsksBeforeReplayingAgain() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 410"));
    const QString original =
        scalar(QStringLiteral("SELECT id FROM outbox_events ORDER BY created_at, id LIMIT 1"));
    QVERIFY(testing::sqlExec(
        m_db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                       " delivered_at, replay_of)"
                       " SELECT outbox_uuid_v7(), namespace, topic, payload, 'delivered',"
                       "        now(), id FROM outbox_events WHERE id = ?::uuid"),
        {original}));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 3);
    QVERIFY(!QTest::currentTestFailed());
    const QList<QUuid> chosen = clickRowsAt(view, {0, 1, 2});
    QCOMPARE(chosen.size(), 3);
    const QString copies = QStringLiteral("SELECT count(*) FROM outbox_events"
                                          " WHERE replay_of IS NOT NULL");

    // Cancel: asked with the count, Yes disabled until ticked; nothing changes.
    bool answered = false;
    bool yesEnabledAtFirst = true;
    QString informative;
    answerNext<QMessageBox>([&](QMessageBox *box) {
        informative = box->informativeText();
        yesEnabledAtFirst = box->button(QMessageBox::Yes)->isEnabled();
        QVERIFY(box->checkBox() != nullptr);
        QCOMPARE(box->checkBox()->objectName(), QStringLiteral("replayAgain"));
        answered = true;
        box->button(QMessageBox::Cancel)->click();
    });
    action(ActionController::ReplaySelected)->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(answered, kWindowTimeout);
    QVERIFY(!yesEnabledAtFirst);
    QVERIFY2(informative.startsWith(QLatin1String("1 event")), qPrintable(informative));
    QCOMPARE(scalar(copies), QStringLiteral("1"));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit")), QStringLiteral("0"));

    // Ticked: all three are replayed, the one replayed before a second time.
    answered = false;
    answerNext<QMessageBox>([&](QMessageBox *box) {
        box->checkBox()->setChecked(true);
        QVERIFY(box->button(QMessageBox::Yes)->isEnabled());
        answered = true;
        box->button(QMessageBox::Yes)->click();
    });
    action(ActionController::ReplaySelected)->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(answered, kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(scalar(copies), QStringLiteral("4"), kWindowTimeout);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events"
                                   " WHERE replay_of = ?::uuid"),
                    {original}),
             QStringLiteral("2"));
    QCOMPARE(scalar(QStringLiteral("SELECT action || ':' || affected FROM outbox_audit")),
             QStringLiteral("replay:3"));
}

void TestConsoleActions::bulkRequeueByFilterCanBeCancelled() {
    insertDead(400, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    insertDead(50, QStringLiteral("shipping"), QStringLiteral("timeout"));
    openWindow();
    part<console::FilterBar>()->setNamespace(QStringLiteral("billing"));
    showLoaded(core::Status::Dead, 200); // the first page of 400
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(currentPage()->filter().nameSpace, QStringLiteral("billing"));

    // A count that takes a while (another session holds the table) says so
    // while it runs, and how long it has run.
    QSqlDatabase locker = m_pg->open(m_dbName, QStringLiteral("locker"));
    QVERIFY(locker.transaction());
    QVERIFY(sqlExec(locker, QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
    action(ActionController::RequeueMatching)->trigger();
    auto *dialog = m_window->findChild<BulkDialog *>();
    QVERIFY(dialog);
    auto *headline = dialog->findChild<QLabel *>(QStringLiteral("headlineLabel"));
    QVERIFY(headline);
    QTRY_VERIFY_WITH_TIMEOUT(headline->text().contains(QLatin1String("s so far")), kWindowTimeout);
    QCOMPARE(dialog->stage(), BulkDialog::Stage::Checking);
    QVERIFY(locker.rollback());
    locker = QSqlDatabase();
    m_pg->close(QStringLiteral("locker"));
    QTRY_COMPARE_WITH_TIMEOUT(dialog->stage(), BulkDialog::Stage::Confirm, kWindowTimeout);
    QVERIFY(!headline->text().contains(QLatin1String("so far")));
    QCOMPARE(dialog->matched(), 400); // the dry run counted billing only
    auto *start = dialog->findChild<QPushButton *>(QStringLiteral("startButton"));
    QVERIFY(start && start->isVisible());
    QVERIFY2(start->text().contains(QLatin1String("400")), qPrintable(start->text()));

    // Slow on purpose (10 rows per batch, 20 rows/s: 20 s for all) so that
    // Cancel lands in the middle.
    dialog->setRate(20);
    dialog->setBatchSize(10);
    start->click();
    // The job goes to the background; the dialog closes.
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->findChild<BulkDialog *>(), kWindowTimeout);
    auto *jobs = m_window->findChild<console::JobListModel *>();
    QVERIFY(jobs);
    QCOMPARE(jobs->rowCount(), 1);
    QCOMPARE(jobs->stateAt(0), console::JobListModel::State::Running);
    QTRY_VERIFY_WITH_TIMEOUT(
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'pending'"))
                .toInt() >= 20,
        kWindowTimeout);
    auto *stop = m_window->findChild<QPushButton *>(QStringLiteral("stopJobButton"));
    QVERIFY(stop && stop->isVisible() && stop->isEnabled());
    stop->click();
    QTRY_COMPARE_WITH_TIMEOUT(jobs->stateAt(0), console::JobListModel::State::Stopped,
                              kWindowTimeout);

    const int changed = scalar(QStringLiteral("SELECT count(*) FROM outbox_events "
                                              "WHERE status = 'pending' AND namespace = 'billing'"))
                            .toInt();
    QVERIFY2(changed >= 20 && changed < 400, qPrintable(QString::number(changed)));
    const QString summary = jobs->index(0, 0).data(console::JobListModel::SummaryRole).toString();
    QVERIFY2(summary.startsWith(QStringLiteral("Stopped: requeued %1 of 400 events").arg(changed)),
             qPrintable(summary));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events "
                                   "WHERE status = 'dead' AND namespace = 'shipping'")),
             QStringLiteral("50"));
    // The audit shows the partial run, closed.
    QCOMPARE(scalar(QStringLiteral("SELECT action || ':' || affected || ':' || "
                                   "(finished_at IS NOT NULL) FROM outbox_audit")),
             QStringLiteral("requeue:%1:true").arg(changed));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit_events")),
             QString::number(changed));
}

void TestConsoleActions::readOnlyFlagDisablesActions() {
    insertDead(2, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow(/*readOnly=*/true);
    console::EventView *view = showLoaded(core::Status::Dead, 2);
    QVERIFY(!QTest::currentTestFailed());
    selectAllRows(view);
    QVERIFY(actions()->isReadOnly());
    for (ActionController::Kind kind : kChanging) {
        QAction *changing = action(kind);
        QVERIFY2(!changing->isEnabled(), qPrintable(changing->text()));
        QVERIFY2(changing->toolTip().contains(QLatin1String("--read-only")),
                 qPrintable(changing->toolTip()));
    }
    // Looking and copying stay possible.
    QVERIFY(action(ActionController::CopyId)->isEnabled());
    QVERIFY(action(ActionController::ExportJson)->isEnabled());
    QVERIFY(m_window->windowTitle().contains(QLatin1String("read-only")));

    // Even triggered (by a shortcut, a menu), they change nothing and ask
    // nothing.
    for (ActionController::Kind kind : kChanging)
        action(kind)->trigger();
    QTest::qWait(500);
    QVERIFY(!QApplication::activeModalWidget());
    QVERIFY(!m_window->findChild<BulkDialog *>());
    QVERIFY(!m_window->findChild<console::PurgeDialog *>());
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'dead'")),
             QStringLiteral("2"));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_audit")), QStringLiteral("0"));
}

void TestConsoleActions::viewerRoleIsReadOnly() {
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = "
                             "'tst_viewer') THEN CREATE ROLE tst_viewer LOGIN IN ROLE "
                             "outbox_viewer; END IF; END $$")));
    insertDead(2, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow(/*readOnly=*/false, QStringLiteral("tst_viewer"));
    console::EventView *view = showLoaded(core::Status::Dead, 2); // a viewer can read
    QVERIFY(!QTest::currentTestFailed());
    selectAllRows(view);
    QTRY_VERIFY_WITH_TIMEOUT(actions()->isReadOnly(), kWindowTimeout);
    for (ActionController::Kind kind : kChanging) {
        QAction *changing = action(kind);
        QVERIFY2(!changing->isEnabled(), qPrintable(changing->text()));
        QVERIFY2(changing->toolTip().contains(QLatin1String("tst_viewer")) &&
                     changing->toolTip().contains(QLatin1String("outbox_operator")),
                 qPrintable(changing->toolTip()));
    }
}

void TestConsoleActions::purgeOldDeliveredWithPreview() {
    // 4 delivered 10 days ago, 3 delivered just now, 2 dead 10 days ago.
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status, "
                             " attempts, delivered_at, created_at, updated_at) "
                             "SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}', "
                             "  CASE WHEN g <= 7 THEN 'delivered' ELSE 'dead' END, 1, now(), "
                             "  now() - interval '11 days', "
                             "  CASE WHEN g BETWEEN 5 AND 7 THEN now() "
                             "       ELSE now() - interval '10 days' END "
                             "FROM generate_series(1, 9) AS g")));
    openWindow();
    const PurgeOldDialog purge = openPurgeOld();
    QVERIFY(purge.complete());
    const auto choose = [&](const QString &text) {
        const int index = purge.states->findText(text);
        QVERIFY2(index >= 0, qPrintable(text));
        purge.states->setCurrentIndex(index);
    };
    const auto type = [&](const QString &text) {
        purge.age->selectAll();
        QTest::keyClicks(purge.age, text);
        QCOMPARE(purge.age->text(), text);
    };
    choose(QStringLiteral("Delivered"));
    type(QStringLiteral("7d"));
    QTRY_COMPARE_WITH_TIMEOUT(purge.preview->text(), QStringLiteral("4 events would be deleted."),
                              kWindowTimeout);
    choose(QStringLiteral("Delivered and dead"));
    QTRY_COMPARE_WITH_TIMEOUT(purge.preview->text(), QStringLiteral("6 events would be deleted."),
                              kWindowTimeout);
    type(QStringLiteral("7 days")); // not a duration
    QVERIFY2(purge.preview->text().startsWith(QLatin1String("Age: ")),
             qPrintable(purge.preview->text()));
    QVERIFY(!purge.purgeButton->isEnabled());
    choose(QStringLiteral("Delivered"));
    type(QStringLiteral("7d"));
    QTRY_COMPARE_WITH_TIMEOUT(purge.preview->text(), QStringLiteral("4 events would be deleted."),
                              kWindowTimeout);
    QVERIFY(purge.purgeButton->isEnabled());
    QTest::mouseClick(purge.purgeButton, Qt::LeftButton);

    auto *bulk = m_window->findChild<BulkDialog *>();
    QVERIFY(bulk);
    QCOMPARE(bulk->action(), store::Action::Purge);
    QTRY_COMPARE_WITH_TIMEOUT(bulk->stage(), BulkDialog::Stage::Confirm, kWindowTimeout);
    QCOMPARE(bulk->matched(), 4);
    bulk->findChild<QPushButton *>(QStringLiteral("startButton"))->click();
    auto *jobs = m_window->findChild<console::JobListModel *>();
    QVERIFY(jobs);
    QTRY_COMPARE_WITH_TIMEOUT(jobs->rowCount(), 1, kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(jobs->stateAt(0), console::JobListModel::State::Finished,
                              kWindowTimeout);
    QVERIFY(jobs->index(0, 0)
                .data(console::JobListModel::SummaryRole)
                .toString()
                .startsWith(QLatin1String("Purged 4 events")));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events")), QStringLiteral("5"));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'delivered' "
                                   "AND updated_at < now() - interval '7 days'")),
             QStringLiteral("0"));
    QCOMPARE(scalar(QStringLiteral("SELECT action || ':' || affected FROM outbox_audit")),
             QStringLiteral("purge:4"));
}

// Rows that start to match after the purge dialog's preview (and after the
// bulk dialog's confirmation) are left: changed <= confirmed <= previewed,
// and the result says how many were left. Cancel is the default button.
void TestConsoleActions::purgeChangesNoMoreThanConfirmed() {
    const auto insertOldDelivered = [this](int n) {
        QVERIFY(testing::sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, "
                           " status, attempts, delivered_at, created_at, updated_at) "
                           "SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}', "
                           " 'delivered', 1, now(), clock_timestamp(), "
                           " now() - interval '10 days' FROM generate_series(1, ?) AS g"),
            {n}));
    };
    insertOldDelivered(4);
    openWindow();
    const PurgeOldDialog purge = openPurgeOld();
    QVERIFY(purge.complete());
    purge.states->setCurrentIndex(purge.states->findText(QStringLiteral("Delivered")));
    purge.age->selectAll();
    QTest::keyClicks(purge.age, QStringLiteral("7d"));
    QTRY_COMPARE_WITH_TIMEOUT(purge.preview->text(), QStringLiteral("4 events would be deleted."),
                              kWindowTimeout);
    QVERIFY(purge.buttons->button(QDialogButtonBox::Cancel)->isDefault());
    QVERIFY(!purge.purgeButton->isDefault());

    insertOldDelivered(3); // after the preview
    QTest::mouseClick(purge.purgeButton, Qt::LeftButton);
    auto *bulk = m_window->findChild<BulkDialog *>();
    QVERIFY(bulk);
    QTRY_COMPARE_WITH_TIMEOUT(bulk->stage(), BulkDialog::Stage::Confirm, kWindowTimeout);
    QCOMPARE(bulk->matched(), 4); // never more than the preview said
    auto *start = bulk->findChild<QPushButton *>(QStringLiteral("startButton"));
    auto *cancel = bulk->findChild<QPushButton *>(QStringLiteral("cancelButton"));
    QVERIFY(start && cancel);
    QVERIFY(cancel->isDefault());
    QVERIFY(!start->isDefault());

    insertOldDelivered(2); // after the confirmation
    start->click();
    // The job runs in the background; its line in the jobs panel says what
    // changed, what was confirmed and what was left.
    auto *jobs = m_window->findChild<console::JobListModel *>();
    QVERIFY(jobs);
    QTRY_COMPARE_WITH_TIMEOUT(jobs->rowCount(), 1, kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(jobs->stateAt(0), console::JobListModel::State::Finished,
                              kWindowTimeout);
    const QString summary = jobs->index(0, 0).data(console::JobListModel::SummaryRole).toString();
    QVERIFY2(summary.startsWith(QLatin1String("Purged 4 events;")) &&
                 summary.contains(QLatin1String("5 newer matching events left")),
             qPrintable(summary));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events")), QStringLiteral("5"));
}

void TestConsoleActions::exportAndCopySelectedRows() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 3);
    QVERIFY(!QTest::currentTestFailed());
    const QList<QUuid> chosen = clickRowsAt(view, {0, 2});
    QCOMPARE(chosen.size(), 2);

    // Saved under the suggested name.
    const QString suggested = saveAs(action(ActionController::ExportJson));
    QVERIFY2(suggested.startsWith(m_dir->path()) && suggested.endsWith(QLatin1String(".jsonl")),
             qPrintable(suggested));
    QFile file(suggested);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = file.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    for (int i = 0; i < 2; ++i) {
        const QJsonObject o = QJsonDocument::fromJson(lines.at(i)).object();
        QCOMPARE(QUuid::fromString(o.value(QStringLiteral("id")).toString()), chosen.at(i));
        QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("dead"));
        QVERIFY(o.value(QStringLiteral("payload")).toObject().contains(QStringLiteral("n")));
    }

    action(ActionController::CopyId)->trigger();
    QCOMPARE(QGuiApplication::clipboard()->text(), chosen.at(0).toString(QUuid::WithoutBraces) +
                                                       QLatin1Char('\n') +
                                                       chosen.at(1).toString(QUuid::WithoutBraces));
    QCOMPARE(clickRows(view, {chosen.at(0)}), 1);
    action(ActionController::CopyPayload)->trigger();
    QVERIFY(QJsonDocument::fromJson(QGuiApplication::clipboard()->text().toUtf8()).isObject());
}

QTEST_MAIN(TestConsoleActions)
#include "tst_consoleactions.moc"
