// KafkaPublisher on its own against librdkafka's mock cluster: the Publisher
// contract (one finished() per publish, never from inside publish(), nothing
// after abortAll()), and a fatal error of the idempotent producer, which
// rebuilds the producer without acknowledging anything Kafka did not persist.

#include "core/uuidtext.h"
#include "kafkatesting.h"

#include <QtTest>

#include <librdkafka/rdkafka.h>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::KafkaMockCluster;

class TestKafkaPublisher : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }
    void oneOutcomePerPublishNeverSynchronous();
    void abortAllEndsEveryOutcome();
    void aFatalProducerErrorRebuildsTheProducer();

private:
    static std::unique_ptr<KafkaPublisher> configured(const KafkaMockCluster &cluster) {
        auto made = KafkaPublisher::create(kafkaSettings(cluster));
        if (!made || !made.value()->configure(kafkaConfig()))
            return nullptr;
        return std::move(made).value();
    }
};

void TestKafkaPublisher::oneOutcomePerPublishNeverSynchronous() {
    KafkaMockCluster cluster;
    QVERIFY(cluster.createTopic(kKafkaTopic, 2));
    auto publisher = configured(cluster);
    QVERIFY(publisher);
    QSignalSpy finished(publisher.get(), &Publisher::finished);
    const auto events = numberedEvents(50);
    publisher->publishBatch(events);
    QCOMPARE(finished.size(), 0); // never from inside publish()
    QCOMPARE(publisher->inFlight(), 50);
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 50, 20000);
    QSet<QUuid> ids;
    for (const auto &arguments : finished) {
        const auto outcome = arguments.at(0).value<PublishOutcome>();
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);
        QVERIFY(!outcome.httpStatus);
        ids.insert(outcome.id);
    }
    QCOMPARE(ids.size(), 50);
    QCOMPARE(publisher->inFlight(), 0);
    QCOMPARE(cluster.readAll(kKafkaTopic).size(), 50);
}

void TestKafkaPublisher::abortAllEndsEveryOutcome() {
    KafkaMockCluster cluster;
    QVERIFY(cluster.createTopic(kKafkaTopic, 1));
    QVERIFY(cluster.setBrokerDown());
    auto publisher = configured(cluster);
    QVERIFY(publisher);
    QSignalSpy finished(publisher.get(), &Publisher::finished);
    publisher->publishBatch(numberedEvents(10));
    publisher->abortAll();
    QCOMPARE(publisher->inFlight(), 0);
    QTest::qWait(3000); // past the message timeout (2 s)
    QCOMPARE(finished.size(), 0);
    // A publish after abortAll() works again.
    QVERIFY(cluster.setBrokerUp());
    publisher->publish(invoiceEvent());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 20000);
}

// An out-of-order sequence number is fatal to librdkafka's idempotent
// producer (2.0.2): every record in flight fails, the producer accepts no
// more. The publisher retries those events, acknowledges none of them, and
// delivers the next ones with a new producer.
void TestKafkaPublisher::aFatalProducerErrorRebuildsTheProducer() {
    KafkaMockCluster cluster;
    QVERIFY(cluster.createTopic(kKafkaTopic, 1));
    auto publisher = configured(cluster);
    QVERIFY(publisher);
    QSignalSpy finished(publisher.get(), &Publisher::finished);
    publisher->publishBatch(numberedEvents(5));
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 5, 20000);
    cluster.pushRequestErrors(KafkaMockCluster::Produce,
                              {RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER});
    publisher->publishBatch(numberedEvents(20, 100));
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 25, 20000);
    QCOMPARE(publisher->producersMade(), 2);
    for (qsizetype i = 5; i < 25; ++i) {
        const auto outcome = finished.at(i).at(0).value<PublishOutcome>();
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QVERIFY(outcome.maybeDuplicated);
        QVERIFY2(outcome.error.contains(QLatin1String("may be duplicated")),
                 qPrintable(outcome.error));
    }
    publisher->publishBatch(numberedEvents(10, 200));
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 35, 20000);
    QSet<QByteArray> delivered;
    for (const auto &arguments : finished) {
        const auto outcome = arguments.at(0).value<PublishOutcome>();
        if (outcome.kind == PublishOutcome::Kind::Delivered)
            delivered.insert(core::uuidText(outcome.id).toLatin1());
    }
    QCOMPARE(delivered.size(), 15);
    const auto inKafka = recordsById(cluster.readAll(kKafkaTopic));
    for (const QByteArray &id : delivered)
        QVERIFY2(inKafka.contains(id), id.constData());
}

QTEST_GUILESS_MAIN(TestKafkaPublisher)
#include "tst_kafkapublisher.moc"
