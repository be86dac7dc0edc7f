// The main window offscreen against a real PostgreSQL cluster: the detail
// pane's "why not delivered" line, the filter bar and error groups, the
// navigator, live pause, saved layout, the connection dialog and a lost
// connection.

#include "console/model/consolesettings.h"
#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
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
#include <QClipboard>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMutex>
#include <QPushButton>
#include <QScopeGuard>
#include <QSet>
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

class TestMainWindow : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void detailPaneExplainsWhy_data();
    void detailPaneExplainsWhy();
    void filterBarNarrowsTheView();
    void aFilterThatHidesTheSelectedEventClearsTheDetail();
    void navigatorChoosesPageAndFilter();
    void errorGroupCaptionCountsEveryKind();
    void pausedLiveViewHoldsStill();
    void connectionDialogTestsWithoutBlocking();
    void closingSavesLayoutPerView();
    void databaseWithoutSchemaSaysWhatToDo();
    // Last: it stops and restarts the cluster under the other tests.
    void lostConnectionIsShownAndRecovers();
};

void TestMainWindow::detailPaneExplainsWhy_data() {
    QTest::addColumn<core::Status>("status");
    QTest::addColumn<QString>("columns");
    QTest::addColumn<QString>("values");
    QTest::addColumn<QString>("expected");

    QTest::newRow("pending, backoff")
        << core::Status::Pending << QStringLiteral("status, attempts, last_error, next_attempt_at")
        << QStringLiteral("'pending', 3, 'HTTP 503 from runner', now() + interval '10 minutes'")
        << QStringLiteral("Waiting for backoff until");
    QTest::newRow("leased") << core::Status::Processing
                            << QStringLiteral("status, attempts, locked_by, locked_until")
                            << QStringLiteral(
                                   "'processing', 1, '0190c8e2-0000-7000-8000-0000000000a1', "
                                   "now() + interval '5 minutes'")
                            << QStringLiteral("Leased by worker 0190c8e2 until");
    QTest::newRow("lease expired")
        << core::Status::Processing << QStringLiteral("status, attempts, locked_by, locked_until")
        << QStringLiteral("'processing', 2, '0190c8e2-0000-7000-8000-0000000000a1', "
                          "now() - interval '2 minutes'")
        << QStringLiteral("expired");
    QTest::newRow("dead") << core::Status::Dead << QStringLiteral("status, attempts, last_error")
                          << QStringLiteral("'dead', 7, 'HTTP 410 gone'")
                          << QStringLiteral("Dead after 7 attempts");
    QTest::newRow("delivered") << core::Status::Delivered
                               << QStringLiteral("status, attempts, delivered_at")
                               << QStringLiteral("'delivered', 1, now()")
                               << QStringLiteral("Delivered at");
    QTest::newRow("no dispatcher")
        << core::Status::Pending << QStringLiteral("status, next_attempt_at")
        << QStringLiteral("'pending', now() - interval '10 minutes'")
        << QStringLiteral("no dispatcher is running");
}

void TestMainWindow::detailPaneExplainsWhy() {
    QFETCH(core::Status, status);
    QFETCH(QString, columns);
    QFETCH(QString, values);
    QFETCH(QString, expected);

    const QString id =
        scalar(QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, %1) "
                              "VALUES (outbox_uuid_v7(), 'billing', 'invoice.paid', "
                              "'{\"n\": 1, \"big\": 12345678901234567890}', %2) RETURNING id")
                   .arg(columns, values));
    QVERIFY(!id.isEmpty());
    openWindow();
    console::EventView *view = showLoaded(status, 1);
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(clickRows(view, {QUuid::fromString(id)}), 1);
    QTRY_VERIFY2_WITH_TIMEOUT(detailExplanation().contains(expected),
                              qPrintable(detailExplanation()), kWindowTimeout);
    // Payload: re-indented, every digit kept.
    const QString payload = detailPayload();
    QVERIFY2(payload.contains(QLatin1String("\"big\": 12345678901234567890")), qPrintable(payload));
    QVERIFY(payload.contains(QLatin1Char('\n')));
}

void TestMainWindow::aFilterThatHidesTheSelectedEventClearsTheDetail() {
    insertDead(2, QStringLiteral("billing"), QStringLiteral("HTTP 503"), QStringLiteral("bill-"));
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("timeout"), QStringLiteral("ship-"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 4);
    QVERIFY(!QTest::currentTestFailed());
    QUuid billing;
    for (const auto &event : view->model()->events()) {
        if (event.nameSpace == QLatin1String("billing"))
            billing = event.id;
    }
    QVERIFY(!billing.isNull());
    QCOMPARE(clickRows(view, {billing}), 1);
    QTRY_VERIFY2_WITH_TIMEOUT(detailTitle().contains(billing.toString(QUuid::WithoutBraces)),
                              qPrintable(detailTitle()), kWindowTimeout);

    part<console::FilterBar>()->setNamespace(QStringLiteral("shipping"));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    QCOMPARE(detailTitle(), QStringLiteral("Select an event to see its details."));
}

void TestMainWindow::filterBarNarrowsTheView() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503 for request"),
               QStringLiteral("bill-"));
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("timeout after 100 ms, try"),
               QStringLiteral("ship-"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 5);
    QVERIFY(!QTest::currentTestFailed());
    console::FilterBar *bar = part<console::FilterBar>();

    bar->setNamespace(QStringLiteral("shipping"));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    for (const auto &event : view->model()->events())
        QCOMPARE(event.nameSpace, QStringLiteral("shipping"));
    bar->clear();
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);
    bar->setText(QStringLiteral("bill-2"));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 1, kWindowTimeout);
    QCOMPARE(view->model()->eventAt(0).dedupeKey.value_or(QString()), QStringLiteral("bill-2"));
    bar->clear();
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);

    // "What is failing": two signatures (numbers folded); a click filters.
    console::ErrorGroupsView *errors = part<console::ErrorGroupsView>();
    QAbstractItemModelTester groupsTester(errors->model(),
                                          QAbstractItemModelTester::FailureReportingMode::QtTest);
    QTRY_COMPARE_WITH_TIMEOUT(errors->model()->rowCount(), 2, kWindowTimeout);
    int timeoutRow = -1;
    for (int row = 0; row < errors->model()->rowCount(); ++row) {
        if (errors->model()->groups().at(row).signature.startsWith(QLatin1String("timeout")))
            timeoutRow = row;
    }
    QVERIFY(timeoutRow >= 0);
    QCOMPARE(errors->model()->groups().at(timeoutRow).count, 2);
    const QModelIndex cell = errors->model()->index(timeoutRow, 0);
    QTest::mouseClick(errors->view()->viewport(), Qt::LeftButton, {},
                      errors->view()->visualRect(cell).center());
    QTRY_VERIFY_WITH_TIMEOUT(!bar->errorSignature().isEmpty(), kWindowTimeout); // its chip
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    for (const auto &event : view->model()->events())
        QCOMPARE(event.nameSpace, QStringLiteral("shipping"));
    // A second click on the active group removes the narrowing.
    QTest::mouseClick(
        errors->view()->viewport(), Qt::LeftButton, {},
        errors->view()
            ->visualRect(errors->model()->index(errors->model()->rowOf(bar->errorSignature()), 0))
            .center());
    QTRY_VERIFY_WITH_TIMEOUT(bar->errorSignature().isEmpty(), kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);
}

void TestMainWindow::errorGroupCaptionCountsEveryKind() {
    // 60 kinds of error (words, no numbers: nothing folds them together).
    for (int i = 0; i < 60; ++i) {
        const QString word =
            QString(QChar(char16_t(u'a' + i % 26))) + QChar(char16_t(u'a' + i / 26));
        insertDead(1, QStringLiteral("billing"), QStringLiteral("failure ") + word,
                   QStringLiteral("k") + word);
    }
    openWindow();
    showLoaded(core::Status::Dead, 60);
    auto *errors = part<console::ErrorGroupsView>();
    QTRY_COMPARE_WITH_TIMEOUT(errors->model()->rowCount(), 50, kWindowTimeout);
    auto *caption = errors->findChild<QLabel *>(QStringLiteral("errorGroupsCaption"));
    QVERIFY(caption);
    // The kinds, not the rows the limit lets through.
    QTRY_VERIFY2_WITH_TIMEOUT(caption->text().startsWith(QLatin1String("60 kinds of error")),
                              qPrintable(caption->text()), kWindowTimeout);
    QVERIFY2(caption->text().contains(QLatin1String("the 50 largest")),
             qPrintable(caption->text()));
}

void TestMainWindow::navigatorChoosesPageAndFilter() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("HTTP 503"));
    openWindow();
    QTreeView *tree = part<QTreeView>(QStringLiteral("navigatorView"));
    QVERIFY(tree);
    auto *navigator = qobject_cast<console::StatusNavModel *>(tree->model());
    QVERIFY(navigator);
    const QString shippingKey =
        console::StatusNavModel::namespaceKey(core::Status::Dead, QStringLiteral("shipping"));
    QTRY_VERIFY_WITH_TIMEOUT(navigator->indexForKey(shippingKey).isValid(), kWindowTimeout);
    const QModelIndex shipping = navigator->indexForKey(shippingKey);
    tree->expandAll();
    tree->scrollTo(shipping);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(shipping).center());
    // The page follows the console's filter as it is announced.
    QTRY_COMPARE_WITH_TIMEOUT(currentPage()->status(), core::Status::Dead, kWindowTimeout);
    console::EventView *view = currentPage();
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    QCOMPARE(view->filter().nameSpace, QStringLiteral("shipping"));
}

void TestMainWindow::pausedLiveViewHoldsStill() {
    insertDead(2, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 2);
    QVERIFY(!QTest::currentTestFailed());
    setLive(false);
    QVERIFY(!isLive());
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    // NOTIFY arrives and ticks pass; a paused view does not move.
    QTest::qWait(3000);
    QCOMPARE(view->model()->rowCount(), 2);
    setLive(true);
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);
}

void TestMainWindow::connectionDialogTestsWithoutBlocking() {
    console::ConnectionDialog dialog(m_settings.get());
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    QVERIFY(info.ok());
    dialog.setConnInfo(info.value());
    QSignalSpy finished(&dialog, &console::ConnectionDialog::testFinished);
    dialog.testConnection();
    QVERIFY(dialog.isTesting()); // it runs off the GUI thread
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kWindowTimeout);
    QVERIFY(finished.at(0).at(0).toBool());
    const QString message = finished.at(0).at(1).toString();
    QVERIFY2(message.contains(QLatin1String("PostgreSQL")) && message.contains(m_dbName) &&
                 message.contains(QLatin1String("operate")),
             qPrintable(message));
    auto back = dialog.connInfo();
    QVERIFY(back.ok());
    QCOMPARE(back->dbname, m_dbName);

    core::ConnInfo wrong = info.value();
    wrong.dbname = QStringLiteral("no_such_database");
    dialog.setConnInfo(wrong);
    dialog.testConnection();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, kWindowTimeout);
    QVERIFY(!finished.at(1).at(0).toBool());
    QVERIFY2(finished.at(1).at(1).toString().contains(QLatin1String("no_such_database")),
             qPrintable(finished.at(1).at(1).toString()));
}

void TestMainWindow::closingSavesLayoutPerView() {
    openWindow();
    using Col = console::EventTableModel::Column;
    QHeaderView *dead = page(core::Status::Dead)->table()->horizontalHeader();
    QVERIFY(!dead->isSectionHidden(Col::TopicColumn));
    dead->setSectionHidden(Col::TopicColumn, true);
    dead->resizeSection(Col::LastErrorColumn, 333);
    setLive(false);
    // Closing is asynchronous (the embedded dispatcher stops first).
    QVERIFY(!m_window->close());
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->isVisible(), kWindowTimeout);
    QVERIFY(!m_settings->windowGeometry().isEmpty());
    QVERIFY(!m_settings->liveEnabled());
    m_tester.reset();
    m_window.reset();

    openWindow();
    QVERIFY(!isLive());
    dead = page(core::Status::Dead)->table()->horizontalHeader();
    QVERIFY(dead->isSectionHidden(Col::TopicColumn));
    QCOMPARE(dead->sectionSize(Col::LastErrorColumn), 333);
    QHeaderView *pending = page(core::Status::Pending)->table()->horizontalHeader();
    QVERIFY(!pending->isSectionHidden(Col::TopicColumn)); // per view
}

void TestMainWindow::databaseWithoutSchemaSaysWhatToDo() {
    const QString empty = m_pg->freshDatabase();
    QVERIFY(!empty.isEmpty());
    m_window = std::make_unique<MainWindow>(m_settings.get(), console::MainWindowOptions{});
    m_window->connectTo(core::ConnInfo::parse(m_pg->connInfo(empty)).value());
    m_window->show();
    auto *banner = part<console::ConnectionBanner>();
    QVERIFY(banner);
    QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kWindowTimeout);
    QVERIFY2(banner->text().contains(QLatin1String("outboxctl migrate")),
             qPrintable(banner->text()));
    m_window.reset();
    QVERIFY(m_pg->dropDatabase(empty));
}

void TestMainWindow::lostConnectionIsShownAndRecovers() {
    insertDead(2, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 2);
    QVERIFY(!QTest::currentTestFailed());
    auto *banner = part<console::ConnectionBanner>();
    QVERIFY(banner);
    QVERIFY(!banner->isVisible());
    const QString connection = m_db.connectionName();
    m_db = QSqlDatabase();
    m_pg->close(connection);

    // Every message of the console from here until it is back (Qt's and ours).
    // The workers log from their threads.
    static QMutex lock;
    static QStringList messages;
    static QtMessageHandler previous = nullptr;
    messages.clear();
    previous = qInstallMessageHandler(
        [](QtMsgType type, const QMessageLogContext &context, const QString &text) {
            {
                const QMutexLocker locked(&lock);
                messages << QLatin1String(context.category ? context.category : "") +
                                QLatin1String(": ") + text;
            }
            previous(type, context, text);
        });
    const auto restoreHandler = qScopeGuard([] { qInstallMessageHandler(previous); });

    QVERIFY(m_pg->cluster().stop().ok());
    QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kWindowTimeout);
    QTest::qWait(3000); // several reconnect attempts while it is down
    QVERIFY2(banner->text().contains(QLatin1String("lost")), qPrintable(banner->text()));
    QVERIFY2(connectionText().contains(QLatin1String("reconnecting")),
             qPrintable(connectionText()));
    QAction *requeue = action(ActionController::RequeueMatching);
    QVERIFY(!requeue->isEnabled());
    QVERIFY2(requeue->toolTip().contains(QLatin1String("Not connected")),
             qPrintable(requeue->toolTip()));
    QCOMPARE(view->model()->rowCount(), 2); // what was loaded stays visible

    QVERIFY(m_pg->cluster().start().ok());
    QTRY_VERIFY2_WITH_TIMEOUT(isConnected(), qPrintable(connectionText()), kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(!banner->isVisible(), kWindowTimeout);
    QTest::qWait(1000); // the refreshes after the reconnect
    // A restart is quiet apart from one line per change of state: no driver
    // noise, no line twice.
    qInstallMessageHandler(previous);
    const QMutexLocker locked(&lock);
    const QString all = messages.join(QLatin1Char('\n'));
    for (const char *noise :
         {"removeDatabase", "QSocketNotifier", "database not open", "still in use"})
        QVERIFY2(!all.contains(QLatin1String(noise)), qPrintable(all));
    QCOMPARE(QSet<QString>(messages.cbegin(), messages.cend()).size(), messages.size());
    QVERIFY2(messages.size() <= 2, qPrintable(all)); // lost, and back
    QVERIFY(requeue->isEnabled());
    m_db = m_pg->open(m_dbName);
    QVERIFY(m_db.isOpen());
    insertDead(1, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 3, kWindowTimeout);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
