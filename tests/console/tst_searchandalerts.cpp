// Through the window, offscreen against a real cluster: the filter bar's
// payload field (reached with the keyboard, an invalid JSON named beside it
// and left out, a valid one narrowing the table), and the alert thresholds
// dialog (File menu, keyboard only; the monitor uses what was entered, and it
// is kept for that database and not for another).

#include "console/model/alertmonitor.h"
#include "console/model/databasesettings.h"
#include "console/model/eventtablemodel.h"
#include "console/model/statusnavmodel.h"
#include "console/widgets/alertnotifier.h"
#include "console/widgets/alertsettingsdialog.h"
#include "console/widgets/filterbar.h"
#include "store/migrator.h"
#include "windowtestbase.h"

#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSpinBox>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace outbox;
using testing::kWindowTimeout;

class TestSearchAndAlerts : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void payloadFieldFilters();
    void thresholdsDialog();
    void blockedRowListsTheBlocked();

private:
    void activate() {
        m_window->activateWindow();
        QTRY_COMPARE_WITH_TIMEOUT(QApplication::activeWindow(), m_window.get(), kWindowTimeout);
    }
    console::AlertMonitor *monitor() const {
        return m_window->findChild<console::AlertNotifier *>()->monitor();
    }
    QString databaseKey(const QString &dbName) const {
        return console::DatabaseSettings::keyFor(
            core::ConnInfo::parse(m_pg->connInfo(dbName)).value());
    }
};

void TestSearchAndAlerts::payloadFieldFilters() {
    insertDead(5, QStringLiteral("billing"), QStringLiteral("HTTP 500")); // payloads {"n": 1..5}
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 5);
    auto *bar = part<console::FilterBar>();
    auto *search = bar->findChild<QLineEdit *>(QStringLiteral("searchEdit"));
    auto *payload = bar->findChild<QLineEdit *>(QStringLiteral("payloadFilter"));
    auto *problem = bar->findChild<QLabel *>(QStringLiteral("payloadProblem"));
    QVERIFY(search && payload && problem);

    // Ctrl+F, then Tab past namespace, topic and tenant.
    activate();
    QTest::keyClick(m_window.get(), Qt::Key_F, Qt::ControlModifier);
    QTRY_COMPARE_WITH_TIMEOUT(QApplication::focusWidget(), search, kWindowTimeout);
    for (int i = 0; i < 10 && QApplication::focusWidget() != payload; ++i)
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QCOMPARE(QApplication::focusWidget(), payload);

    // Not JSON: said beside the field, the filter left out.
    QTest::keyClicks(payload, QStringLiteral("{n: 3}"));
    QVERIFY(problem->isVisible());
    QVERIFY2(problem->text().startsWith(QLatin1String("Invalid JSON")),
             qPrintable(problem->text()));
    QVERIFY2(problem->toolTip().contains(QLatin1String("double quotes")),
             qPrintable(problem->toolTip()));
    QVERIFY(!bar->isValid());
    QVERIFY(bar->filter().payloadContains.isEmpty());
    QTest::qWait(500); // past the typing pause
    QCOMPARE(view->model()->rowCount(), 5);

    // Fixed: the table narrows to the one event whose payload contains it.
    payload->selectAll();
    QTest::keyClicks(payload, QStringLiteral("{\"n\": 3}"));
    QVERIFY(!problem->isVisible());
    QVERIFY(bar->isValid());
    QCOMPARE(bar->filter().payloadContains, QStringLiteral("{\"n\": 3}"));
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 1, kWindowTimeout);
    QCOMPARE(view->model()->eventAt(0).payload, QByteArray("{\"n\": 3}"));

    // Clear filter empties it again.
    bar->clear();
    QCOMPARE(payload->text(), QString());
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);
}

void TestSearchAndAlerts::thresholdsDialog() {
    // Due for ten minutes; this database alerts only after an hour.
    console::AlertThresholds quiet;
    quiet.oldestDueAge = std::chrono::hours(1);
    quiet.oldestDueFor = std::chrono::seconds(0);
    console::DatabaseSettings(m_qsettings.get(), databaseKey(m_dbName)).setAlertThresholds(quiet);
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                             " created_at, next_attempt_at)"
                             " SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}',"
                             "  now() - interval '10 minutes', now() - interval '10 minutes'"
                             " FROM generate_series(1, 3)")));
    openWindow();
    auto *marker = part<QToolButton>(QStringLiteral("alertMarker"));
    QVERIFY(marker);
    QCOMPARE(monitor()->thresholds(), quiet);
    refresh();
    QTest::qWait(500);
    QVERIFY(!marker->isVisible());

    // In the File menu, with an access key.
    auto *action = part<QAction>(QStringLiteral("alertSettingsAction"));
    QVERIFY(action);
    QVERIFY(action->isEnabled());
    QVERIFY2(action->text().contains(QLatin1Char('&')), qPrintable(action->text()));
    QMenu *file = nullptr;
    for (QAction *menu : m_window->menuBar()->actions()) {
        if (menu->menu() && menu->menu()->actions().contains(action))
            file = menu->menu();
    }
    QVERIFY(file);
    QCOMPARE(file->title(), QStringLiteral("&File"));

    // Keyboard only: the first field has the focus; type 300, Enter.
    activate();
    action->trigger();
    console::AlertSettingsDialog *dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((dialog = m_window->findChild<console::AlertSettingsDialog *>()) &&
                                 dialog->isVisible(),
                             kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(QApplication::focusWidget() &&
                                 dialog->isAncestorOf(QApplication::focusWidget()),
                             kWindowTimeout);
    auto *age = dialog->findChild<QSpinBox *>(QStringLiteral("oldestDueAgeEdit"));
    QVERIFY(age);
    QVERIFY(age->isAncestorOf(QApplication::focusWidget()) || QApplication::focusWidget() == age);
    QCOMPARE(age->value(), 3600);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("300"));
    // Tab reaches the "connection lost" check box; Space turns it off.
    // (Offscreen there is no tray and no notification service: the
    // notifications box is disabled, and the dialog says why.)
    auto *lost = dialog->findChild<QWidget *>(QStringLiteral("connectionLostCheck"));
    auto *notify = dialog->findChild<QWidget *>(QStringLiteral("notifyCheck"));
    QVERIFY(lost && notify);
    QVERIFY(!notify->isEnabled());
    for (int i = 0; i < 10 && QApplication::focusWidget() != lost; ++i)
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    QCOMPARE(QApplication::focusWidget(), lost);
    QTest::keyClick(lost, Qt::Key_Space);
    // Alt+O is OK's access key.
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_O, Qt::AltModifier);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->findChild<console::AlertSettingsDialog *>(),
                             kWindowTimeout);

    // The monitor uses it at once: ten minutes over five is an alert.
    QCOMPARE(monitor()->thresholds().oldestDueAge, std::chrono::seconds(300));
    QVERIFY(!monitor()->thresholds().connectionLost);
    refresh();
    QTRY_VERIFY_WITH_TIMEOUT(marker->isVisible(), kWindowTimeout);
    QCOMPARE(marker->text(), QStringLiteral("Events are waiting too long"));
    QVERIFY2(marker->toolTip().contains(QLatin1String("oldest due event")),
             qPrintable(marker->toolTip()));

    // Kept for this database, in the settings file...
    m_qsettings->sync();
    QSettings reread(m_qsettings->fileName(), QSettings::IniFormat);
    const console::AlertThresholds saved =
        console::DatabaseSettings(&reread, databaseKey(m_dbName)).alertThresholds();
    QCOMPARE(saved.oldestDueAge, std::chrono::seconds(300));
    QVERIFY(!saved.connectionLost);
    QCOMPARE(saved.oldestDueFor, quiet.oldestDueFor);

    // ... and not for another: connected there, the monitor has the defaults.
    const QString other = m_pg->freshMigratedDatabase();
    QVERIFY(!other.isEmpty());
    QCOMPARE(console::DatabaseSettings(&reread, databaseKey(other)).alertThresholds(),
             console::AlertThresholds());
    m_window->connectTo(core::ConnInfo::parse(m_pg->connInfo(other)).value());
    QTRY_VERIFY_WITH_TIMEOUT(isConnected(), kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(monitor()->thresholds(), console::AlertThresholds(), kWindowTimeout);
    m_window.reset();
    m_pg->dropDatabase(other);
}

// A dead event of invoice 42 holds the two after it: the navigator's
// "Blocked (aggregate order)" row says 2, and a click lists those two.
void TestSearchAndAlerts::blockedRowListsTheBlocked() {
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                             " attempts, created_at, aggregate_type, aggregate_id)"
                             " SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}',"
                             "  CASE WHEN g = 1 THEN 'dead' ELSE 'pending' END, 0,"
                             "  now() - make_interval(secs => 100 - g), 'invoice',"
                             "  CASE WHEN g <= 3 THEN '42' ELSE g::text END"
                             " FROM generate_series(1, 5) g")));
    QCOMPARE(store::Migrator(m_db).enableAggregateOrder().value(), true);
    openWindow();
    auto *tree = part<QTreeView>(QStringLiteral("navigatorView"));
    QVERIFY(tree);
    auto *navigator = qobject_cast<console::StatusNavModel *>(tree->model());
    QVERIFY(navigator);
    const QString key = console::StatusNavModel::blockedKey();
    QTRY_VERIFY_WITH_TIMEOUT(navigator->indexForKey(key).isValid(), kWindowTimeout);
    const QModelIndex blocked = navigator->indexForKey(key);
    QCOMPARE(blocked.data(console::StatusNavModel::CountRole).toLongLong(), 2);
    tree->expandAll();
    tree->scrollTo(blocked);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(blocked).center());
    QTRY_COMPARE_WITH_TIMEOUT(currentPage()->status(), core::Status::Pending, kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(currentPage()->filter().aggregateBlocked, kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(currentPage()->model()->rowCount(), 2, kWindowTimeout);
    // Back to Pending itself: all four.
    const QModelIndex pending =
        navigator->indexForKey(console::StatusNavModel::statusKey(core::Status::Pending));
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(pending).center());
    QTRY_COMPARE_WITH_TIMEOUT(currentPage()->model()->rowCount(), 4, kWindowTimeout);
}

QTEST_MAIN(TestSearchAndAlerts)
#include "tst_searchandalerts.moc"
