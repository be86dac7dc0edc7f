// Faults under a running dispatcher: the database restarts, the dispatcher's
// own connection or its LISTEN connection is killed, the database is down at
// start. Nothing may be lost (at worst delivered twice).

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::DevRunner;

class TestDispatcherFaults : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void init() {
        m_dbName = m_pg->freshMigratedDatabase();
        QVERIFY(!m_dbName.isEmpty());
        QVERIFY(reopen());
    }

    void dispatcherConnectionKilled();
    void listenerKilledWatchdogStillDelivers();
    void listenerKilledResubscribes();
    // Last: PgFixture's admin connection does not survive a server restart.
    void databaseRestartUnderLoad();

private:
    // A started dispatcher sending 4 requests at a time to `runner`, with
    // `events` enqueued and a tenth of them delivered (null, with a warning,
    // otherwise), and a spy on its states since before the start.
    struct LoadedHost {
        std::unique_ptr<DispatcherHost> host;
        std::unique_ptr<QSignalSpy> states;
    };
    LoadedHost startUnderLoad(const DevRunner &runner, int events);
    static bool sawReconnecting(const QSignalSpy &states);
    // Reopens the test's connection after a server restart.
    bool reopen();
    bool terminateBackends(const QString &applicationName);
    QString backendPid(const QString &applicationName);
};

bool TestDispatcherFaults::reopen() {
    m_db = m_pg->open(m_dbName, QStringLiteral("faults-test"));
    return m_db.isOpen();
}

TestDispatcherFaults::LoadedHost TestDispatcherFaults::startUnderLoad(const DevRunner &runner,
                                                                      int events) {
    auto config = baseConfig(runner.url());
    config.concurrency = 4;
    config.batchSize = 4;
    LoadedHost loaded{makeHost(config), nullptr};
    loaded.states = std::make_unique<QSignalSpy>(loaded.host.get(), &DispatcherHost::stateChanged);
    if (!startHost(*loaded.host) || !enqueueMany(m_db, events)) {
        qWarning("the dispatcher did not start, or nothing was enqueued");
        return {};
    }
    if (!QTest::qWaitFor(
            [&] { return countStatus(m_db, QStringLiteral("delivered")) >= events / 10; }, 20000)) {
        qWarning("%d of %d events delivered", countStatus(m_db, QStringLiteral("delivered")),
                 events);
        return {};
    }
    return loaded;
}

bool TestDispatcherFaults::sawReconnecting(const QSignalSpy &states) {
    for (const auto &arguments : states) {
        if (arguments.first().value<DispatcherState>() == DispatcherState::Reconnecting)
            return true;
    }
    return false;
}

bool TestDispatcherFaults::terminateBackends(const QString &applicationName) {
    return sqlScalar(m_db,
                     QStringLiteral("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                    "WHERE application_name = ?::text AND datname = ?::text"),
                     {applicationName, m_dbName})
               .toInt() > 0;
}

QString TestDispatcherFaults::backendPid(const QString &applicationName) {
    return sqlScalar(m_db,
                     QStringLiteral("SELECT coalesce(max(pid)::text, '') FROM pg_stat_activity "
                                    "WHERE application_name = ?::text AND datname = ?::text"),
                     {applicationName, m_dbName});
}

void TestDispatcherFaults::dispatcherConnectionKilled() {
    DevRunner runner;
    runner.setLatency(core::Millis(20));
    QVERIFY(runner.listen().ok());
    auto [host, states] = startUnderLoad(runner, 200);
    QVERIFY(host);

    QVERIFY(terminateBackends(QStringLiteral("outbox-dispatch")));

    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 200, 60000);
    QTRY_VERIFY(host->lastStats().reconnects >= 1);
    QVERIFY(sawReconnecting(*states));
    QCOMPARE(runner.stats().uniqueIds, 200);
    QVERIFY(stopHost(*host));
}

void TestDispatcherFaults::listenerKilledWatchdogStillDelivers() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.pollInterval = core::Millis(500);
    DispatcherOptions options;
    // Keep the listener down for the whole test: only the poll can deliver.
    options.reconnectBaseDelay = core::Millis(120000);
    options.reconnectMaxDelay = core::Millis(120000);
    auto host = makeHost(config, {}, options);
    QVERIFY(startHost(*host));
    QTRY_VERIFY_WITH_TIMEOUT(host->lastStats().listening, 10000);

    QVERIFY(terminateBackends(QStringLiteral("outbox-dispatch-listen")));
    QTRY_VERIFY_WITH_TIMEOUT(!host->lastStats().listening, 20000);

    QVERIFY(enqueueMany(m_db, 3));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 3, 20000);
    QVERIFY(!host->lastStats().listening);
    QCOMPARE(runner.stats().uniqueIds, 3);
    QVERIFY(stopHost(*host));
}

void TestDispatcherFaults::listenerKilledResubscribes() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    auto host = startListeningHost(runner.url());
    QVERIFY(host);
    const QString before = backendPid(QStringLiteral("outbox-dispatch-listen"));
    QVERIFY(!before.isEmpty());

    QVERIFY(terminateBackends(QStringLiteral("outbox-dispatch-listen")));
    QTRY_VERIFY_WITH_TIMEOUT(!backendPid(QStringLiteral("outbox-dispatch-listen")).isEmpty() &&
                                 backendPid(QStringLiteral("outbox-dispatch-listen")) != before,
                             20000);
    QTRY_VERIFY_WITH_TIMEOUT(host->lastStats().listening, 10000);
    QTest::qWait(300);

    // Woken by NOTIFY on the new subscription, well before the 10 s poll.
    QVERIFY(enqueueMany(m_db, 1));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 1, 5000);
    QVERIFY(stopHost(*host));
}

void TestDispatcherFaults::databaseRestartUnderLoad() {
    DevRunner runner;
    runner.setLatency(core::Millis(30));
    QVERIFY(runner.listen().ok());
    auto [host, states] = startUnderLoad(runner, 100);
    QVERIFY(host);

    m_db = QSqlDatabase();
    const auto restarted = m_pg->cluster().restart();
    QVERIFY2(restarted.ok(), qPrintable(restarted.errorMessage()));
    QVERIFY(reopen());
    QVERIFY(enqueueMany(m_db, 50));

    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 150, 90000);
    QCOMPARE(runner.stats().uniqueIds, 150); // nothing lost (a duplicate would be allowed)
    QTRY_VERIFY(host->lastStats().reconnects >= 1);
    QVERIFY(sawReconnecting(*states));
    QVERIFY(stopHost(*host));
    QCOMPARE(countStatus(m_db, QStringLiteral("processing")), 0);
}

QTEST_GUILESS_MAIN(TestDispatcherFaults)
#include "tst_dispatcherfaults.moc"
