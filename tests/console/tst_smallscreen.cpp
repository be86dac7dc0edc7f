// The window on a laptop's screen (1366x768, window frames on): it opens
// within the screen's available geometry and stays there whatever it shows,
// every pane and the charts included; the panes shrink instead.

#include "windowtestbase.h"

#include <QDockWidget>
#include <QFile>
#include <QScreen>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestSmallScreen final : public WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void theWindowStaysOnTheScreen();

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
    }
};

void TestSmallScreen::theWindowStaysOnTheScreen() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    openWindow();
    QCOMPARE(m_window->screen()->availableGeometry().size(), QSize(1366, 768));
    checkOnScreen(QStringLiteral("opening"));
    if (QTest::currentTestFailed())
        return;
    // Every pane of the View menu, one after the other, then all at once.
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
        if (dock->isVisible())
            continue;
        dock->toggleViewAction()->trigger();
        checkOnScreen(dock->windowTitle());
        if (QTest::currentTestFailed())
            return;
    }
    showLoaded(core::Status::Dead, 3);
    checkOnScreen(QStringLiteral("the dead page"));
}

int main(int argc, char **argv) {
    // A screen of 1366x768 with window frames, as on a laptop.
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("screen.json"));
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(R"({"windowFrameMargins": true, "screens": [{"name": "laptop",)"
                   R"( "x": 0, "y": 0, "width": 1366, "height": 768, "logicalDpi": 96,)"
                   R"( "logicalBaseDpi": 96, "dpr": 1}]})") < 0)
        return 1;
    file.close();
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
    QApplication app(argc, argv);
    TestSmallScreen test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_smallscreen.moc"
