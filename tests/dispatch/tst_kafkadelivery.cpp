// Delivery to Kafka end to end: a real PostgreSQL, the dispatcher in its
// thread, librdkafka's mock cluster (the Kafka protocol on loopback ports)
// and a consumer that reads every record back with its key and headers.

#include "dispatch/dispatcherhost.h"
#include "kafkatesting.h"

#include <QDateTime>
#include <QtTest>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::KafkaMockCluster;

class TestKafkaDelivery : public DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void everyEventIsReadBackWithKeyAndHeaders();
    void topicFromEventAndAnInvalidTopic();
    void settingsRefuseAPasswordAndNameTheFix();
    void badLibrdkafkaPropertyIsRefusedAtStart();
};

void TestKafkaDelivery::everyEventIsReadBackWithKeyAndHeaders() {
    KafkaMockCluster cluster(3);
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(kKafkaTopic, 4, 3));

    // 30 events of 4 aggregates, 3 without an aggregate (one traced).
    QVERIFY(enqueueAggregates(m_db, 30, 4));
    const QString traced = sqlScalar(
        m_db, QStringLiteral("SELECT id FROM outbox_enqueue('test', 'plain', '{\"p\": 1}',"
                             " p_traceparent => "
                             "'00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')"));
    QVERIFY(!traced.isEmpty());
    QVERIFY(enqueueMany(m_db, 2));

    auto host = makeHost(kafkaConfig(), kafkaFactory(kafkaSettings(cluster)));
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 33, 30000);
    QVERIFY(stopHost(*host));

    QString error;
    const auto records = cluster.readAll(kKafkaTopic, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const auto byId = recordsById(records);
    QCOMPARE(byId.size(), 33);
    QCOMPARE(records.size(), 33); // idempotent producer, nothing failed: once each

    const QStringList rows =
        sqlColumn(m_db, QStringLiteral("SELECT concat_ws('|', id, namespace, topic, attempts, "
                                       "coalesce(aggregate_type || ':' || aggregate_id, id::text), "
                                       "(extract(epoch FROM created_at) * 1000)::float8, "
                                       "payload::text) "
                                       "FROM outbox_events"));
    QCOMPARE(rows.size(), 33);
    QSet<int> partitions;
    for (const QString &row : rows) {
        const QStringList f = row.split(u'|');
        const auto &record = byId.value(f[0].toLatin1()).first();
        QCOMPARE(record.header("outbox-namespace"), f[1].toUtf8());
        QCOMPARE(record.header("outbox-topic"), f[2].toUtf8());
        QCOMPARE(record.header("outbox-attempt"), f[3].toUtf8());
        QCOMPARE(record.key, f[4].toUtf8());
        // ISO 8601 UTC in milliseconds (the database keeps microseconds).
        const QByteArray createdAt = record.header("outbox-created-at");
        QVERIFY2(createdAt.endsWith('Z'), createdAt.constData());
        const QDateTime parsed =
            QDateTime::fromString(QString::fromLatin1(createdAt), Qt::ISODateWithMs);
        QVERIFY(qAbs(double(parsed.toMSecsSinceEpoch()) - f[5].toDouble()) <= 1.0);
        QCOMPARE(record.value, f.mid(6).join(u'|').toUtf8()); // the payload as stored
        QCOMPARE(record.header("traceparent").isNull(), f[0] != traced);
        partitions.insert(record.partition);
    }
    QCOMPARE(byId.value(traced.toLatin1()).first().header("traceparent"),
             QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    // One aggregate, one partition.
    QHash<QByteArray, QSet<int>> partitionsOfKey;
    for (const auto &record : records)
        partitionsOfKey[record.key].insert(record.partition);
    for (auto it = partitionsOfKey.cbegin(); it != partitionsOfKey.cend(); ++it)
        QCOMPARE(it.value().size(), 1);
    QVERIFY(partitions.size() > 1);
    QCOMPARE(host->lastStats().delivered, 33);
    QCOMPARE(host->lastStats().maybeDuplicated, 0);
}

void TestKafkaDelivery::topicFromEventAndAnInvalidTopic() {
    KafkaMockCluster cluster;
    QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
    QVERIFY(cluster.createTopic(QStringLiteral("order.created"), 2));
    QVERIFY(cluster.createTopic(QStringLiteral("order.paid"), 2));
    for (const char *topic : {"order.created", "order.paid", "order.paid", "no spaces/please"})
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_enqueue('test', ?, '{}')"),
                        {QString::fromLatin1(topic)}));

    const auto settings =
        kafkaSettings(cluster, {{QStringLiteral("topic-from-event"), QStringLiteral("true")}});
    QVERIFY(settings.topicFromEvent);
    auto host = makeHost(kafkaConfig(), kafkaFactory(settings));
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 3, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("dead")), 1, 10000);
    QVERIFY(stopHost(*host));

    QCOMPARE(cluster.readAll(QStringLiteral("order.created")).size(), 1);
    QCOMPARE(cluster.readAll(QStringLiteral("order.paid")).size(), 2);
    const QString lastError = sqlScalar(
        m_db, QStringLiteral("SELECT last_error FROM outbox_events WHERE status = 'dead'"));
    QVERIFY2(lastError.contains(QLatin1String("\"no spaces/please\"")) &&
                 lastError.contains(QLatin1String("topic = NAME")),
             qPrintable(lastError));
}

void TestKafkaDelivery::settingsRefuseAPasswordAndNameTheFix() {
    const QPair<QString, QString> brokers{QStringLiteral("brokers"),
                                          QStringLiteral("localhost:9092")};
    const QPair<QString, QString> topic{QStringLiteral("topic"), QStringLiteral("t")};
    struct Case {
        QList<QPair<QString, QString>> properties;
        QLatin1String named;
    };
    const Case cases[] = {
        {{brokers, topic, {QStringLiteral("kafka.sasl.password"), QStringLiteral("hunter2")}},
         QLatin1String("sasl.password-file")},
        {{brokers, topic, {QStringLiteral("kafka.enable.idempotence"), QStringLiteral("false")}},
         QLatin1String("kafka.enable.idempotence")},
        {{brokers, topic, {QStringLiteral("kafka.acks"), QStringLiteral("1")}},
         QLatin1String("kafka.acks")},
        {{topic}, QLatin1String("brokers is missing")},
        {{brokers}, QLatin1String("topic = NAME")},
        {{brokers, {QStringLiteral("topic"), QStringLiteral("a b")}}, QLatin1String("\"a b\"")},
        {{brokers, topic, {QStringLiteral("topic-from-event"), QStringLiteral("true")}},
         QLatin1String("keep one")},
        {{brokers, topic, {QStringLiteral("sasl.password-file"), QStringLiteral("/nonexistent")}},
         QLatin1String("sasl.password-file")},
        {{brokers, topic, {QStringLiteral("partitions"), QStringLiteral("3")}},
         QLatin1String("\"partitions\" is not a Kafka setting")},
    };
    for (const Case &c : cases) {
        const auto settings = core::KafkaSettings::fromProperties(c.properties);
        QVERIFY(!settings);
        QVERIFY2(settings.errorMessage().contains(c.named), qPrintable(settings.errorMessage()));
        QVERIFY(!settings.errorMessage().contains(QLatin1String("hunter2")));
    }

    QTemporaryFile passwordFile;
    QVERIFY(passwordFile.open());
    passwordFile.write("s3cret\n");
    passwordFile.close();
    const auto settings = core::KafkaSettings::fromProperties(
        {brokers, topic, {QStringLiteral("sasl.password-file"), passwordFile.fileName()}});
    QVERIFY2(settings, qPrintable(settings.errorMessage()));
    QCOMPARE(settings->saslPassword, QStringLiteral("s3cret"));
    QVERIFY(!settings->describe().contains(QLatin1String("s3cret")));
}

void TestKafkaDelivery::badLibrdkafkaPropertyIsRefusedAtStart() {
    auto settings = core::KafkaSettings::fromProperties(
        {{QStringLiteral("brokers"), QStringLiteral("localhost:9092")},
         {QStringLiteral("topic"), QStringLiteral("t")},
         {QStringLiteral("kafka.security.protocol"), QStringLiteral("carrier-pigeon")}});
    QVERIFY(settings);
    const auto made = makeKafkaPublisher(settings.value());
    QVERIFY(!made);
    QVERIFY2(made.errorMessage().contains(QLatin1String("kafka.security.protocol")),
             qPrintable(made.errorMessage()));
}

QTEST_GUILESS_MAIN(TestKafkaDelivery)
#include "tst_kafkadelivery.moc"
