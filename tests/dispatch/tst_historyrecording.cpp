// A running dispatcher records the throughput history (sql/006) on its
// registry heartbeat: what it delivered, failed and dead-lettered adds up to
// what happened to the events, the minute gets its backlog sample, and the
// last counts are written when it stops.

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;

class TestHistoryRecording final : public QObject, protected outbox::testing::DispatchTestCase {
    Q_OBJECT

private:
    qint64 historySum(const char *column) {
        return testing::sqlScalar(m_db, QStringLiteral("SELECT coalesce(sum(%1), 0) FROM"
                                                       " outbox_throughput_history")
                                            .arg(QLatin1String(column)))
            .toLongLong();
    }

private Q_SLOTS:
    void initTestCase() {
        if (!startDispatchPg())
            return;
        openFreshDb();
    }

    void cleanupTestCase() { stopPg(); }

    void heartbeatRecordsWhatHappened() {
        devtools::DevRunner runner;
        runner.setFailRate(0.3);
        QVERIFY(runner.listen().ok());
        QVERIFY(testing::enqueueMany(m_db, 200));

        core::DispatcherConfig config = testing::baseConfig(runner.url());
        config.maxAttempts = 2; // some fail once and are retried, some die
        dispatch::DispatcherOptions options;
        options.housekeeping.heartbeatInterval = core::Millis(200);
        dispatch::DispatcherHost host(testing::connInfoFor(*m_pg, m_dbName), config, {}, options);
        QSignalSpy started(&host, &dispatch::DispatcherHost::started);
        QSignalSpy stopped(&host, &dispatch::DispatcherHost::stopped);
        host.start();
        QVERIFY(started.wait(20000) || !started.isEmpty());
        QTRY_COMPARE_WITH_TIMEOUT(testing::countStatus(m_db, QStringLiteral("delivered")) +
                                      testing::countStatus(m_db, QStringLiteral("dead")),
                                  200, 60000);
        // The heartbeats catch up with the last deliveries.
        const qint64 delivered = testing::countStatus(m_db, QStringLiteral("delivered"));
        QTRY_COMPARE_WITH_TIMEOUT(historySum("delivered"), delivered, 20000);
        host.stop();
        QVERIFY(stopped.wait(30000) || !stopped.isEmpty());

        const qint64 dead = testing::countStatus(m_db, QStringLiteral("dead"));
        QCOMPARE(historySum("delivered"), delivered);
        QCOMPARE(historySum("dead"), dead);
        // Every failed attempt: the dead ones and those retried once.
        const qint64 failedAttempts =
            testing::sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts"))
                .toLongLong();
        QVERIFY2(failedAttempts > 0, "the runner failed nothing");
        QCOMPARE(historySum("failed"), failedAttempts);
        // One dispatcher: one row per minute it ran, each with a backlog sample.
        const QString minutes = testing::sqlScalar(
            m_db, QStringLiteral("SELECT count(*) FROM outbox_throughput_history"));
        QVERIFY(minutes.toInt() >= 1);
        QCOMPARE(testing::sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM"
                                                         " outbox_backlog_history")),
                 minutes);
    }
};

QTEST_GUILESS_MAIN(TestHistoryRecording)
#include "tst_historyrecording.moc"
