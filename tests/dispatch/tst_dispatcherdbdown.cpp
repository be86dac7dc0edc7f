// The database is down when the dispatcher starts: it waits (state
// Reconnecting) instead of failing, and runs once the server is back. A
// separate executable because the test fixture's own admin connection does
// not survive a server restart.

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using devtools::DevRunner;
using dispatch::DispatcherHost;
using dispatch::DispatcherState;
using testing::baseConfig;
using testing::countStatus;
using testing::enqueueMany;

class TestDispatcherDbDown : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

public:
    TestDispatcherDbDown()
        : DispatchTestSuite(PerTest::Nothing) {}

private Q_SLOTS:
    void databaseDownAtStart();
    void stopWhileDatabaseDown();
};

void TestDispatcherDbDown::databaseDownAtStart() {
    const QString dbName = m_pg->freshMigratedDatabase();
    QVERIFY(!dbName.isEmpty());
    {
        QSqlDatabase db = m_pg->open(dbName, QStringLiteral("before"));
        QVERIFY(db.isOpen());
        QVERIFY(enqueueMany(db, 5));
    }
    m_pg->close(QStringLiteral("before"));

    DevRunner runner;
    QVERIFY(runner.listen().ok());
    const auto stopped = m_pg->cluster().stop();
    QVERIFY2(stopped.ok(), qPrintable(stopped.errorMessage()));

    DispatcherHost host(testing::connInfoFor(*m_pg, dbName), baseConfig(runner.url()));
    QSignalSpy started(&host, &DispatcherHost::started);
    QSignalSpy failed(&host, &DispatcherHost::failed);
    host.start();
    // An unreachable database is waited for, not a reason to give up.
    QTRY_COMPARE_WITH_TIMEOUT(host.lastStats().state, DispatcherState::Reconnecting, 20000);
    QTest::qWait(500);
    QCOMPARE(failed.size(), 0);
    QCOMPARE(started.size(), 0);

    const auto restarted = m_pg->cluster().restart();
    QVERIFY2(restarted.ok(), qPrintable(restarted.errorMessage()));
    QTRY_COMPARE_WITH_TIMEOUT(started.size(), 1, 30000);
    QSqlDatabase db = m_pg->open(dbName, QStringLiteral("after"));
    QVERIFY(db.isOpen());
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(db, QStringLiteral("delivered")), 5, 30000);
    QCOMPARE(runner.stats().uniqueIds, 5);

    QSignalSpy done(&host, &DispatcherHost::stopped);
    host.stop();
    QVERIFY(done.wait(30000) || done.size() == 1);
}

void TestDispatcherDbDown::stopWhileDatabaseDown() {
    const auto stopped = m_pg->cluster().stop();
    QVERIFY2(stopped.ok(), qPrintable(stopped.errorMessage()));
    dispatch::DispatcherOptions options;
    options.stopFlushTimeout = core::Millis(120000);
    DispatcherHost host(testing::connInfoFor(*m_pg, QStringLiteral("outbox")),
                        baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/"))), {}, options);
    host.start();
    QTRY_COMPARE_WITH_TIMEOUT(host.lastStats().state, DispatcherState::Reconnecting, 20000);

    // Nothing was claimed, so nothing needs the database: stopping does not
    // wait for it to come back (stopFlushTimeout would allow two minutes).
    QSignalSpy done(&host, &DispatcherHost::stopped);
    host.stop();
    QTRY_COMPARE_WITH_TIMEOUT(done.size(), 1, 20000);
    QCOMPARE(host.lastStats().state, DispatcherState::Stopped);
}

QTEST_GUILESS_MAIN(TestDispatcherDbDown)
#include "tst_dispatcherdbdown.moc"
