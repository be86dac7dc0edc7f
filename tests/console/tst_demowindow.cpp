// The demo in a window, as outbox-console-demo runs it (offscreen): "Start
// demo" is off while it runs, and what the console keeps for the demo's
// throwaway cluster goes with it instead of piling up in the settings file
// (a new key on every run).

#include "console/demo/demosession.h"
#include "console/model/consolesettings.h"
#include "console/model/databasesettings.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/mainwindow.h"

#include <QAction>
#include <QPointer>
#include <QSettings>
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
};

QTEST_MAIN(TestDemoWindow)
#include "tst_demowindow.moc"
