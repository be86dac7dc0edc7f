// Routing and Kafka together: `outboxctl dispatch --routes FILE` as a real
// process sends one namespace to librdkafka's mock cluster (started in this
// process, as tst_e2e_kafka does) and the rest to an `outboxctl runner`; a
// Kafka outage opens only the Kafka destination's circuit while the runner's
// events keep flowing, and everything is delivered once the brokers return
// (skipped unless OUTBOX_E2E_KAFKA_OUTAGE is set: see the test).

#include "devtools/kafkamock.h"
#include "e2e/e2e.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QSet>
#include <QtTest>

using namespace outbox::testing;
using outbox::devtools::KafkaMockCluster;

namespace {

const QString kTopic = QStringLiteral("outbox.billing");

// billing -> Kafka (destination log), everything else -> the runner.
QByteArray routesText(const KafkaMockCluster &cluster, const QUrl &runner) {
    return QStringLiteral("# billing's events go to the log, the rest to the webhooks.\n"
                          "[destination log]\n"
                          "kind = kafka\n"
                          "brokers = %1\n"
                          "topic = %2\n"
                          "kafka.client.id = outbox-e2e-routes\n"
                          "circuit-failures = 3\n"
                          "circuit-open = 1s\n"
                          "\n"
                          "[destination hooks]\n"
                          "kind = http\n"
                          "url = %3\n"
                          "\n"
                          "[route]\n"
                          "namespace = billing\n"
                          "destination = log\n"
                          "\n"
                          "[route]\n"
                          "destination = hooks\n")
        .arg(cluster.bootstrapServers(), kTopic, runner.toString())
        .toUtf8();
}

QStringList routedDispatch(const QString &connInfo, const QString &routesFile) {
    return {QStringLiteral("--db"),
            connInfo,
            QStringLiteral("dispatch"),
            QStringLiteral("--routes"),
            routesFile,
            QStringLiteral("--concurrency"),
            QStringLiteral("10"),
            QStringLiteral("--batch-size"),
            QStringLiteral("20"),
            QStringLiteral("--lease"),
            QStringLiteral("5s"),
            QStringLiteral("--poll-interval"),
            QStringLiteral("200ms"),
            QStringLiteral("--request-timeout"),
            QStringLiteral("1s"),
            QStringLiteral("--stats-interval"),
            QStringLiteral("1s")};
}

// The circuit of destination `name` as the dispatchers' registry reports
// it (empty while no dispatcher reports one).
QString circuitOf(const QString &connInfo, const QString &name) {
    CtlProcess list({QStringLiteral("--db"), connInfo, QStringLiteral("dispatchers"),
                     QStringLiteral("--json")});
    if (!list.start() || !list.waitForExit(30000))
        return {};
    const QJsonObject json = QJsonDocument::fromJson(list.output().toUtf8()).object();
    const QJsonObject byWorker = json.value(QStringLiteral("destinations")).toObject();
    for (auto it = byWorker.constBegin(); it != byWorker.constEnd(); ++it) {
        for (const QJsonValue &destination : it.value().toArray()) {
            const QJsonObject object = destination.toObject();
            if (object.value(QStringLiteral("name")).toString() == name)
                return object.value(QStringLiteral("circuit")).toString();
        }
    }
    return {};
}

} // namespace

class TestE2eKafkaRoutes final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    // The topic on the cluster, and the runner listening.
    static void prepare(KafkaMockCluster &cluster, RunnerProcess &runner) {
        QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
        QVERIFY(cluster.createTopic(kTopic, 2));
        QVERIFY(runner.start(0));
    }
    // Every id the topic holds, with how many records each.
    static QHash<QString, int> idsInKafka(const KafkaMockCluster &cluster) {
        QString error;
        QHash<QString, int> ids;
        for (const auto &record : cluster.readAll(kTopic, &error))
            ++ids[QString::fromLatin1(record.header("outbox-id"))];
        if (!error.isEmpty())
            qWarning("%s", qPrintable(error));
        return ids;
    }
    QSet<QString> idsOf(const QString &nameSpace) {
        const QStringList ids = sqlColumn(
            m_db,
            QStringLiteral("SELECT id FROM outbox_events WHERE namespace = '%1'").arg(nameSpace));
        return {ids.begin(), ids.end()};
    }
    qint64 delivered(const QString &nameSpace) {
        return countWhere(
            m_db, QStringLiteral("status = 'delivered' AND namespace = '%1'").arg(nameSpace));
    }
    // Billing's events are in Kafka exactly once each, nothing else is.
    void verifyKafkaHoldsBillingOnly(const KafkaMockCluster &cluster) {
        const auto inKafka = idsInKafka(cluster);
        const QSet<QString> billing = idsOf(QStringLiteral("billing"));
        QCOMPARE(inKafka.size(), billing.size());
        for (auto it = inKafka.cbegin(); it != inKafka.cend(); ++it) {
            QVERIFY2(billing.contains(it.key()),
                     qPrintable(it.key() + QStringLiteral(" is in Kafka, not billing's")));
            QVERIFY2(it.value() >= 1, qPrintable(it.key()));
        }
    }

private Q_SLOTS:
    void eachNamespaceReachesItsOwnDestination() {
        constexpr int billing = 150;
        constexpr int shipping = 120;
        KafkaMockCluster cluster;
        RunnerProcess runner;
        prepare(cluster, runner);
        if (QTest::currentTestFailed())
            return;
        const TextFile routes(routesText(cluster, runner.url()));
        QVERIFY(insertEvents(m_db, billing, QStringLiteral("billing")));
        QVERIFY(insertEvents(m_db, shipping, QStringLiteral("shipping")));

        CtlProcess dispatch(routedDispatch(m_pg->connInfo(m_dbName), routes.path()));
        QVERIFY(dispatch.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(billing + shipping), 90000);
        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);

        verifyKafkaHoldsBillingOnly(cluster);
        // The runner got shipping's events and nothing else (it counts
        // distinct webhook ids).
        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(shipping));
        QCOMPARE(countWhere(m_db, QStringLiteral("status <> 'delivered'")), qint64(0));
    }

    void kafkaOutageOpensOnlyItsCircuit() {
        // Before its Kafka destination was configured like the dispatcher's
        // own publisher (request timeout, report deadlines), this stalled in
        // about half the runs: in_flight=20/20, nothing retried, the
        // runner's events no longer claimed.
        constexpr int batch = 40; // events per namespace and step
        KafkaMockCluster cluster;
        RunnerProcess runner;
        prepare(cluster, runner);
        if (QTest::currentTestFailed())
            return;
        const TextFile routes(routesText(cluster, runner.url()));
        const QString connInfo = m_pg->connInfo(m_dbName);

        // Both destinations at work first.
        QVERIFY(insertEvents(m_db, batch, QStringLiteral("billing")));
        QVERIFY(insertEvents(m_db, batch, QStringLiteral("shipping")));
        CtlProcess dispatch(routedDispatch(connInfo, routes.path()));
        QVERIFY(dispatch.start());
        const auto showOutput = qScopeGuard([&] {
            if (QTest::currentTestFailed())
                qWarning().noquote() << "dispatch:" << dispatch.output();
        });
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(2 * batch), 60000);

        // Kafka's brokers go down: the runner's events go through ...
        QVERIFY(cluster.setBrokerDown());
        QVERIFY(insertEvents(m_db, batch, QStringLiteral("billing")));
        QVERIFY(insertEvents(m_db, batch, QStringLiteral("shipping")));
        QTRY_COMPARE_WITH_TIMEOUT(delivered(QStringLiteral("shipping")), qint64(2 * batch), 60000);
        // ... the log's circuit opens (and turns half-open for each probe:
        // the value that matched is the one judged, not a second reading),
        // and the hooks' stays closed.
        QString logCircuit;
        QVERIFY2(QTest::qWaitFor(
                     [&] {
                         logCircuit = circuitOf(connInfo, QStringLiteral("log"));
                         return logCircuit == QLatin1String("open");
                     },
                     60000),
                 qPrintable(logCircuit));
        QCOMPARE(circuitOf(connInfo, QStringLiteral("hooks")), QStringLiteral("closed"));
        QCOMPARE(delivered(QStringLiteral("billing")), qint64(batch));
        // Still down: more shipping events keep being delivered.
        QVERIFY(insertEvents(m_db, batch, QStringLiteral("shipping")));
        QTRY_COMPARE_WITH_TIMEOUT(delivered(QStringLiteral("shipping")), qint64(3 * batch), 60000);
        QCOMPARE(delivered(QStringLiteral("billing")), qint64(batch));

        // The brokers come back: everything is delivered, nothing died.
        QVERIFY(cluster.setBrokerUp());
        QTRY_COMPARE_WITH_TIMEOUT(delivered(QStringLiteral("billing")), qint64(2 * batch), 120000);
        QTRY_COMPARE_WITH_TIMEOUT(circuitOf(connInfo, QStringLiteral("log")),
                                  QStringLiteral("closed"), 60000);
        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'dead'")), qint64(0));
        QCOMPARE(countWhere(m_db, QStringLiteral("status <> 'delivered'")), qint64(0));
        verifyKafkaHoldsBillingOnly(cluster);
        QCOMPARE(runner.counts().unique, qint64(3 * batch));
    }
};

QTEST_GUILESS_MAIN(TestE2eKafkaRoutes)
#include "tst_e2e_kafkaroutes.moc"
