// The dispatcher end to end: a real PostgreSQL, the DispatcherHost's worker
// thread, HttpPublisher and a DevRunner on real sockets (or the in-process
// publisher where HTTP is beside the point).

#include "devtools/devrunner.h"
#include "devtools/inprocesspublisher.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"
#include "store/outboxstore.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::DevRunner;
using devtools::DevRunnerSettings;

class TestDispatcher : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void deliversEventsEnqueuedBeforeAndAfterStart();
    void notifyWakesBeforeThePoll();
    void retriesWithBackoffThenDead();
    void permanentStatusIsDeadAtOnce();
    void retryAfterRaisesTheDelay();
    void fencedOutAckIsCounted();
    void liveConfigChange();
    void gracefulStopReleasesLeases();
    void gracefulStopWaitsForInFlight();
    void gracefulStopAtTheLastAttemptEndsDead();
    void loweringMaxAttemptsSweepsAtOnce();
    void inProcessPublisherAndDeadSweep();
    void namespaceFilter();
    void refusesUnmigratedDatabase();
    void refusesAggregateOrderWithoutItsIndex();
    void refusesInvalidConfiguration();
    void hostDestructionReleasesLeases();
    void restartAfterStop();
    void niceIncrementLowersOnlyTheDispatcherThread();
    void rowsOlderThanTheClaimFloorAreStillDelivered();

private:
    static bool startHost(DispatcherHost &host) { return testing::startHost(host, 20000); }
    // Starts `host` and checks that it stops at once, failed, with a message
    // that names `reason`.
    static void verifyRefusedAtStart(DispatcherHost &host, QLatin1String reason);
    // Starts a dispatcher with a short grace period whose `events` requests
    // reach a runner that never answers (all of them processing): stopping
    // it cuts them off.
    std::unique_ptr<DispatcherHost> startWithHangingRequests(DevRunner &runner, int events,
                                                             int maxAttempts);
};

std::unique_ptr<DispatcherHost>
TestDispatcher::startWithHangingRequests(DevRunner &runner, int events, int maxAttempts) {
    runner.setMode(DevRunnerSettings::Mode::NeverRespond);
    if (!runner.listen().ok())
        return {};
    auto config = baseConfig(runner.url());
    config.maxAttempts = maxAttempts;
    config.requestTimeout = core::Millis(20000);
    config.lease = core::Millis(60000);
    config.shutdownGrace = core::Millis(300);
    auto host = makeHost(config);
    if (!startHost(*host) || !enqueueMany(m_db, events) ||
        !QTest::qWaitFor([&] { return runner.stats().received == events; }, 10000))
        return {};
    if (const int processing = countStatus(m_db, QStringLiteral("processing"));
        processing != events) {
        qWarning("%d events processing, expected %d", processing, events);
        return {};
    }
    return host;
}

void TestDispatcher::deliversEventsEnqueuedBeforeAndAfterStart() {
    DevRunner runner;
    QVERIFY(runner.setSecrets({testing::kWebhookSecret}).ok()); // every request must be signed
    QVERIFY(runner.listen().ok());
    QVERIFY(enqueueMany(m_db, 50));

    auto config = baseConfig(runner.url());
    config.secrets = {testing::kWebhookSecret};
    auto host = makeHost(config);
    QVERIFY(startHost(*host));

    store::OutboxStore producer(m_db);
    QList<QUuid> later;
    for (int i = 0; i < 50; ++i) {
        store::EnqueueRequest request;
        request.nameSpace = QStringLiteral("test");
        request.topic = QStringLiteral("later");
        request.payload = "{\"i\": " + QByteArray::number(i) + '}';
        const auto enqueued = producer.enqueue(request);
        QVERIFY2(enqueued.ok(), qPrintable(enqueued.errorMessage()));
        later << enqueued->id;
    }

    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 100, 30000);
    QVERIFY(stopHost(*host));

    const auto runnerStats = runner.stats();
    QCOMPARE(runnerStats.uniqueIds, 100);
    QCOMPARE(runnerStats.duplicates, 0);
    QCOMPARE(runnerStats.badSignatures, 0);
    for (const QUuid &id : std::as_const(later))
        QCOMPARE(runner.deliveredCount(id), 1);

    const auto stats = host->lastStats();
    QCOMPARE(stats.state, DispatcherState::Stopped);
    QCOMPARE(stats.claimed, 100);
    QCOMPARE(stats.delivered, 100);
    QCOMPARE(stats.retried, 0);
    QCOMPARE(stats.fencedOut, 0);
    QCOMPARE(stats.inFlight, 0);
    QCOMPARE(stats.commitToDelivered.count(), 100);
    QCOMPARE(stats.httpDuration.count(), 100);
    QVERIFY(stats.commitToDelivered.p99() <= stats.commitToDelivered.max());
    QCOMPARE(countStatus(m_db, QStringLiteral("processing")), 0);
}

void TestDispatcher::notifyWakesBeforeThePoll() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    auto host = startListeningHost(runner.url());
    QVERIFY(host);
    // Subscribed, and the start-up claims are done: from here only NOTIFY
    // (or the poll, 10 s away) can wake the dispatcher.
    QTRY_VERIFY(host->lastStats().claims >= 1);
    QTest::qWait(300);
    const qint64 claimsBefore = host->lastStats().claims;

    QVERIFY(enqueueMany(m_db, 1));
    // Functional check, not a speed limit: well inside the 10 s poll interval.
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 1, 5000);
    QVERIFY(host->lastStats().claims >= claimsBefore);
    QCOMPARE(runner.stats().uniqueIds, 1);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::retriesWithBackoffThenDead() {
    DevRunner runner;
    runner.setFixedStatus(503);
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.maxAttempts = 3;
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 1));

    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 1, 20000);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT attempts FROM outbox_events")).toInt(), 3);
    QVERIFY(sqlScalar(m_db, QStringLiteral("SELECT last_error FROM outbox_events"))
                .contains(QLatin1String("HTTP 503")));
    // One history row per failed attempt, each with the status.
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts "
                                            "WHERE http_status = 503"))
                 .toInt(),
             3);
    QCOMPARE(runner.stats().received, 3);
    QVERIFY(stopHost(*host));
    const auto stats = host->lastStats();
    QCOMPARE(stats.retried, 2);
    QCOMPARE(stats.dead, 1);
    QCOMPARE(stats.delivered, 0);
}

void TestDispatcher::permanentStatusIsDeadAtOnce() {
    DevRunner runner;
    runner.setFixedStatus(410);
    QVERIFY(runner.listen().ok());
    auto host = makeHost(baseConfig(runner.url()));
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 2));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 2, 20000);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT max(attempts) FROM outbox_events")).toInt(), 1);
    QCOMPARE(runner.stats().received, 2);
    QVERIFY(stopHost(*host));
    QCOMPARE(host->lastStats().dead, 2);
    QCOMPARE(host->lastStats().retried, 0);
}

void TestDispatcher::retryAfterRaisesTheDelay() {
    DevRunner runner;
    runner.setFixedStatus(429);
    runner.setRetryAfter("3");
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.maxDelay = core::Millis(60000); // the cap still applies, but far above 3 s
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 1));

    QTRY_COMPARE_WITH_TIMEOUT(host->lastStats().retried, 1, 20000);
    const double delay =
        sqlScalar(m_db, QStringLiteral("SELECT extract(epoch FROM next_attempt_at - updated_at) "
                                       "FROM outbox_events"))
            .toDouble();
    QVERIFY2(delay >= 2.9 && delay <= 3.1, qPrintable(QString::number(delay)));

    runner.setFixedStatus(0); // the runner recovers: the retry succeeds
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 1, 20000);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT attempts FROM outbox_events")).toInt(), 2);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::fencedOutAckIsCounted() {
    DevRunner runner;
    runner.setLatency(core::Millis(1500));
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.concurrency = 1;
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 1));
    QTRY_COMPARE_WITH_TIMEOUT(runner.stats().received, 1, 10000);

    // Meanwhile another worker took the row over (as after an expired lease).
    const QUuid other = QUuid::createUuid();
    QVERIFY(sqlExec(m_db,
                    QStringLiteral("UPDATE outbox_events SET locked_by = ?::uuid, "
                                   "attempts = attempts + 1"),
                    {other.toString(QUuid::WithoutBraces)}));

    QTRY_COMPARE_WITH_TIMEOUT(host->lastStats().fencedOut, 1, 10000);
    QCOMPARE(host->lastStats().delivered, 0);
    QCOMPARE(countStatus(m_db, QStringLiteral("processing")), 1);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT locked_by FROM outbox_events")),
             other.toString(QUuid::WithoutBraces));
    QVERIFY(stopHost(*host));
}

void TestDispatcher::liveConfigChange() {
    DevRunner first;
    DevRunner second;
    QVERIFY(first.listen().ok());
    QVERIFY(second.listen().ok());
    auto config = baseConfig(first.url());
    config.concurrency = 1;
    config.batchSize = 1;
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 3));
    QTRY_COMPARE_WITH_TIMEOUT(first.stats().uniqueIds, 3, 20000);

    QSignalSpy applied(host.get(), &DispatcherHost::configApplied);
    QSignalSpy rejected(host.get(), &DispatcherHost::configRejected);
    auto changed = config;
    changed.runnerUrl = second.url();
    changed.concurrency = 4;
    changed.batchSize = 4;
    host->setConfig(changed);
    QTRY_COMPARE(applied.size(), 1);
    QTRY_COMPARE(host->lastStats().concurrency, 4);

    QVERIFY(enqueueMany(m_db, 5));
    QTRY_COMPARE_WITH_TIMEOUT(second.stats().uniqueIds, 5, 20000);
    QCOMPARE(first.stats().uniqueIds, 3);

    auto invalid = changed;
    invalid.pollInterval = core::Millis(20000); // more than a third of the lease
    host->setConfig(invalid);
    QTRY_COMPARE(rejected.size(), 1);
    QVERIFY2(rejected.first().first().toString().contains(QLatin1String("--poll-interval")),
             qPrintable(rejected.first().first().toString()));
    QCOMPARE(applied.size(), 1);

    // Still running with the last good configuration.
    QVERIFY(enqueueMany(m_db, 1));
    QTRY_COMPARE_WITH_TIMEOUT(second.stats().uniqueIds, 6, 20000);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::gracefulStopReleasesLeases() {
    DevRunner runner;
    auto host = startWithHangingRequests(runner, 5, /*maxAttempts=*/5);
    QVERIFY(host);
    QVERIFY(stopHost(*host));
    QCOMPARE(host->lastStats().released, 5);
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 5);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events "
                                            "WHERE locked_by IS NULL AND attempts = 1"))
                 .toInt(),
             5);

    // Another worker can take them at once, without waiting for the lease.
    store::OutboxStore other(m_db);
    const auto claimed = other.claimBatch(QUuid::createUuid(), store::ClaimOptions{});
    QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
    QCOMPARE(claimed->size(), 5);
}

void TestDispatcher::gracefulStopWaitsForInFlight() {
    DevRunner runner;
    runner.setLatency(core::Millis(500));
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.shutdownGrace = core::Millis(10000);
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 3));
    QTRY_COMPARE_WITH_TIMEOUT(runner.stats().received, 3, 10000);

    QVERIFY(stopHost(*host));
    QCOMPARE(countStatus(m_db, QStringLiteral("delivered")), 3);
    QCOMPARE(host->lastStats().delivered, 3);
    QCOMPARE(host->lastStats().released, 0);
}

// Cut off by the grace period at the last allowed attempt: pending again,
// nothing would ever claim these rows, so the release ends them.
void TestDispatcher::gracefulStopAtTheLastAttemptEndsDead() {
    DevRunner runner;
    auto host = startWithHangingRequests(runner, 4, /*maxAttempts=*/1);
    QVERIFY(host);
    QVERIFY(stopHost(*host));
    QCOMPARE(host->lastStats().released, 0);
    QCOMPARE(host->lastStats().swept, 4);
    QCOMPARE(countStatus(m_db, QStringLiteral("dead")), 4);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE "
                                            "last_error LIKE '%cut off by a shutdown%'"))
                 .toInt(),
             4);
}

// The periodic sweep only looks at expired leases; a lower limit is applied
// to the pending rows when the configuration changes.
void TestDispatcher::loweringMaxAttemptsSweepsAtOnce() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/unused")));
    config.maxAttempts = 5;
    DispatcherOptions options;
    options.sweepInterval = core::Millis(60000);
    auto host = makeHost(
        config, [] { return std::make_unique<devtools::InProcessPublisher>(); }, options);
    QVERIFY(enqueueMany(m_db, 3, QStringLiteral("retrying")));
    QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now() + "
                                         "interval '1 hour', attempts = 3")));
    QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET attempts = 2 WHERE id = "
                                         "(SELECT id FROM outbox_events ORDER BY id LIMIT 1)")));
    QVERIFY(startHost(*host));
    QTest::qWait(300);
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 3); // within the limit of 5

    QSignalSpy applied(host.get(), &DispatcherHost::configApplied);
    auto lower = config;
    lower.maxAttempts = 3;
    host->setConfig(lower);
    QTRY_COMPARE(applied.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 2, 5000);
    QTRY_COMPARE(host->lastStats().swept, 2);
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 1);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::inProcessPublisherAndDeadSweep() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/unused")));
    config.maxAttempts = 3;
    config.batchSize = 50;
    config.concurrency = 64;
    DispatcherOptions options;
    options.sweepInterval = core::Millis(200);
    auto host = makeHost(
        config, [] { return std::make_unique<devtools::InProcessPublisher>(); }, options);

    // A row whose attempts are used up is never claimed; the sweep ends it.
    QVERIFY(enqueueMany(m_db, 1, QStringLiteral("exhausted")));
    QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET attempts = 3")));
    QVERIFY(enqueueMany(m_db, 300));

    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 300, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 1, 10000);
    QTRY_COMPARE(host->lastStats().swept, 1);
    QVERIFY(stopHost(*host));
    const auto stats = host->lastStats();
    QCOMPARE(stats.delivered, 300);
    QCOMPARE(stats.claimed, 300);
    QVERIFY(stats.claims >= 300 / config.batchSize);
}

void TestDispatcher::rowsOlderThanTheClaimFloorAreStillDelivered() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/unused")));
    config.pollInterval = core::Millis(300);
    auto host = makeHost(config, [] { return std::make_unique<devtools::InProcessPublisher>(); });
    // Live rows that are not due keep the claim floor at their created_at.
    QVERIFY(enqueueMany(m_db, 5, QStringLiteral("later")));
    QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now() + "
                                         "interval '1 hour'")));
    QVERIFY(enqueueMany(m_db, 20));
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 20, 20000);
    QTest::qWait(700); // watchdog ticks: the floor is now about a second below the "later" rows
    // As a requeue of an old dead event, or a transaction that commits late:
    // pending, due, created an hour ago, far below the floor.
    QVERIFY(sqlExec(m_db, QStringLiteral("SELECT * FROM outbox_enqueue('test', 'old', "
                                         "'{}'::jsonb)")));
    QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET created_at = now() - interval "
                                         "'1 hour' WHERE topic = 'old'")));
    QTRY_COMPARE_WITH_TIMEOUT(
        sqlScalar(m_db, QStringLiteral("SELECT status FROM outbox_events WHERE topic = 'old'")),
        QStringLiteral("delivered"), 15000);
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 5);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::namespaceFilter() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/unused")));
    config.nameSpace = QStringLiteral("mine");
    auto host = makeHost(config, [] { return std::make_unique<devtools::InProcessPublisher>(); });
    QVERIFY(enqueueMany(m_db, 4, QStringLiteral("mine")));
    QVERIFY(enqueueMany(m_db, 3, QStringLiteral("theirs")));
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 4, 20000);
    QTest::qWait(300);
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 3);
    QVERIFY(stopHost(*host));
}

void TestDispatcher::verifyRefusedAtStart(DispatcherHost &host, QLatin1String reason) {
    QSignalSpy failed(&host, &DispatcherHost::failed);
    QSignalSpy stopped(&host, &DispatcherHost::stopped);
    host.start();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.size(), 1, 20000);
    QCOMPARE(failed.size(), 1);
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(reason), qPrintable(message));
    QCOMPARE(host.lastStats().state, DispatcherState::Failed);
}

void TestDispatcher::refusesUnmigratedDatabase() {
    const QString empty = m_pg->freshDatabase();
    QVERIFY(!empty.isEmpty());
    DispatcherHost host(testing::connInfoFor(*m_pg, empty),
                        baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/"))));
    verifyRefusedAtStart(host, QLatin1String("migrate"));
}

// The embedded dispatcher (the console's) as `outboxctl dispatch`: aggregate
// order on a database where it is off stops at start, naming the fix.
void TestDispatcher::refusesAggregateOrderWithoutItsIndex() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/")));
    config.ordering = core::Ordering::Aggregate;
    verifyRefusedAtStart(*makeHost(config), QLatin1String("`outboxctl migrate --aggregate-order`"));
}

void TestDispatcher::refusesInvalidConfiguration() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/")));
    config.requestTimeout = config.lease;
    verifyRefusedAtStart(*makeHost(config), QLatin1String("--request-timeout"));
}

void TestDispatcher::hostDestructionReleasesLeases() {
    DevRunner runner;
    runner.setMode(DevRunnerSettings::Mode::NeverRespond);
    QVERIFY(runner.listen().ok());
    auto config = baseConfig(runner.url());
    config.shutdownGrace = core::Millis(60000); // destruction does not wait for it
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 2));
    QTRY_COMPARE_WITH_TIMEOUT(runner.stats().received, 2, 10000);
    host.reset();
    QCOMPARE(countStatus(m_db, QStringLiteral("pending")), 2);
    QCOMPARE(countStatus(m_db, QStringLiteral("processing")), 0);
}

void TestDispatcher::restartAfterStop() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    auto host = makeHost(baseConfig(runner.url()));
    QSignalSpy started(host.get(), &DispatcherHost::started);
    QVERIFY(startHost(*host));
    QVERIFY(enqueueMany(m_db, 3));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 3, 20000);
    QVERIFY(stopHost(*host));

    // The console's Stop / Start buttons: the same host runs again.
    QVERIFY(enqueueMany(m_db, 4));
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 7, 20000);
    QVERIFY(stopHost(*host));
    QCOMPARE(started.size(), 2);
    // A generated worker id is new for every run; counters start from zero.
    QVERIFY(started.at(0).first().toUuid() != started.at(1).first().toUuid());
    QCOMPARE(host->lastStats().delivered, 4);
    QCOMPARE(runner.stats().uniqueIds, 7);
}

QTEST_GUILESS_MAIN(TestDispatcher)
namespace {

// Nice values of this process's threads by name (/proc/self/task/*/stat,
// field 19), e.g. {"outbox-dispatch": 5, "tst_dispatcher": 0}.
QMultiHash<QString, int> threadNiceValues() {
    QMultiHash<QString, int> values;
    const QDir tasks(QStringLiteral("/proc/self/task"));
    const QStringList ids = tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &id : ids) {
        QFile comm(tasks.filePath(id + QStringLiteral("/comm")));
        QFile stat(tasks.filePath(id + QStringLiteral("/stat")));
        if (!comm.open(QIODevice::ReadOnly) || !stat.open(QIODevice::ReadOnly))
            continue;
        const QString name = QString::fromUtf8(comm.readAll()).trimmed();
        // "pid (comm) state ppid ...": fields after the closing parenthesis.
        const QByteArray line = stat.readAll();
        const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 16)
            values.insert(name, fields.at(16).toInt()); // field 19 overall
    }
    return values;
}

} // namespace

void TestDispatcher::niceIncrementLowersOnlyTheDispatcherThread() {
    auto config = baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/unused")));
    DispatcherOptions options;
    options.threadNiceIncrement = 4;
    auto host = makeHost(
        config, [] { return std::make_unique<devtools::InProcessPublisher>(); }, options);
    const QMultiHash<QString, int> before = threadNiceValues();
    QVERIFY(!before.isEmpty());
    const int mainNice = before.value(QCoreApplication::applicationName().left(15), -100);
    QVERIFY2(mainNice != -100, "the main thread was not found by name");
    QVERIFY(startHost(*host));
    const QMultiHash<QString, int> after = threadNiceValues();
    // QThread names the OS thread after its objectName ("outbox-dispatcher",
    // cut to 15 characters by Linux).
    QVERIFY2(after.contains(QStringLiteral("outbox-dispatch")),
             qPrintable(QStringList(after.keys()).join(QLatin1Char(','))));
    QCOMPARE(after.value(QStringLiteral("outbox-dispatch")), std::min(mainNice + 4, 19));
    QCOMPARE(after.value(QCoreApplication::applicationName().left(15)), mainNice);
    QVERIFY(stopHost(*host));
}

#include "tst_dispatcher.moc"
