// The main window as an operator at work uses it, offscreen against a real
// PostgreSQL cluster: the panes keep their size whatever the filter shows,
// unusable saved layouts are ignored and layouts are per connection profile,
// the keyboard reaches every pane and action, and live refreshes and actions
// never move the selection or the rows under it.

#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
#include "console/widgets/actions.h"
#include "console/widgets/detailpane.h"
#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/errorgroupsview.h"
#include "console/widgets/eventview.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/mainwindow.h"
#include "console/widgets/windowlayout.h"
#include "core/uuidtext.h"
#include "store/database.h"
#include "windowtestbase.h"

#include <QAbstractButton>
#include <QClipboard>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSet>
#include <QTabWidget>
#include <QTableView>
#include <QTextDocumentFragment>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

#include <functional>

using namespace outbox;
using namespace outbox::console;
using namespace outbox::testing;

namespace {

struct PaneSizes {
    QSize navigator, errors, detail, centre;
    friend bool operator==(const PaneSizes &, const PaneSizes &) = default;
};

QString describe(const PaneSizes &p) {
    const auto s = [](QSize z) { return QStringLiteral("%1x%2").arg(z.width()).arg(z.height()); };
    return QStringLiteral("navigator %1, errors %2, detail %3, centre %4")
        .arg(s(p.navigator), s(p.errors), s(p.detail), s(p.centre));
}

} // namespace

class TestConsoleUsability : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void errorGroupWithLongTextKeepsThePanes();
    void unusableSavedLayoutIsIgnored();
    void layoutsArePerProfile();
    void tabWalksPaneByPane();
    void tabNeverTraps();
    void everyMenuEntryHasAnAccessLetter();
    void menusAndActionsHaveKeys();
    void copyTakesTheSelectedTextOutsideTheTable();
    void requeueKeepsTheChosenEvent();
    void liveInsertsDoNotMoveSelectedRows();

private:
    QDockWidget *dock(const char *name) const { return part<QDockWidget>(QLatin1String(name)); }
    PaneSizes paneSizes() const {
        return {dock("navigatorDock")->size(), dock("errorGroupsDock")->size(),
                dock("detailDock")->size(), m_window->centralWidget()->size()};
    }
    QString profileKey() const {
        return core::ConnInfo::parse(m_pg->connInfo(m_dbName))->redacted();
    }
    void closeWindow() {
        QVERIFY(!m_window->close()); // closing waits for the dispatcher
        QTRY_VERIFY_WITH_TIMEOUT(!m_window->isVisible(), kWindowTimeout);
        m_tester.reset();
        m_window.reset();
    }
    void insertPending(int count, const QString &topic) {
        QVERIFY(testing::sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, "
                           " status, next_attempt_at, created_at) "
                           "SELECT outbox_uuid_v7(), 'billing', ?, "
                           "  jsonb_build_object('n', g), 'pending', "
                           "  now() + interval '1 hour', now() "
                           "FROM generate_series(1, ?) AS g"),
            {topic, count}));
    }
    // `count` dead events in a window on the dead page, the one in `row`
    // clicked and its detail loaded: its id, null (with a warning) when the
    // click or the detail did not come.
    QUuid openAndChoose(int count, int row) {
        insertDead(count, QStringLiteral("billing"), QStringLiteral("timeout after"));
        openWindow();
        const QUuid chosen = clickRowsAt(showLoaded(core::Status::Dead, count), {row}).value(0);
        if (chosen.isNull())
            return {};
        if (!QTest::qWaitFor([this] { return !detailExplanation().isEmpty(); }, kWindowTimeout)) {
            qWarning("the detail pane did not load the event");
            return {};
        }
        return chosen;
    }
    void activate() {
        m_window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }
};

void TestConsoleUsability::errorGroupWithLongTextKeepsThePanes() {
    const QString longError =
        QStringLiteral("upstream rejected the request because ") + QString(40, QLatin1Char('x')) +
        QStringLiteral(" the account settlement service is in maintenance mode until further "
                       "notice and every call to it answers with the same long explanation");
    insertDead(3, QStringLiteral("billing"), longError);
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("timeout after"));
    openWindow();
    m_window->resize(1600, 1000);
    showLoaded(core::Status::Dead, 5);
    auto *errors = part<console::ErrorGroupsView>();
    QTRY_COMPARE_WITH_TIMEOUT(errors->model()->rowCount(), 2, kWindowTimeout);
    QTest::qWait(50); // let the layout settle
    const PaneSizes before = paneSizes();
    QVERIFY2(before.navigator.width() >= WindowLayout::kMinimumSideWidth,
             qPrintable(describe(before)));

    QTableView *groups = errors->view();
    int longRow = -1;
    for (int row = 0; row < errors->model()->rowCount(); ++row) {
        if (errors->model()->index(row, 0).data().toString().startsWith(QLatin1String("upstream")))
            longRow = row;
    }
    QVERIFY(longRow >= 0);
    QTest::mouseClick(groups->viewport(), Qt::LeftButton, {},
                      groups->visualRect(errors->model()->index(longRow, 0)).center());
    auto *bar = part<console::FilterBar>();
    QTRY_VERIFY_WITH_TIMEOUT(!bar->errorSignature().isEmpty(), kWindowTimeout);
    auto *chip = bar->findChild<QToolButton *>(QStringLiteral("errorChip"));
    QVERIFY(chip && chip->isVisible());
    // The chip reads "Error: upstream…", elided at its end to the width it
    // has: its text fits, so the style does not cut out the middle ("Er…am").
    QTRY_VERIFY2_WITH_TIMEOUT(
        chip->fontMetrics().horizontalAdvance(chip->text()) + chip->iconSize().width() <
            chip->width(),
        qPrintable(QStringLiteral("\"%1\" in %2 px").arg(chip->text()).arg(chip->width())),
        kWindowTimeout);
    QVERIFY2(chip->text().startsWith(QLatin1String("Error: up")), qPrintable(chip->text()));
    QTRY_COMPARE_WITH_TIMEOUT(page(core::Status::Dead)->model()->rowCount(), 3, kWindowTimeout);
    QTest::qWait(50);
    const PaneSizes filtered = paneSizes();
    QVERIFY2(filtered == before,
             qPrintable(describe(before) + QStringLiteral(" became ") + describe(filtered)));
    // And the filter bar still shows all of itself, the chip and Clear included.
    for (QWidget *w : bar->findChildren<QWidget *>(Qt::FindDirectChildrenOnly)) {
        if (w->isVisible())
            QVERIFY2(w->geometry().right() < bar->width(), qPrintable(w->objectName()));
    }

    QTest::mouseClick(chip, Qt::LeftButton); // removes the error filter
    QTRY_VERIFY_WITH_TIMEOUT(bar->errorSignature().isEmpty(), kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(page(core::Status::Dead)->model()->rowCount(), 5, kWindowTimeout);
    QTest::qWait(50);
    QVERIFY2(paneSizes() == before, qPrintable(describe(paneSizes())));
}

void TestConsoleUsability::unusableSavedLayoutIsIgnored() {
    // Bytes that are no layout at all.
    m_settings->setWindowState(profileKey(), QByteArray("not a layout"));
    openWindow();
    QTest::qWait(50);
    QVERIFY(dock("navigatorDock")->isVisible());
    QVERIFY(!dock("dispatcherDock")->isVisible());
    QVERIFY2(paneSizes().navigator.width() >= WindowLayout::kMinimumSideWidth,
             qPrintable(describe(paneSizes())));
    closeWindow();

    // A layout squeezed by an older console: the navigator and the detail a
    // few pixels wide (their minimum sizes are taken away to make it).
    openWindow();
    for (const char *name : {"navigatorDock", "errorGroupsDock", "detailDock"})
        dock(name)->widget()->setMinimumWidth(0);
    m_window->resizeDocks({dock("navigatorDock"), dock("detailDock")}, {12, 12}, Qt::Horizontal);
    QTest::qWait(50);
    QVERIFY2(paneSizes().navigator.width() < WindowLayout::kMinimumSideWidth,
             qPrintable(describe(paneSizes())));
    closeWindow();
    QVERIFY(!m_settings->windowState(profileKey()).isEmpty());

    openWindow();
    QTest::qWait(50);
    const PaneSizes restored = paneSizes();
    QVERIFY2(restored.navigator.width() >= WindowLayout::kMinimumSideWidth &&
                 restored.errors.width() >= WindowLayout::kMinimumSideWidth &&
                 restored.detail.width() >= WindowLayout::kMinimumSideWidth &&
                 restored.centre.width() >= WindowLayout::kMinimumCentreWidth,
             qPrintable(describe(restored)));
}

void TestConsoleUsability::layoutsArePerProfile() {
    openWindow();
    QVERIFY(!dock("dispatcherDock")->isVisible()); // shown when asked for
    dock("dispatcherDock")->show();
    closeWindow();

    openWindow(); // the same connection: its layout comes back
    QTest::qWait(50);
    QVERIFY(dock("dispatcherDock")->isVisible());
    // Another profile has its own layout (the defaults here).
    m_window->connectTo(core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value(),
                        QStringLiteral("production"));
    QTest::qWait(50);
    QVERIFY(!dock("dispatcherDock")->isVisible());
    m_window->connectTo(core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value());
    QTest::qWait(50);
    QVERIFY(dock("dispatcherDock")->isVisible());
}

void TestConsoleUsability::tabWalksPaneByPane() {
    const QUuid chosen = openAndChoose(4, 1);
    QVERIFY(!chosen.isNull());
    console::EventView *view = currentPage();
    activate();
    QTableView *table = view->table();
    table->setFocus(Qt::TabFocusReason);
    QCOMPARE(QApplication::focusWidget(), table);

    auto *detail = part<console::DetailPane>();
    auto *navigator = part<QTreeView>(QStringLiteral("navigatorView"));
    QTableView *errors = part<console::ErrorGroupsView>()->view();
    auto *search = part<console::FilterBar>()->findChild<QLineEdit *>(QStringLiteral("searchEdit"));
    QVERIFY(navigator && errors && search);
    const QModelIndex current = table->currentIndex();

    // Where each Tab lands: 0 table, 1 detail, 2 navigator, 3 errors, 4 filter.
    QList<int> panes;
    for (int i = 0; i < 60; ++i) {
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QWidget *focus = QApplication::focusWidget();
        QVERIFY(focus);
        const int pane = focus == table                                    ? 0
                         : detail->isAncestorOf(focus)                     ? 1
                         : focus == navigator                              ? 2
                         : focus == errors                                 ? 3
                         : part<console::FilterBar>()->isAncestorOf(focus) ? 4
                                                                           : -1;
        if (pane >= 0 && (panes.isEmpty() || panes.constLast() != pane))
            panes << pane;
        if (focus == table)
            break;
    }
    // The table is one stop (Tab leaves it at once, not cell by cell).
    QCOMPARE(table->currentIndex(), current);
    QCOMPARE(panes, QList<int>({1, 2, 3, 4, 0}));
}

void TestConsoleUsability::tabNeverTraps() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 3);
    activate();
    // The focus starts in the events, not on a toggle of the tool bar.
    QTRY_COMPARE_WITH_TIMEOUT(QApplication::focusWidget(), view->table(), kWindowTimeout);
    // Every pane on show, and the embedded dispatcher running, so that its
    // Stop button is enabled.
    for (QDockWidget *d : m_window->findChildren<QDockWidget *>()) {
        if (!d->isVisible())
            d->toggleViewAction()->trigger();
    }
    auto *panel = part<console::DispatcherPanel>();
    QVERIFY(panel);
    core::DispatcherConfig config;
    config.runnerUrl = QUrl(QStringLiteral("http://127.0.0.1:9/events"));
    panel->setConfig(config, false);
    panel->start();
    auto *stop = panel->findChild<QPushButton *>(QStringLiteral("dispatcherStop"));
    QTRY_VERIFY_WITH_TIMEOUT(stop && stop->isEnabled(), kWindowTimeout);
    const auto name = [](const QWidget *w) {
        return w ? QStringLiteral("%1 (%2)").arg(w->objectName(),
                                                 QLatin1String(w->metaObject()->className()))
                 : QStringLiteral("nothing");
    };

    // Around and around: each press moves the focus on, and the walk comes
    // back to where it began, both ways.
    for (const bool forward : {true, false}) {
        QWidget *start = view->table();
        start->setFocus(Qt::TabFocusReason);
        QSet<QWidget *> walked;
        for (int i = 0; i < 300 && !QTest::currentTestFailed(); ++i) {
            QWidget *before = QApplication::focusWidget();
            QTest::keyClick(before, forward ? Qt::Key_Tab : Qt::Key_Backtab,
                            forward ? Qt::NoModifier : Qt::ShiftModifier);
            QWidget *after = QApplication::focusWidget();
            QVERIFY2(after && after != before,
                     qPrintable(QStringLiteral("%1 keeps the focus").arg(name(before))));
            if (after == start)
                break;
            walked.insert(after);
        }
        QVERIFY2(QApplication::focusWidget() == start,
                 qPrintable(QStringLiteral("%1 stops, not back at the table").arg(walked.size())));
        QVERIFY(walked.contains(stop));
    }
    panel->stop();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isRunning(), kWindowTimeout);
}

void TestConsoleUsability::everyMenuEntryHasAnAccessLetter() {
    openWindow();
    QStringList missing;
    std::function<void(const QMenu *)> walk = [&](const QMenu *menu) {
        for (const QAction *a : menu->actions()) {
            if (a->isSeparator() || !a->isVisible())
                continue;
            if (!a->text().contains(QLatin1Char('&')))
                missing << menu->title() + QLatin1String(" > ") + a->text();
            if (a->menu())
                walk(a->menu());
        }
    };
    for (const QAction *top : m_window->menuBar()->actions()) {
        if (top->menu())
            walk(top->menu());
    }
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QStringLiteral(", "))));
}

void TestConsoleUsability::menusAndActionsHaveKeys() {
    openWindow();
    for (QAction *menu : m_window->menuBar()->actions())
        QVERIFY2(menu->text().contains(QLatin1Char('&')), qPrintable(menu->text()));
    const QList<QPair<ActionController::Kind, QKeySequence>> keys{
        {ActionController::RetrySelected, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R)},
        {ActionController::RequeueSelected, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Q)},
        {ActionController::CancelSelected, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_X)},
        {ActionController::ReplaySelected, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P)},
        {ActionController::PurgeSelected, QKeySequence(Qt::SHIFT | Qt::Key_Delete)},
    };
    for (const auto &[kind, key] : keys) {
        QAction *a = action(kind);
        QCOMPARE(a->shortcut(), key);
        QVERIFY2(a->text().contains(QLatin1Char('&')), qPrintable(a->text()));
        // The tooltip names the key, whether the action is enabled or not.
        QVERIFY2(a->toolTip().contains(key.toString(QKeySequence::NativeText)),
                 qPrintable(a->toolTip()));
    }
}

void TestConsoleUsability::copyTakesTheSelectedTextOutsideTheTable() {
    insertDead(2, QStringLiteral("billing"), QStringLiteral("timeout after"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Dead, 2);
    const QUuid id = clickRowsAt(view, {0}).value(0);
    QVERIFY(!id.isNull());
    activate();
    auto *payload =
        part<console::DetailPane>()->findChild<QPlainTextEdit *>(QStringLiteral("payloadEdit"));
    QTRY_VERIFY_WITH_TIMEOUT(payload->toPlainText().contains(QLatin1String("\"n\"")),
                             kWindowTimeout);
    part<QTabWidget>(QStringLiteral("tabs"))->setCurrentWidget(payload->parentWidget());
    QApplication::clipboard()->clear();

    // Text selected in the payload: Ctrl+C copies it, not the event id.
    payload->setFocus(Qt::MouseFocusReason);
    payload->selectAll();
    QTest::keyClick(payload, Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(), payload->textCursor().selection().toPlainText());

    // In the table, Ctrl+C copies the selected events' ids.
    view->table()->setFocus(Qt::MouseFocusReason);
    QTest::keyClick(view->table(), Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(), core::uuidText(id));
}

void TestConsoleUsability::requeueKeepsTheChosenEvent() {
    const QUuid chosen = openAndChoose(3, 1);
    QVERIFY(!chosen.isNull());
    console::EventView *view = currentPage();
    QVERIFY(detailTitle().contains(core::uuidText(chosen)));
    activate();

    // Replay: the event stays dead; selection and detail stay on it.
    QSignalSpy said(actions(), &console::ActionController::message);
    answerNext<QMessageBox>([](QMessageBox *box) { box->button(QMessageBox::Yes)->click(); });
    QTest::keyClick(view->table(), Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_COMPARE_WITH_TIMEOUT(
        scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE replay_of = ?"),
               {chosen.toString(QUuid::WithoutBraces)}),
        QStringLiteral("1"), kWindowTimeout);
    // In words, not "Replay: changed 1 of 1".
    QTRY_VERIFY_WITH_TIMEOUT(!said.isEmpty() && said.constLast().constFirst().toString() ==
                                                    QStringLiteral("Replayed 1 event."),
                             kWindowTimeout);
    refresh();
    QTest::qWait(300);
    QCOMPARE(view->selectedEvents().size(), 1);
    QCOMPARE(view->selectedEvents().at(0).id, chosen);
    QVERIFY2(detailTitle().contains(core::uuidText(chosen)), qPrintable(detailTitle()));

    // Requeue (by its key): the event leaves the dead page; the detail stays
    // on it (now pending) and no neighbour becomes current instead.
    activate(); // back from the confirmation
    view->table()->setFocus(Qt::MouseFocusReason);
    answerNext<QMessageBox>([](QMessageBox *box) { box->button(QMessageBox::Yes)->click(); });
    QTest::keyClick(view->table(), Qt::Key_Q, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(detailTitle().contains(QLatin1String("pending")), kWindowTimeout);
    QVERIFY2(detailTitle().contains(core::uuidText(chosen)), qPrintable(detailTitle()));
    QVERIFY(!view->table()->currentIndex().isValid());
    QVERIFY(view->selectedEvents().isEmpty());

    // "Replayed as <id>" is a link: it shows and selects the replay.
    const QUuid replay =
        QUuid::fromString(scalar(QStringLiteral("SELECT id FROM outbox_events WHERE replay_of = ?"),
                                 {chosen.toString(QUuid::WithoutBraces)}));
    QLabel *link = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (link = part<console::DetailPane>()->findChild<QLabel *>(QStringLiteral("replayedAs"))),
        kWindowTimeout);
    QVERIFY2(link->text().contains(QLatin1String("<a href")), qPrintable(link->text()));
    Q_EMIT link->linkActivated(core::uuidText(replay));
    QTRY_COMPARE_WITH_TIMEOUT(currentPage(), page(core::Status::Pending), kWindowTimeout);
    QTRY_VERIFY_WITH_TIMEOUT(detailTitle().contains(core::uuidText(replay)), kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(page(core::Status::Pending)->selectedEvents().size(), 1,
                              kWindowTimeout);
    QCOMPARE(page(core::Status::Pending)->selectedEvents().at(0).id, replay);
}

void TestConsoleUsability::liveInsertsDoNotMoveSelectedRows() {
    insertPending(5, QStringLiteral("first"));
    openWindow();
    console::EventView *view = showLoaded(core::Status::Pending, 5);
    const QUuid chosen = clickRowsAt(view, {2}).value(0);
    QVERIFY(!chosen.isNull());
    QTableView *table = view->table();
    const auto chosenRect = [&] {
        const int row = view->model()->rowOf(chosen);
        return table->visualRect(table->model()->index(row, 0));
    };
    const QRect before = chosenRect();

    insertPending(3, QStringLiteral("second"));
    refresh();
    auto *more = view->findChild<QToolButton *>(QStringLiteral("newRowsButton"));
    QVERIFY(more);
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->heldRows(), 3, kWindowTimeout);
    QVERIFY(more->isVisible());
    QVERIFY2(more->text().contains(QLatin1Char('3')), qPrintable(more->text()));
    QCOMPARE(view->model()->rowCount(), 5);
    QCOMPARE(chosenRect(), before);
    QCOMPARE(view->selectedEvents().at(0).id, chosen);

    // The button is no Tab stop, and never covers the chosen row: choose
    // the top row, and it moves to the bottom.
    QCOMPARE(more->focusPolicy(), Qt::NoFocus);
    const auto covers = [&] {
        return more->geometry().intersects(
            chosenRect().translated(table->viewport()->geometry().topLeft()));
    };
    QVERIFY(!covers());
    const QUuid top = clickRowsAt(view, {0}).value(0);
    QVERIFY(!top.isNull());
    const QRect topRow =
        table->visualRect(table->model()->index(0, 0)).translated(table->viewport()->pos());
    QVERIFY2(!more->geometry().intersects(topRow),
             qPrintable(QStringLiteral("the button at %1,%2 covers the chosen top row")
                            .arg(more->x())
                            .arg(more->y())));

    // Asked for (Alt+N, or a click), the new rows come in; the selection
    // follows its event.
    QTest::keyClick(table, Qt::Key_N, Qt::AltModifier);
    QCOMPARE(view->model()->rowCount(), 8);
    QVERIFY(!more->isVisible());
    QCOMPARE(view->selectedEvents().size(), 1);
    QCOMPARE(view->selectedEvents().at(0).id, top);
}

QTEST_MAIN(TestConsoleUsability)
#include "tst_consoleusability.moc"
