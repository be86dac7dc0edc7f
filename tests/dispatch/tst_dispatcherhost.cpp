// DispatcherHost's shutdown never makes its caller wait: with the host's
// housekeeping thread stuck on a lock that this test holds, shutDown()
// returns and the test's own thread goes on (a caller that waited for that
// thread would wait for itself); once the lock goes, the host finishes and
// its registry row is gone.

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"

#include <QScopeGuard>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using devtools::DevRunner;
using dispatch::DispatcherHost;
using testing::baseConfig;
using testing::sqlExec;
using testing::sqlScalar;

class TestDispatcherHost : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void shutDownDoesNotWaitForABusyThread();
    void destroyAfterFinishedWaitsForNothing();
};

void TestDispatcherHost::shutDownDoesNotWaitForABusyThread() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    dispatch::DispatcherOptions options;
    options.housekeeping.heartbeatInterval = std::chrono::hours(1); // only the unregister waits
    auto host = std::make_unique<DispatcherHost>(testing::connInfoFor(*m_pg, m_dbName),
                                                 baseConfig(runner.url()),
                                                 dispatch::PublisherFactory(), options);
    QVERIFY(testing::startHost(*host));
    const QString registered = QStringLiteral("SELECT count(*) FROM outbox_dispatchers");
    QTRY_COMPARE_WITH_TIMEOUT(sqlScalar(m_db, registered), QStringLiteral("1"), 20000);

    // Another session holds the dispatcher's registry row.
    QSqlDatabase locker = m_pg->open(m_dbName, QStringLiteral("locker"));
    QVERIFY(locker.isOpen());
    QVERIFY(sqlExec(locker, QStringLiteral("BEGIN")));
    QVERIFY(sqlExec(locker, QStringLiteral("SELECT 1 FROM outbox_dispatchers FOR UPDATE")));
    // Let go before the host goes, also when a check fails: its destructor
    // would wait for the row.
    auto release = qScopeGuard([&] { sqlExec(locker, QStringLiteral("ROLLBACK")); });

    QSignalSpy stopped(host.get(), &DispatcherHost::stopped);
    QSignalSpy finished(host.get(), &DispatcherHost::finished);
    host->shutDown();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 20000);
    // The housekeeping thread now waits on the lock to delete the row, and
    // this thread is free to look at it.
    const QString unregisterWaits =
        QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                       " AND datname = current_database() AND application_name LIKE '%-registry'");
    QTRY_COMPARE_WITH_TIMEOUT(sqlScalar(m_db, unregisterWaits), QStringLiteral("1"), 20000);
    QCOMPARE(finished.count(), 0);

    release.dismiss();
    QVERIFY(sqlExec(locker, QStringLiteral("ROLLBACK")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    QCOMPARE(sqlScalar(m_db, registered), QStringLiteral("0"));
    QCOMPARE(stopped.count(), 1);
    host.reset();
    locker = QSqlDatabase();
    m_pg->close(QStringLiteral("locker"));
}

// After finished() the threads have ended: deleting the host, a second
// shutDown() or a late stop() do nothing more.
void TestDispatcherHost::destroyAfterFinishedWaitsForNothing() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    QVERIFY(testing::enqueueMany(m_db, 20));
    auto host = std::make_unique<DispatcherHost>(testing::connInfoFor(*m_pg, m_dbName),
                                                 baseConfig(runner.url()));
    QVERIFY(testing::startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(testing::countStatus(m_db, QStringLiteral("delivered")), 20, 20000);
    QSignalSpy finished(host.get(), &DispatcherHost::finished);
    host->shutDown();
    host->shutDown();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
    host->stop();
    QTest::qWait(100);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_dispatchers")),
             QStringLiteral("0"));
    host.reset();
}

QTEST_MAIN(TestDispatcherHost)
#include "tst_dispatcherhost.moc"
