// Kafka delivery under failures, end to end (a real PostgreSQL, the
// dispatcher, librdkafka's mock cluster, a consumer): brokers down and up
// again, produce errors injected by the cluster, a produce that times out in
// flight yet is written, and the order of each aggregate through all of it.
// Nothing is lost: every event is in the topic, and an event is acked only
// when Kafka persisted it.

#include "dispatch/dispatcherhost.h"
#include "kafkatesting.h"

#include <QtTest>

#include <librdkafka/rdkafka.h>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::KafkaMockCluster;

class TestKafkaFaults : public PgTestSuite {
    Q_OBJECT
public:
    TestKafkaFaults()
        : PgTestSuite(migrateSchemaWithAggregateOrder) {
        qRegisterMetaType<DispatcherStats>();
        qRegisterMetaType<DispatcherState>();
    }

private Q_SLOTS:
    void brokersDownThenUpLoseNothing();
    void injectedProduceErrorsAreRetried();
    void aProduceTimedOutInFlightIsRetriedAsMaybeDuplicated();
    void orderPerAggregateHoldsUnderFailures();

private:
    std::unique_ptr<DispatcherHost> startKafkaHost(const KafkaMockCluster &cluster,
                                                   core::DispatcherConfig config = kafkaConfig()) {
        auto host = std::make_unique<DispatcherHost>(connInfoFor(*m_pg, m_dbName), config,
                                                     kafkaFactory(kafkaSettings(cluster)));
        return startHost(*host) ? std::move(host) : nullptr;
    }
    // Every event of the table is in the topic; returns the records.
    QList<devtools::KafkaReadRecord> verifyNothingLost(const KafkaMockCluster &cluster);
};

QList<devtools::KafkaReadRecord>
TestKafkaFaults::verifyNothingLost(const KafkaMockCluster &cluster) {
    QString error;
    const auto records = cluster.readAll(kKafkaTopic, &error);
    if (!error.isEmpty())
        qWarning("%s", qPrintable(error));
    const auto byId = recordsById(records);
    const QStringList ids = sqlColumn(m_db, QStringLiteral("SELECT id FROM outbox_events"));
    for (const QString &id : ids) {
        if (!byId.contains(id.toLatin1()))
            qWarning("event %s is not in the topic", qPrintable(id));
    }
    return std::all_of(ids.begin(), ids.end(),
                       [&](const QString &id) { return byId.contains(id.toLatin1()); })
               ? records
               : QList<devtools::KafkaReadRecord>();
}

void TestKafkaFaults::brokersDownThenUpLoseNothing() {
    KafkaMockCluster cluster(3);
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(kKafkaTopic, 3, 3));
    auto host = startKafkaHost(cluster);
    QVERIFY(host);
    QVERIFY(enqueueMany(m_db, 10));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 10, 30000);

    QVERIFY(cluster.setBrokerDown());
    QVERIFY(enqueueMany(m_db, 20));
    // Delivery reports say "not persisted" when the message timeout ends.
    QTRY_VERIFY_WITH_TIMEOUT(host->lastStats().retried >= 20, 30000);
    QCOMPARE(countStatus(m_db, QStringLiteral("delivered")), 10);
    QVERIFY(cluster.setBrokerUp());
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 30, 60000);
    QVERIFY(stopHost(*host));
    QCOMPARE(recordsById(verifyNothingLost(cluster)).size(), 30);
}

void TestKafkaFaults::injectedProduceErrorsAreRetried() {
    KafkaMockCluster cluster;
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(kKafkaTopic, 2));
    // Retriable errors librdkafka retries itself, then one that fails the
    // records back to the dispatcher (not persisted: retried with backoff).
    cluster.pushRequestErrors(KafkaMockCluster::Produce,
                              {RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                               RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
                               RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                               RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                               RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED});
    QVERIFY(enqueueMany(m_db, 30));
    auto host = startKafkaHost(cluster);
    QVERIFY(host);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 30, 60000);
    QVERIFY(stopHost(*host));
    QVERIFY(host->lastStats().retried >= 1);
    QVERIFY(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts "
                                           "WHERE error LIKE 'not persisted by Kafka: %'"))
                .toInt() >= 1);
    QCOMPARE(recordsById(verifyNothingLost(cluster)).size(), 30);
}

void TestKafkaFaults::aProduceTimedOutInFlightIsRetriedAsMaybeDuplicated() {
    KafkaMockCluster cluster;
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(kKafkaTopic, 1));
    auto host = startKafkaHost(cluster);
    QVERIFY(host);
    // The produce is written but answered only after the message timeout
    // (2 s): the delivery report says "possibly persisted".
    QVERIFY(cluster.delayNextRequest(1, KafkaMockCluster::Produce, 4000));
    const QString id = sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('test', "
                                                      "'thing.happened', '{\"n\": 1}')"));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 1, 60000);
    QVERIFY(stopHost(*host));
    QVERIFY(host->lastStats().maybeDuplicated >= 1);
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT attempts FROM outbox_events")),
             QStringLiteral("2"));
    const QString error =
        sqlScalar(m_db,
                  QStringLiteral("SELECT error FROM outbox_attempts WHERE event_id = ?::uuid AND "
                                 "error IS NOT NULL"),
                  {id});
    QVERIFY2(
        error.contains(QLatin1String("may be duplicated: consumers deduplicate on the id header")),
        qPrintable(error));
    const auto records = verifyNothingLost(cluster);
    QVERIFY(!records.isEmpty());
}

void TestKafkaFaults::orderPerAggregateHoldsUnderFailures() {
    KafkaMockCluster cluster(3);
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(kKafkaTopic, 4, 3));
    cluster.pushRequestErrors(
        KafkaMockCluster::Produce,
        {RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
         RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
         RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED});
    QVERIFY(enqueueAggregates(m_db, 60, 5));
    auto config = kafkaConfig();
    config.ordering = core::Ordering::Aggregate;
    auto host = startKafkaHost(cluster, config);
    QVERIFY(host);
    QTRY_VERIFY_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")) >= 20, 60000);
    QVERIFY(cluster.setBrokerDown());
    QTRY_VERIFY_WITH_TIMEOUT(host->lastStats().retried >= 5, 30000);
    QVERIFY(cluster.setBrokerUp());
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 60, 90000);
    QVERIFY(stopHost(*host));
    QVERIFY(host->lastStats().retried >= 1);

    const auto records = verifyNothingLost(cluster);
    QVERIFY(!records.isEmpty());
    // Per key, the ids in the order read (first copy of each) are the
    // aggregate's ids in created order.
    QHash<QByteArray, QList<QByteArray>> readOrder;
    QSet<QByteArray> seen;
    for (const auto &record : records) {
        const QByteArray id = record.header(kKafkaIdHeader);
        if (!seen.contains(id)) {
            seen.insert(id);
            readOrder[record.key].append(id);
        }
    }
    QCOMPARE(readOrder.size(), 5);
    for (auto it = readOrder.cbegin(); it != readOrder.cend(); ++it) {
        const QStringList created =
            sqlColumn(m_db,
                      QStringLiteral("SELECT id FROM outbox_events WHERE aggregate_type || ':' || "
                                     "aggregate_id = ? ORDER BY created_at, id"),
                      {QString::fromUtf8(it.key())});
        QList<QByteArray> expected;
        for (const QString &id : created)
            expected.append(id.toLatin1());
        QCOMPARE(it.value(), expected);
    }
}

QTEST_GUILESS_MAIN(TestKafkaFaults)
#include "tst_kafkafaults.moc"
