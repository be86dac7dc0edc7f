// The fleet window, driven from the keyboard as an on-call engineer would:
// the databases' rows, the alerts above them naming the database, Enter on
// a row opening that database's console in a tab (connected), Ctrl+W back
// to the fleet, and a group collapsed and expanded with the arrow keys.

#include "console/model/commandline.h"
#include "console/model/consolesettings.h"
#include "console/model/databasesettings.h"
#include "console/model/fleetmodel.h"
#include "console/widgets/fleetwindow.h"
#include "console/widgets/mainwindow.h"
#include "support/fleetdata.h"
#include "support/localport.h"
#include "support/pgtestcase.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;
using console::FleetModel;
using console::FleetWindow;

class TestFleetWindow final : public PgTestSuite {
    Q_OBJECT

public:
    TestFleetWindow()
        : PgTestSuite(migrateSchema, PerTest::Nothing) {}

private:
    QTemporaryDir m_dir;
    QStringList m_names;

    QList<store::FleetEntry> entries() {
        QList<store::FleetEntry> list;
        for (int i = 0; i < m_names.size(); ++i) {
            list << store::FleetEntry{QStringLiteral("svc%1").arg(i),
                                      core::ConnInfo::parse(m_pg->connInfo(m_names[i])).value(),
                                      i < 2 ? QStringLiteral("team") : QString(),
                                      QStringLiteral("on-call")};
        }
        list << store::FleetEntry{
            QStringLiteral("gone"),
            core::ConnInfo::parse(
                QStringLiteral("host=127.0.0.1 port=%1 dbname=x").arg(closedPort()))
                .value(),
            {},
            {}};
        return list;
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(startPg(migrateSchema));
        for (int i = 0; i < 3; ++i) {
            m_names << m_pg->freshMigratedDatabase();
            QVERIFY(!m_names.last().isEmpty());
        }
        // svc1: due for 10 minutes, nobody delivering.
        QSqlDatabase db = m_pg->open(m_names[1]);
        QVERIFY(insertDueSince(db, 3, QStringLiteral("10 minutes")));
    }

    void keyboardOpensAndClosesADatabaseTab() {
        QSettings qsettings(m_dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
        console::ConsoleSettings settings(&qsettings);
        FleetWindow window(&settings, entries(), console::MainWindowOptions{});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *view = window.findChild<QTreeView *>(QStringLiteral("fleetView"));
        auto *tabs = window.findChild<QTabWidget *>(QStringLiteral("fleetTabs"));
        QVERIFY(view && tabs);
        auto *model = qobject_cast<FleetModel *>(view->model());
        QVERIFY(model);
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(tabs->count(), 1);
        QTRY_VERIFY(view->hasFocus());

        // Worst first: the team group (svc1 in alert: due for 10 minutes
        // and nobody delivering) before the unreachable one and svc2.
        QTRY_COMPARE_WITH_TIMEOUT(model->index(0, 0).data(FleetModel::StateNameRole).toString(),
                                  QStringLiteral("alert"), kTimeout);
        const QModelIndex team = model->index(0, 0);
        QCOMPARE(team.data().toString(), QStringLiteral("team (2)"));
        QVERIFY(view->isExpanded(team)); // it moved up, expanded as it was
        QCOMPARE(model->index(0, 0, team).data().toString(), QStringLiteral("svc1"));
        QTRY_COMPARE_WITH_TIMEOUT(model->index(1, 0).data().toString(), QStringLiteral("gone"),
                                  kTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(model->index(1, FleetModel::StateColumn)
                                     .data()
                                     .toString()
                                     .startsWith(QLatin1String("Unreachable: ")),
                                 kTimeout);

        // Down to svc1, Enter: its console in a tab of this window, connected.
        view->setCurrentIndex(team);
        QTest::keyClick(view, Qt::Key_Down);
        QCOMPARE(view->currentIndex().data().toString(), QStringLiteral("svc1"));
        QTest::keyClick(view, Qt::Key_Return);
        QCOMPARE(tabs->count(), 2);
        QCOMPARE(tabs->currentIndex(), 1);
        QCOMPARE(tabs->tabText(1), QStringLiteral("svc1"));
        auto *console = qobject_cast<console::MainWindow *>(tabs->currentWidget());
        QVERIFY(console);
        auto *state = console->findChild<QLabel *>(QStringLiteral("connectionStateLabel"));
        QVERIFY(state);
        QTRY_VERIFY_WITH_TIMEOUT(state->text().endsWith(QLatin1String(" connected")), kTimeout);
        // Enter on it again from the fleet shows the same tab.
        tabs->setCurrentIndex(0);
        view->setFocus();
        QTest::keyClick(view, Qt::Key_Enter);
        QCOMPARE(tabs->count(), 2);
        QCOMPARE(tabs->currentIndex(), 1);

        // Ctrl+W: back to the fleet, the tab gone once its console closed.
        QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : console,
                        Qt::Key_W, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(tabs->count(), 1, kTimeout);
        QVERIFY(view->hasFocus());

        // Left collapses the group, Right opens it again.
        view->setCurrentIndex(model->index(0, 0));
        QTest::keyClick(view, Qt::Key_Left);
        QVERIFY(!view->isExpanded(model->index(0, 0)));
        QTest::keyClick(view, Qt::Key_Right);
        QVERIFY(view->isExpanded(model->index(0, 0)));
    }

    void alertsNameTheDatabase() {
        QSettings qsettings(m_dir.filePath(QStringLiteral("alerts.ini")), QSettings::IniFormat);
        console::ConsoleSettings settings(&qsettings);
        {
            // svc1's thresholds: alert at once when the oldest due is over a minute.
            console::DatabaseSettings db(&qsettings,
                                         console::DatabaseSettings::keyFor(entries().at(1).target));
            console::AlertThresholds t;
            t.oldestDueAge = std::chrono::seconds(60);
            t.oldestDueFor = std::chrono::seconds(0);
            db.setAlertThresholds(t);
        }
        FleetWindow window(&settings, entries(), console::MainWindowOptions{});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *alerts = window.findChild<QLabel *>(QStringLiteral("fleetAlerts"));
        QVERIFY(alerts);
        QTRY_VERIFY_WITH_TIMEOUT(alerts->isVisible(), kTimeout);
        QVERIFY2(alerts->text().startsWith(QLatin1String("svc1: ")), qPrintable(alerts->text()));
        auto *summary = window.findChild<QLabel *>(QStringLiteral("fleetSummary"));
        QTRY_VERIFY_WITH_TIMEOUT(summary->text().contains(QLatin1String("1 in alert")), kTimeout);
    }

    // The saved connection profiles join the fleet file's databases, in a
    // group of their own, unless the file already has a database by that name.
    void savedProfilesJoinTheFleet() {
        QSettings qsettings(m_dir.filePath(QStringLiteral("profiles.ini")), QSettings::IniFormat);
        console::ConsoleSettings settings(&qsettings);
        console::ConnectionProfile staging;
        staging.name = QStringLiteral("staging");
        staging.host = QStringLiteral("db.staging");
        staging.database = QStringLiteral("orders");
        settings.saveProfile(staging);
        console::ConnectionProfile clash = staging;
        clash.name = QStringLiteral("svc0");
        settings.saveProfile(clash);
        const auto fleet = FleetWindow::withProfiles(entries(), settings);
        QCOMPARE(fleet.size(), entries().size() + 1);
        QCOMPARE(fleet.last().name, QStringLiteral("staging"));
        QCOMPARE(fleet.last().group, QStringLiteral("Saved profiles"));
        QCOMPARE(fleet.last().target.host, QStringLiteral("db.staging"));
        QCOMPARE(fleet.first().target, entries().first().target); // the file's svc0 wins
    }

    void commandLine() {
        const QString program = QStringLiteral("outbox-console");
        auto line = console::parseCommandLine(
            {program, QStringLiteral("--fleet"), QStringLiteral("team.fleet")});
        QVERIFY2(line.ok(), qPrintable(line.errorMessage()));
        QCOMPARE(line->fleetFile, QStringLiteral("team.fleet"));
        auto both =
            console::parseCommandLine({program, QStringLiteral("--fleet"), QStringLiteral("f"),
                                       QStringLiteral("--db"), QStringLiteral("dbname=x")});
        QVERIFY(!both.ok());
        QVERIFY2(both.errorMessage().contains(QLatin1String("give only one")),
                 qPrintable(both.errorMessage()));
        auto empty = console::parseCommandLine({program, QStringLiteral("--fleet"), QString()});
        QVERIFY(!empty.ok());
        QVERIFY(console::commandLineHelp().contains(QLatin1String("--fleet <file>")));
    }

    // A fleet file that does not parse: exit 2 with the line and the fix,
    // the password never echoed, before any display is needed.
    void executableRejectsABadFleetFile() {
        QTemporaryDir home;
        const QString path = home.filePath(QStringLiteral("bad.fleet"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("[a]\nconninfo = host=x password=topsecret\n");
        file.close();
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path());
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(OUTBOX_CONSOLE_BIN), {QStringLiteral("--fleet"), path});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
        const QString err = QString::fromLocal8Bit(process.readAllStandardError());
        QVERIFY2(err.contains(QLatin1String(":2: the connection of \"a\" holds a password")),
                 qPrintable(err));
        QVERIFY(!err.contains(QLatin1String("topsecret")));
    }

private:
    static constexpr int kTimeout = 20000;
};

QTEST_MAIN(TestFleetWindow)
#include "tst_fleetwindow.moc"
