// The demo in a window, as outbox-console-demo runs it (offscreen): "Start
// demo" is off while it runs, and what the console keeps for the demo's
// throwaway cluster goes with it instead of piling up in the settings file
// (a new key on every run). On a laptop's screen (1366x768, window frames
// on) the event's detail pane has the height to read a payload, and the
// window stays within the screen.

#include "console/model/consolesettings.h"
#include "console/model/databasesettings.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/mainwindow.h"
#include "devtools/demo/demosession.h"
#include "laptopscreen.h"

#include <QAction>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QPointer>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox;

class TestDemoWindow final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aDemoLeavesNoSettingsBehind() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QSettings qsettings(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
        console::ConsoleSettings settings(&qsettings);
        console::MainWindowOptions options;
        options.demo = console::demoFactory();
        auto window = std::make_unique<console::MainWindow>(&settings, options);
        window->show();
        auto *again = window->findChild<QAction *>(QStringLiteral("startDemoAction"));
        QVERIFY(again);
        QVERIFY(again->isEnabled());
        // The window's client, once it is connected to the demo's cluster.
        QPointer<console::StoreClient> connectedClient;
        auto *actions = window->findChild<console::ActionController *>();
        QVERIFY(actions);
        connect(actions, &console::ActionController::clientChanged, this,
                [&connectedClient](console::StoreClient *client) {
                    if (!client)
                        return;
                    connect(client, &console::StoreClient::connectionStateChanged, client,
                            [&connectedClient, client](console::ConnectionState state) {
                                if (state == console::ConnectionState::Connected)
                                    connectedClient = client;
                            });
                });
        QCOMPARE(window->startDemo(), console::DemoStart::InThisWindow);
        QVERIFY(!again->isEnabled());

        // Connected to the demo's cluster: its thresholds are kept while it
        // runs (the alert monitor reads them for that key).
        QTRY_VERIFY_WITH_TIMEOUT(connectedClient, 120000);
        console::StoreClient *client = connectedClient;
        // The embedded dispatcher runs with the demo's routes (given in
        // code, not a file: it once refused to start over that).
        auto *panel = window->findChild<console::DispatcherPanel *>();
        QVERIFY(panel);
        QTRY_VERIFY_WITH_TIMEOUT(panel->isRunning(), 60000);
        checkDetailPane(window.get());
        if (QTest::currentTestFailed())
            return;
        const QString key = console::DatabaseSettings::keyFor(client->connInfo());
        console::AlertThresholds thresholds;
        thresholds.deathsPerMinute = 3;
        console::DatabaseSettings(&qsettings, key).setAlertThresholds(thresholds);
        QVERIFY(!qsettings.childGroups().isEmpty());
        qsettings.beginGroup(QStringLiteral("databases"));
        QCOMPARE(qsettings.childGroups().size(), 1);
        qsettings.endGroup();

        // Closed: the demo stops, its cluster and its settings are gone.
        window->close();
        QTRY_VERIFY_WITH_TIMEOUT(!window->isVisible(), 120000);
        window.reset();
        qsettings.beginGroup(QStringLiteral("databases"));
        QCOMPARE(qsettings.childGroups(), QStringList());
        qsettings.endGroup();
        QCOMPARE(console::DatabaseSettings(&qsettings, key).alertThresholds().deathsPerMinute,
                 console::AlertThresholds{}.deathsPerMinute);
    }

private:
    // The event's pane on show (not a hidden tab) and its payload at least
    // kPayloadLines lines high; the window and every pane within the screen.
    static void checkDetailPane(QWidget *window) {
        constexpr int kPayloadLines = 10;
        QTest::qWait(200); // queued layout work
        const QRect room = window->screen()->availableGeometry();
        QCOMPARE(room.size(), QSize(1366, 768));
        QStringList panes;
        QStringList outside;
        for (QDockWidget *dock : window->findChildren<QDockWidget *>()) {
            if (!dock->isVisible() || dock->visibleRegion().isEmpty())
                continue; // not on show, or a tab behind another
            const QRect at(dock->mapTo(window, QPoint(0, 0)), dock->size());
            panes << QStringLiteral("%1 %2x%3 (at least %4x%5)")
                         .arg(dock->objectName())
                         .arg(at.width())
                         .arg(at.height())
                         .arg(dock->minimumSizeHint().width())
                         .arg(dock->minimumSizeHint().height());
            if (!window->rect().contains(at))
                outside << dock->objectName();
        }
        QVERIFY2(room.contains(window->frameGeometry()),
                 qPrintable(QStringLiteral("the window at %1,%2 %3x%4; panes: %5")
                                .arg(window->frameGeometry().x())
                                .arg(window->frameGeometry().y())
                                .arg(window->frameGeometry().width())
                                .arg(window->frameGeometry().height())
                                .arg(panes.join(QStringLiteral(", ")))));
        QVERIFY2(outside.isEmpty(), qPrintable(QStringLiteral("%1 outside the window; panes: %2")
                                                   .arg(outside.join(QStringLiteral(", ")),
                                                        panes.join(QStringLiteral(", ")))));
        auto *detail = window->findChild<QDockWidget *>(QStringLiteral("detailDock"));
        QVERIFY(detail);
        QVERIFY2(detail->isVisible() && !detail->visibleRegion().isEmpty(),
                 qPrintable(panes.join(QStringLiteral(", "))));
        auto *payload = detail->findChild<QPlainTextEdit *>(QStringLiteral("payloadEdit"));
        QVERIFY(payload);
        detail->findChild<QTabWidget *>(QStringLiteral("tabs"))
            ->setCurrentWidget(payload->parentWidget());
        QTest::qWait(50);
        const int lines = payload->viewport()->height() / payload->fontMetrics().lineSpacing();
        QVERIFY2(lines >= kPayloadLines,
                 qPrintable(QStringLiteral("the payload shows %1 lines; panes: %2")
                                .arg(lines)
                                .arg(panes.join(QStringLiteral(", ")))));
    }
};

int main(int argc, char **argv) {
    QTemporaryDir dir;
    if (!testing::useLaptopScreen(dir))
        return 1;
    QApplication app(argc, argv);
    TestDemoWindow test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_demowindow.moc"
