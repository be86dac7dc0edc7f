// Trace context and attempts per event end to end: a real PostgreSQL, the
// dispatcher in its thread and a DevRunner on real sockets that records what
// it receives. Producers attach W3C trace context with an argument of
// outbox_enqueue or the transaction's settings; the runner gets it as the
// traceparent / tracestate headers of each event's request, and as fields
// of each element of a batch. An event's own limit of attempts ends it
// before the dispatcher's would.

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::DevRunner;

namespace {

const QByteArray kParentA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const QByteArray kParentB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
const QByteArray kState = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

} // namespace

class TestTraceDelivery : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void perEventRequestsCarryTheTraceHeaders();
    void batchElementsCarryTheTraceContext();
    void anEventsOwnLimitEndsItFirst();

private:
    // Three events: one traced by argument (with a tracestate), one by the
    // transaction's setting, one without trace context. Returns their ids.
    QStringList enqueueTraced();
    void deliver(const core::DispatcherConfig &config, DevRunner &runner);
};

QStringList TestTraceDelivery::enqueueTraced() {
    QStringList ids;
    ids << sqlScalar(m_db,
                     QStringLiteral("SELECT id FROM outbox_enqueue('test', 'a', '{\"n\": 1}',"
                                    " p_traceparent => ?, p_tracestate => ?)"),
                     {QString::fromLatin1(kParentA), QString::fromLatin1(kState)});
    if (!m_db.transaction())
        return {};
    sqlExec(
        m_db,
        QStringLiteral("SET LOCAL outbox.traceparent = '%1'").arg(QString::fromLatin1(kParentB)));
    ids << sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('test', 'b', '{}')"));
    m_db.commit();
    ids << sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('test', 'c', '{}')"));
    return ids;
}

void TestTraceDelivery::deliver(const core::DispatcherConfig &config, DevRunner &runner) {
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 3, 20000);
    QVERIFY(stopHost(*host));
    QCOMPARE(runner.stats().uniqueIds, 3);
}

void TestTraceDelivery::perEventRequestsCarryTheTraceHeaders() {
    DevRunner runner;
    QVERIFY(runner.setSecrets({testing::kWebhookSecret}).ok()); // signed as ever
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());
    const QStringList ids = enqueueTraced();
    QCOMPARE(ids.size(), 3);

    auto config = baseConfig(runner.url());
    config.secrets = {testing::kWebhookSecret};
    deliver(config, runner);
    QCOMPARE(runner.stats().badSignatures, 0);

    QHash<QByteArray, devtools::DevRunnerRequest> byId;
    for (const devtools::DevRunnerRequest &request : runner.recordedRequests())
        byId.insert(request.header("webhook-id"), request);
    QCOMPARE(byId.size(), 3);
    const auto a = byId.value(ids.at(0).toLatin1());
    QCOMPARE(a.header("traceparent"), kParentA);
    QCOMPARE(a.header("tracestate"), kState);
    const auto b = byId.value(ids.at(1).toLatin1());
    QCOMPARE(b.header("traceparent"), kParentB);
    QVERIFY(b.header("tracestate").isNull());
    const auto c = byId.value(ids.at(2).toLatin1());
    for (const auto &[name, value] : c.headers)
        QVERIFY2(!name.startsWith("trace"), name.constData());
}

void TestTraceDelivery::batchElementsCarryTheTraceContext() {
    DevRunner runner;
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());
    const QStringList ids = enqueueTraced();
    QCOMPARE(ids.size(), 3);

    auto config = baseConfig(runner.url());
    config.delivery = core::Delivery::Batch;
    config.batchMaxEvents = 10;
    deliver(config, runner);
    QVERIFY(runner.stats().batches >= 1);

    QHash<QString, QJsonObject> elements;
    for (const devtools::DevRunnerRequest &request : runner.recordedRequests()) {
        QVERIFY(!request.header("outbox-batch").isEmpty());
        // The request of a batch carries no single event's trace context.
        QVERIFY(request.header("traceparent").isNull());
        const QJsonArray events =
            QJsonDocument::fromJson(request.body).object().value(QLatin1String("events")).toArray();
        for (const QJsonValue &element : events)
            elements.insert(element.toObject().value(QLatin1String("id")).toString(),
                            element.toObject());
    }
    QCOMPARE(elements.size(), 3);
    QCOMPARE(elements.value(ids.at(0)).value(QLatin1String("traceparent")).toString(),
             QString::fromLatin1(kParentA));
    QCOMPARE(elements.value(ids.at(0)).value(QLatin1String("tracestate")).toString(),
             QString::fromLatin1(kState));
    QCOMPARE(elements.value(ids.at(1)).value(QLatin1String("traceparent")).toString(),
             QString::fromLatin1(kParentB));
    QVERIFY(elements.value(ids.at(1)).value(QLatin1String("tracestate")).isNull());
    QVERIFY(elements.value(ids.at(2)).value(QLatin1String("traceparent")).isNull());
    QVERIFY(elements.value(ids.at(2)).contains(QLatin1String("traceparent")));
}

void TestTraceDelivery::anEventsOwnLimitEndsItFirst() {
    DevRunner runner;
    runner.setFixedStatus(503);
    QVERIFY(runner.listen().ok());
    const QString limited = sqlScalar(
        m_db,
        QStringLiteral("SELECT id FROM outbox_enqueue('test', 'a', '{}', p_max_attempts => 2)"));
    const QString plain =
        sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('test', 'b', '{}')"));

    auto config = baseConfig(runner.url()); // max attempts 5
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 2, 30000);
    QVERIFY(stopHost(*host));
    const auto attempts = [&](const QString &id) {
        return sqlScalar(m_db,
                         QStringLiteral("SELECT attempts FROM outbox_events WHERE id = ?::uuid"),
                         {id})
            .toInt();
    };
    QCOMPARE(attempts(limited), 2);
    QCOMPARE(attempts(plain), 5);
    QCOMPARE(host->lastStats().dead, 2);
    QCOMPARE(host->lastStats().retried, 1 + 4);
}

QTEST_GUILESS_MAIN(TestTraceDelivery)
#include "tst_tracedelivery.moc"
