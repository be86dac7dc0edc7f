// `outboxctl dispatch --kafka-brokers` as a real process against librdkafka's
// mock cluster, started in this process (the Kafka protocol on loopback
// ports): a dispatcher killed with SIGKILL between Kafka's delivery reports
// and its acks leaves duplicates only, never a loss, once another dispatcher
// has taken over its leases.

#include "devtools/kafkamock.h"
#include "e2e/e2e.h"

#include <QElapsedTimer>
#include <QSet>
#include <QtTest>

using namespace outbox::testing;
using outbox::devtools::KafkaMockCluster;

namespace {

const QString kTopic = QStringLiteral("outbox.events");

QStringList kafkaDispatch(const QString &connInfo, const QString &brokers) {
    return {QStringLiteral("--db"),
            connInfo,
            QStringLiteral("dispatch"),
            QStringLiteral("--kafka-brokers"),
            brokers,
            QStringLiteral("--kafka-topic"),
            kTopic,
            QStringLiteral("--kafka-property"),
            QStringLiteral("client.id=outbox-e2e"),
            QStringLiteral("--concurrency"),
            QStringLiteral("20"),
            QStringLiteral("--batch-size"),
            QStringLiteral("20"),
            QStringLiteral("--lease"),
            QStringLiteral("3s"),
            QStringLiteral("--poll-interval"),
            QStringLiteral("500ms"),
            QStringLiteral("--request-timeout"),
            QStringLiteral("1s"),
            QStringLiteral("--stats-interval"),
            QStringLiteral("1s")};
}

} // namespace

class TestE2eKafka final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    // Every id the topic holds, with how many records each.
    QHash<QString, int> idsInKafka(const KafkaMockCluster &cluster, int timeoutMs = 30000) {
        QString error;
        QHash<QString, int> ids;
        for (const auto &record : cluster.readAll(kTopic, &error, timeoutMs))
            ++ids[QString::fromLatin1(record.header("outbox-id"))];
        if (!error.isEmpty())
            qWarning("%s", qPrintable(error));
        return ids;
    }
    QSet<QString> deliveredIds() {
        const QStringList ids = sqlColumn(
            m_db, QStringLiteral("SELECT id FROM outbox_events WHERE status = 'delivered'"));
        return {ids.begin(), ids.end()};
    }

private Q_SLOTS:
    void killedBetweenDeliveryReportAndAckDuplicatesOnly() {
        constexpr int events = 1000;
        KafkaMockCluster cluster;
        QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
        QVERIFY(cluster.createTopic(kTopic, 2));
        // Slow answers keep produces in flight while the acks are held.
        QVERIFY(cluster.setBrokerRtt(-1, 100));
        QVERIFY(insertEvents(m_db, events));

        CtlProcess victim(kafkaDispatch(m_pg->connInfo(m_dbName), cluster.bootstrapServers()));
        QVERIFY(victim.start());
        QTRY_VERIFY_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")) >= 100,
                                 60000);
        // Hold the acks: the dispatcher's next write waits for this lock
        // while Kafka keeps persisting what it produced.
        QVERIFY(m_db.transaction());
        QVERIFY(
            sqlExec(m_db, QStringLiteral("LOCK TABLE outbox_events IN SHARE ROW EXCLUSIVE MODE")));
        const QSet<QString> ackedAtLock = deliveredIds();
        // Written to Kafka, not acknowledged: the window a crash must not
        // turn into a loss.
        // (A wall-clock deadline: each look reads the topic, which takes a while.)
        QElapsedTimer clock;
        clock.start();
        bool inWindow = false;
        while (!inWindow && clock.elapsed() < 30000) {
            const auto inKafka = idsInKafka(cluster, 5000);
            inWindow = std::any_of(inKafka.keyBegin(), inKafka.keyEnd(),
                                   [&](const QString &id) { return !ackedAtLock.contains(id); });
            if (!inWindow)
                QTest::qWait(100);
        }
        QVERIFY2(inWindow, "nothing reached Kafka without being acknowledged");
        victim.killHard();
        QVERIFY(victim.waitForExit(10000));
        QCOMPARE(victim.exitedNormally(), false);
        QVERIFY(m_db.rollback());
        // The victim's server process finishes the ack statement it was
        // waiting in (it notices the dead client only when it answers).
        QTRY_COMPARE_WITH_TIMEOUT(
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM pg_stat_activity "
                                           "WHERE application_name LIKE 'outboxctl-dispatch%'")),
            QStringLiteral("0"), 30000);
        const QSet<QString> ackedAtKill = deliveredIds();
        QSet<QString> window; // in Kafka, not acknowledged
        const auto inKafkaAtKill = idsInKafka(cluster);
        for (auto it = inKafkaAtKill.keyBegin(); it != inKafkaAtKill.keyEnd(); ++it) {
            if (!ackedAtKill.contains(*it))
                window.insert(*it);
        }
        QVERIFY2(!window.isEmpty(), "nothing was between Kafka and the ack when it was killed");

        CtlProcess survivor(kafkaDispatch(m_pg->connInfo(m_dbName), cluster.bootstrapServers()));
        QVERIFY(survivor.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 90000);
        survivor.terminate();
        QVERIFY(survivor.waitForExit(30000));
        QCOMPARE(survivor.exitCode(), 0);

        // Nothing lost.
        const auto inKafka = idsInKafka(cluster);
        QCOMPARE(inKafka.size(), events);
        const QStringList all = sqlColumn(m_db, QStringLiteral("SELECT id FROM outbox_events"));
        for (const QString &id : all)
            QVERIFY2(inKafka.contains(id), qPrintable(id + QStringLiteral(" is not in Kafka")));
        // Exactly once in Kafka what was acked; twice what was in the
        // window.
        for (auto it = inKafka.cbegin(); it != inKafka.cend(); ++it) {
            if (ackedAtKill.contains(it.key()))
                QCOMPARE(it.value(), 1);
            if (window.contains(it.key()))
                QVERIFY2(it.value() >= 2, qPrintable(it.key()));
        }
    }
};

QTEST_GUILESS_MAIN(TestE2eKafka)
#include "tst_e2e_kafka.moc"
