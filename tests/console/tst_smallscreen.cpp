// The window on a laptop's screen (1366x768, window frames on): it opens
// within the screen's available geometry and stays there whatever it shows,
// every pane and the charts included; the panes shrink instead. The
// Dispatchers pane, tabbed beside Jobs, shows every column in full.

#include "laptopscreen.h"
#include "windowtestbase.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QScreen>
#include <QStatusBar>
#include <QTableWidget>
#include <QToolBar>
#include <QtTest>

#include <functional>

using namespace outbox;
using namespace outbox::testing;

class TestSmallScreen final : public WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void theWindowStaysOnTheScreen();
    void dispatchersColumnsAreReadable();
    void maximisedNothingOverlapsOrIsCut();

private:
    // The window, frame included, within what the screen offers.
    void checkOnScreen(const QString &after) {
        QTest::qWait(100); // queued layout work
        const QRect room = m_window->screen()->availableGeometry();
        const QRect frame = m_window->frameGeometry();
        // What asks for the room: each pane on show, its area and least size.
        QStringList panes;
        for (const QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            if (dock->isVisible())
                panes << QStringLiteral("%1 (area %2, at least %3x%4)")
                             .arg(dock->objectName())
                             .arg(int(m_window->dockWidgetArea(const_cast<QDockWidget *>(dock))))
                             .arg(dock->minimumSizeHint().width())
                             .arg(dock->minimumSizeHint().height());
        }
        QVERIFY2(room.contains(frame),
                 qPrintable(QStringLiteral("after %1: the window %2x%3 at %4,%5 is outside "
                                           "the screen's %6x%7; panes: %8")
                                .arg(after)
                                .arg(frame.width())
                                .arg(frame.height())
                                .arg(frame.x())
                                .arg(frame.y())
                                .arg(room.width())
                                .arg(room.height())
                                .arg(panes.join(QStringLiteral(", ")))));
        checkFilterBar(after);
    }

    // `check` after `first`, after showing each pane of the View menu in
    // turn (until all are on show) and on the dead page (3 dead events).
    void walkThePanes(const QString &first, const std::function<void(const QString &)> &check) {
        check(first);
        if (QTest::currentTestFailed())
            return;
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            if (dock->isVisible())
                continue;
            dock->toggleViewAction()->trigger();
            check(dock->windowTitle());
            if (QTest::currentTestFailed())
                return;
        }
        showLoaded(core::Status::Dead, 3);
        check(QStringLiteral("the dead page"));
    }

    // The filter bar's fields side by side, none drawn over another and none
    // narrower than it needs (at 1366x768 the search field once covered the
    // namespace box).
    void checkFilterBar(const QString &after) {
        auto *bar = m_window->findChild<QWidget *>(QStringLiteral("filterBar"));
        QVERIFY(bar);
        QList<QWidget *> fields;
        for (QWidget *child : bar->findChildren<QWidget *>(Qt::FindDirectChildrenOnly)) {
            if (child->isVisible() && !child->isWindow())
                fields << child;
        }
        QStringList seen;
        for (const QWidget *field : std::as_const(fields)) {
            const QRect at(field->mapTo(m_window.get(), QPoint(0, 0)), field->size());
            seen << QStringLiteral("%1 %2,%3 %4x%5 (least %6)")
                        .arg(field->objectName())
                        .arg(at.x())
                        .arg(at.y())
                        .arg(at.width())
                        .arg(at.height())
                        .arg(field->minimumSizeHint().width());
        }
        const QRect shown = bar->rect().translated(bar->mapTo(m_window.get(), QPoint(0, 0)));
        for (int i = 0; i < fields.size(); ++i) {
            const QRect a = fields[i]->geometry();
            QVERIFY2(shown.contains(
                         QRect(fields[i]->mapTo(m_window.get(), QPoint(0, 0)), fields[i]->size())),
                     qPrintable(QStringLiteral("after %1: %2 is outside the filter bar: %3")
                                    .arg(after, fields[i]->objectName(),
                                         seen.join(QStringLiteral("; ")))));
            for (int j = i + 1; j < fields.size(); ++j) {
                QVERIFY2(
                    !a.intersects(fields[j]->geometry()),
                    qPrintable(QStringLiteral("after %1: %2 and %3 overlap: %4")
                                   .arg(after, fields[i]->objectName(), fields[j]->objectName(),
                                        seen.join(QStringLiteral("; ")))));
            }
        }
    }
};

void TestSmallScreen::theWindowStaysOnTheScreen() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    QCOMPARE(m_window->screen()->availableGeometry().size(), QSize(1366, 768));
    walkThePanes(QStringLiteral("opening"), [this](const QString &after) { checkOnScreen(after); });
}

void TestSmallScreen::dispatchersColumnsAreReadable() {
    QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                         " repeat('s', 64), 'worker-7.eu-west.internal', 424242,"
                                         " '1.12.3', 'outboxctl', 'billing', 'http://runner', 64,"
                                         " 60000, now())")));
    openWindow();
    auto *jobs = part<QDockWidget>(QStringLiteral("jobsDock"));
    auto *dispatchers = part<QDockWidget>(QStringLiteral("dispatchersDock"));
    QVERIFY(jobs && dispatchers);
    jobs->toggleViewAction()->trigger();
    dispatchers->toggleViewAction()->trigger();
    QVERIFY(m_window->tabifiedDockWidgets(dispatchers).contains(jobs));
    auto *table = part<QTableWidget>(QStringLiteral("dispatchersTable"));
    QVERIFY(table);
    QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 1, kWindowTimeout);
    checkOnScreen(QStringLiteral("the dispatchers beside the jobs"));
    QVERIFY(table->isVisible());
    // Every column in view without scrolling, its header and its text whole.
    const QHeaderView *header = table->horizontalHeader();
    const QRect viewport = table->viewport()->rect();
    for (int column = 0; column < table->columnCount(); ++column) {
        const QString title = table->horizontalHeaderItem(column)->text();
        const QRect cell = table->visualItemRect(table->item(0, column));
        // The text and the cell's margins (3 px a side in every style here).
        const int textNeeds =
            table->fontMetrics().horizontalAdvance(table->item(0, column)->text()) + 6;
        const int titleNeeds = header->fontMetrics().horizontalAdvance(title);
        QVERIFY2(viewport.contains(cell) && cell.width() >= textNeeds &&
                     header->sectionSize(column) > titleNeeds,
                 qPrintable(QStringLiteral("%1 (\"%2\") at %3..%4, needs %5 (title %6), in a "
                                           "viewport %7 wide")
                                .arg(title, table->item(0, column)->text())
                                .arg(cell.left())
                                .arg(cell.right())
                                .arg(textNeeds)
                                .arg(titleNeeds)
                                .arg(viewport.width())));
    }
}

void TestSmallScreen::maximisedNothingOverlapsOrIsCut() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    m_window->showMaximized();
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isMaximized(), kWindowTimeout);
    const QRect room = m_window->screen()->availableGeometry();
    // Maximised: the frame fills what the screen offers.
    QTRY_COMPARE_WITH_TIMEOUT(m_window->frameGeometry(), room, kWindowTimeout);
    const auto check = [this](const QString &after) {
        checkOnScreen(after);
        if (QTest::currentTestFailed())
            return;
        // The bars and the panes on show: inside the window, whole (at least
        // their least size) and none over another.
        QList<QWidget *> parts{m_window->menuWidget(), m_window->statusBar(),
                               m_window->centralWidget()};
        for (QToolBar *bar : m_window->findChildren<QToolBar *>()) {
            if (bar->isVisible())
                parts << bar;
        }
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            if (dock->isVisible() && !dock->visibleRegion().isEmpty())
                parts << dock;
        }
        QStringList seen;
        QList<QRect> rects;
        for (const QWidget *part : std::as_const(parts)) {
            const QRect at(part->mapTo(m_window.get(), QPoint(0, 0)), part->size());
            rects << at;
            seen << QStringLiteral("%1 %2,%3 %4x%5 (least %6x%7)")
                        .arg(part->objectName().isEmpty()
                                 ? QLatin1String(part->metaObject()->className())
                                 : part->objectName())
                        .arg(at.x())
                        .arg(at.y())
                        .arg(at.width())
                        .arg(at.height())
                        .arg(part->minimumSizeHint().width())
                        .arg(part->minimumSizeHint().height());
        }
        const QString all = seen.join(QStringLiteral("; "));
        for (int i = 0; i < parts.size(); ++i) {
            const QSize least = parts[i]->minimumSizeHint();
            QVERIFY2(
                m_window->rect().contains(rects[i]) && rects[i].width() >= least.width() &&
                    rects[i].height() >= least.height(),
                qPrintable(QStringLiteral("after %1: %2 is cut: %3").arg(after, seen[i], all)));
            for (int j = i + 1; j < parts.size(); ++j) {
                QVERIFY2(!rects[i].intersects(rects[j]),
                         qPrintable(QStringLiteral("after %1: %2 and %3 overlap: %4")
                                        .arg(after, seen[i], seen[j], all)));
            }
        }
    };
    walkThePanes(QStringLiteral("maximising"), check);
    QVERIFY(m_window->isMaximized());
}

int main(int argc, char **argv) {
    QTemporaryDir dir;
    if (!testing::useLaptopScreen(dir))
        return 1;
    QApplication app(argc, argv);
    TestSmallScreen test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_smallscreen.moc"
