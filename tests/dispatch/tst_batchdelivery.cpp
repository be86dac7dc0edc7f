// Batch delivery end to end: a real PostgreSQL, the dispatcher in its
// thread, BatchPublisher and a DevRunner on real sockets. Signed batches
// within their bounds, partial failures retried with the retry policy,
// permanent ones dead, a failed status applied to every event, a live switch
// from per-event delivery, and at-least-once through a runner outage.

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
using devtools::DevRunnerSettings;

namespace {

core::DispatcherConfig batchConfig(const QUrl &url) {
    core::DispatcherConfig config = testing::baseConfig(url);
    config.delivery = core::Delivery::Batch;
    config.batchSize = 100;
    config.concurrency = 200;
    config.batchMaxEvents = 40;
    return config;
}

} // namespace

class TestBatchDelivery : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void deliversSignedBatchesWithinTheirBounds();
    void partialFailuresAreRetriedByThePolicy();
    void permanentFailuresAreDeadAtOnce();
    void failedStatusAppliesToEveryEvent();
    void liveSwitchFromPerEventDelivery();
    void atLeastOnceThroughARunnerOutage();

private:
    std::unique_ptr<DispatcherHost> startHost(const core::DispatcherConfig &config);
    int scalar(const QString &sql) { return sqlScalar(m_db, sql).toInt(); }
};

std::unique_ptr<DispatcherHost> TestBatchDelivery::startHost(const core::DispatcherConfig &config) {
    auto host = makeHost(config);
    if (!testing::startHost(*host, 20000))
        return {};
    return host;
}

void TestBatchDelivery::deliversSignedBatchesWithinTheirBounds() {
    DevRunner runner;
    QVERIFY(runner.setSecrets({testing::kWebhookSecret}).ok()); // 401 for anything not signed right
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());
    QVERIFY(enqueueMany(m_db, 300));

    auto config = batchConfig(runner.url());
    config.secrets = {testing::kWebhookSecret};
    config.batchMaxBytes = 3000; // about 12 of these events
    auto host = startHost(config);
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 300, 30000);
    QVERIFY(stopHost(*host));

    const auto stats = runner.stats();
    QCOMPARE(stats.badSignatures, 0);
    QCOMPARE(stats.uniqueIds, 300);
    QCOMPARE(stats.duplicates, 0);
    QCOMPARE(stats.batches, stats.received);
    QVERIFY2(stats.batches >= 300 / 12 && stats.batches < 300,
             qPrintable(QString::number(stats.batches)));
    for (const devtools::DevRunnerRequest &request : runner.recordedRequests()) {
        QCOMPARE(request.status, 200);
        QVERIFY(request.header("outbox-batch").toInt() <= 40);
        QVERIFY2(request.body.size() <= 3000, qPrintable(QString::number(request.body.size())));
    }
    QCOMPARE(host->lastStats().delivered, 300);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_attempts")), 0);
}

void TestBatchDelivery::partialFailuresAreRetriedByThePolicy() {
    DevRunner runner;
    runner.setFailRate(0.3);
    QVERIFY(runner.listen().ok());
    QVERIFY(enqueueMany(m_db, 150));

    auto config = batchConfig(runner.url());
    config.maxAttempts = 30; // 0.3^30: every event gets through
    auto host = startHost(config);
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 150, 60000);
    QVERIFY(stopHost(*host));

    // Every failure the runner listed became one failed attempt of its
    // event, with the backoff of a single failure, and was tried again.
    const qint64 failed = runner.stats().failed;
    QVERIFY(failed > 0);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_attempts")), int(failed));
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_attempts WHERE error LIKE "
                                   "'failed in a batch (HTTP 200): simulated failure%' AND "
                                   "http_status = 200")),
             int(failed));
    QCOMPARE(scalar(QStringLiteral("SELECT sum(attempts - 1) FROM outbox_events")), int(failed));
    QCOMPARE(runner.stats().uniqueIds, 150);
    QCOMPARE(runner.stats().duplicates, 0);
    QCOMPARE(host->lastStats().retried, failed);
}

void TestBatchDelivery::permanentFailuresAreDeadAtOnce() {
    DevRunner runner;
    DevRunnerSettings settings;
    settings.failRate = 0.5;
    settings.failPermanent = true;
    QVERIFY(runner.setSettings(settings).ok());
    QVERIFY(runner.listen().ok());
    QVERIFY(enqueueMany(m_db, 80));

    auto host = startHost(batchConfig(runner.url()));
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")) +
                                  countStatus(m_db, QStringLiteral("dead")),
                              80, 30000);
    QVERIFY(stopHost(*host));
    const int dead = countStatus(m_db, QStringLiteral("dead"));
    QCOMPARE(dead, int(runner.stats().failed));
    QVERIFY(dead > 0 && dead < 80);
    QCOMPARE(scalar(QStringLiteral("SELECT max(attempts) FROM outbox_events")), 1);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'dead' "
                                   "AND last_error LIKE 'failed in a batch%'")),
             dead);
    QCOMPARE(host->lastStats().dead, dead);
    QCOMPARE(host->lastStats().retried, 0);
}

void TestBatchDelivery::failedStatusAppliesToEveryEvent() {
    DevRunner runner;
    runner.setFixedStatus(503);
    QVERIFY(runner.listen().ok());
    QVERIFY(enqueueMany(m_db, 30));

    auto config = batchConfig(runner.url());
    config.maxAttempts = 2;
    auto host = startHost(config);
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 30, 30000);
    QVERIFY(stopHost(*host));
    QCOMPARE(scalar(QStringLiteral("SELECT min(attempts) FROM outbox_events")), 2);
    QCOMPARE(scalar(QStringLiteral("SELECT count(*) FROM outbox_attempts WHERE http_status = 503 "
                                   "AND error LIKE 'batch of % events: HTTP 503%'")),
             60);
    QVERIFY(runner.stats().received < 60); // batches, not one request per event

    // 410 (a permanent status) ends every event of the batch at once.
    QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_attempts")));
    QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_events")));
    runner.setFixedStatus(410);
    QVERIFY(enqueueMany(m_db, 25));
    host = startHost(config);
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 25, 30000);
    QVERIFY(stopHost(*host));
    QCOMPARE(scalar(QStringLiteral("SELECT max(attempts) FROM outbox_events")), 1);
}

void TestBatchDelivery::liveSwitchFromPerEventDelivery() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    auto perEvent = batchConfig(runner.url());
    perEvent.delivery = core::Delivery::PerEvent;
    auto host = startHost(perEvent);
    QVERIFY(host);
    QVERIFY(enqueueMany(m_db, 10));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 10, 20000);
    QCOMPARE(runner.stats().batches, 0);

    QSignalSpy applied(host.get(), &DispatcherHost::configApplied);
    host->setConfig(batchConfig(runner.url()));
    QTRY_COMPARE(applied.size(), 1);
    QVERIFY2(applied.first().first().toString().contains(QLatin1String("delivery=batch")),
             qPrintable(applied.first().first().toString()));
    QVERIFY(enqueueMany(m_db, 60));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 70, 20000);
    QVERIFY(runner.stats().batches >= 2);
    QCOMPARE(runner.stats().uniqueIds, 70);
    QVERIFY(stopHost(*host));
}

void TestBatchDelivery::atLeastOnceThroughARunnerOutage() {
    DevRunner runner;
    runner.setLatency(core::Millis(20));
    QVERIFY(runner.listen().ok());
    const quint16 port = runner.port();

    auto config = batchConfig(runner.url());
    config.maxAttempts = 100; // the outage must not make anything dead
    auto host = startHost(config);
    QVERIFY(host);
    QVERIFY(enqueueMany(m_db, 200));
    QTRY_VERIFY_WITH_TIMEOUT(runner.stats().delivered > 0, 20000);

    // The runner goes away with batches in flight: connections are dropped,
    // then refused.
    runner.close();
    QVERIFY(enqueueMany(m_db, 200));
    QTest::qWait(800);
    QVERIFY(countStatus(m_db, QStringLiteral("delivered")) < 400);

    // Back, but first cutting every answer off half-way: the dispatcher
    // cannot know these batches arrived, so they are sent again.
    runner.setMode(DevRunnerSettings::Mode::ResetMidResponse);
    QVERIFY(runner.listen(QHostAddress::LocalHost, port).ok());
    QTRY_VERIFY_WITH_TIMEOUT(runner.stats().failed >= 3, 20000);
    runner.setMode(DevRunnerSettings::Mode::Normal);

    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 400, 60000);
    QVERIFY(stopHost(*host));
    QCOMPARE(runner.stats().uniqueIds, 400); // nothing lost
    const auto ids = sqlScalar(m_db, QStringLiteral("SELECT string_agg(id::text, ',') "
                                                    "FROM outbox_events"))
                         .split(QLatin1Char(','));
    QCOMPARE(ids.size(), 400);
    for (const QString &id : ids)
        QVERIFY(runner.deliveredCount(QUuid::fromString(id)) >= 1);
    QVERIFY(scalar(QStringLiteral("SELECT count(*) FROM outbox_events WHERE attempts > 1")) > 0);
    QCOMPARE(countStatus(m_db, QStringLiteral("dead")), 0);
}

QTEST_GUILESS_MAIN(TestBatchDelivery)
#include "tst_batchdelivery.moc"
