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

    struct Kill {
        QSet<QString> acked;  // acknowledged when the victim was killed
        QSet<QString> window; // in Kafka then, not acknowledged
    };
    // One victim: delivering, its acks held by a table lock until Kafka has
    // records it has not acknowledged, then SIGKILL. The window may still
    // come out empty: the acknowledgement the lock holds up may carry every
    // record Kafka had (the victim's server process commits it once the lock
    // goes), and then there is nothing to check.
    bool killBetweenReportAndAck(const KafkaMockCluster &cluster, qint64 deliveredBefore,
                                 Kill &kill) {
        CtlProcess victim(kafkaDispatch(m_pg->connInfo(m_dbName), cluster.bootstrapServers()));
        if (!victim.start())
            return false;
        QElapsedTimer clock;
        clock.start();
        while (countWhere(m_db, QStringLiteral("status = 'delivered'")) < deliveredBefore + 100) {
            if (clock.elapsed() > 60000) {
                qWarning("the victim delivered nothing");
                return false;
            }
            QTest::qWait(50);
        }
        // Hold the acks: the dispatcher's next write waits for this lock
        // while Kafka keeps persisting what it produced.
        if (!m_db.transaction() ||
            !sqlExec(m_db, QStringLiteral("LOCK TABLE outbox_events IN SHARE ROW EXCLUSIVE MODE")))
            return false;
        const QSet<QString> ackedAtLock = deliveredIds();
        // Written to Kafka, not acknowledged: the window a crash must not
        // turn into a loss. (A wall-clock deadline: each look reads the
        // topic, which takes a while.)
        clock.restart();
        bool inWindow = false;
        while (!inWindow && clock.elapsed() < 30000) {
            const auto inKafka = idsInKafka(cluster, 5000);
            inWindow = std::any_of(inKafka.keyBegin(), inKafka.keyEnd(),
                                   [&](const QString &id) { return !ackedAtLock.contains(id); });
            if (!inWindow)
                QTest::qWait(100);
        }
        victim.killHard();
        const bool exited = victim.waitForExit(10000) && !victim.exitedNormally();
        if (!m_db.rollback() || !inWindow || !exited) {
            qWarning("%s", inWindow ? "the victim did not die"
                                    : "nothing reached Kafka without being acknowledged");
            return false;
        }
        // The victim's server process finishes the ack statement it was
        // waiting in (it notices the dead client only when it answers), and
        // a produce it sent just before it died may still be persisted.
        clock.restart();
        while (
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM pg_stat_activity "
                                           "WHERE application_name LIKE 'outboxctl-dispatch%'")) !=
            QLatin1String("0")) {
            if (clock.elapsed() > 30000) {
                qWarning("the victim's server process did not finish");
                return false;
            }
            QTest::qWait(50);
        }
        QTest::qWait(1000);
        kill.acked = deliveredIds();
        kill.window.clear();
        const auto inKafkaAtKill = idsInKafka(cluster);
        for (auto it = inKafkaAtKill.keyBegin(); it != inKafkaAtKill.keyEnd(); ++it) {
            if (!kill.acked.contains(*it))
                kill.window.insert(*it);
        }
        return true;
    }

private Q_SLOTS:
    void killedBetweenDeliveryReportAndAckDuplicatesOnly() {
        constexpr int eventsPerVictim = 1000, victims = 3;
        KafkaMockCluster cluster;
        QVERIFY2(cluster.isRunning(), qPrintable(cluster.error()));
        QVERIFY(cluster.createTopic(kTopic, 2));
        // Slow answers keep produces in flight while the acks are held.
        QVERIFY(cluster.setBrokerRtt(-1, 100));

        // Up to three victims, until one dies with records in the window.
        int events = 0;
        Kill kill;
        QSet<QString> windows; // every victim's
        for (int attempt = 1; attempt <= victims && kill.window.isEmpty(); ++attempt) {
            const qint64 deliveredBefore = countWhere(m_db, QStringLiteral("status = 'delivered'"));
            QVERIFY(insertEvents(m_db, eventsPerVictim));
            events += eventsPerVictim;
            QVERIFY(killBetweenReportAndAck(cluster, deliveredBefore, kill));
            windows += kill.window;
            if (kill.window.isEmpty())
                qInfo("victim %d: nothing was between Kafka and the ack when it was killed; "
                      "another",
                      attempt);
        }
        QVERIFY2(!kill.window.isEmpty(), "nothing was between Kafka and the ack when a victim "
                                         "was killed");

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
        // Exactly once in Kafka what was acked at the last kill outside a
        // window; at least twice what was in a window.
        for (auto it = inKafka.cbegin(); it != inKafka.cend(); ++it) {
            if (windows.contains(it.key()))
                QVERIFY2(it.value() >= 2, qPrintable(it.key()));
            else if (kill.acked.contains(it.key()))
                QCOMPARE(it.value(), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestE2eKafka)
#include "tst_e2e_kafka.moc"
