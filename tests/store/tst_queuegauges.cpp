// The queue gauges of /metrics against the table they describe, and the
// pause condition of the claim: counts per status, due now, the oldest due
// age, pauses and live dispatchers.

#include "store/outboxstore.h"
#include "store/pausestore.h"
#include "store/queuegauges.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestQueueGauges final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    std::unique_ptr<store::Session> session() {
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        auto s = std::make_unique<store::Session>(info.value(), store::Session::Options{});
        if (auto opened = s->open(); !opened)
            qWarning().noquote() << opened.errorMessage();
        return s;
    }

    void insert(const QString &ns, const QString &status, int count, const QString &dueAgo) {
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                       " status, next_attempt_at, locked_by, locked_until)"
                                       " SELECT outbox_uuid_v7(), ?, 't', '{}', ?,"
                                       " now() - ?::interval,"
                                       " CASE WHEN ? = 'processing' THEN gen_random_uuid() END,"
                                       " CASE WHEN ? = 'processing' THEN now() + interval '1m' END"
                                       " FROM generate_series(1, ?)"),
                        {ns, status, dueAgo, status, status, count}));
    }

private Q_SLOTS:
    void gaugesMatchTheTable() {
        insert(QStringLiteral("a"), QStringLiteral("pending"), 7, QStringLiteral("90 seconds"));
        insert(QStringLiteral("a"), QStringLiteral("pending"), 3, QStringLiteral("-1 hour"));
        insert(QStringLiteral("b"), QStringLiteral("pending"), 5, QStringLiteral("1 hour"));
        insert(QStringLiteral("a"), QStringLiteral("processing"), 2, QStringLiteral("0s"));
        insert(QStringLiteral("a"), QStringLiteral("delivered"), 11, QStringLiteral("0s"));
        insert(QStringLiteral("b"), QStringLiteral("dead"), 4, QStringLiteral("0s"));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                             " repeat('x', 40), 'h', 1, 'v', 'a', NULL, 'u', 1,"
                                             " 60000, now())")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                             " repeat('y', 40), 'h', 2, 'v', 'a', NULL, 'u', 1,"
                                             " 100, now())")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_dispatchers SET heartbeat_at ="
                                             " now() - interval '1 minute' WHERE pid = 2")));
        auto s = session();

        auto gauges = store::readQueueGauges(*s);
        QVERIFY2(gauges.ok(), qPrintable(gauges.errorMessage()));
        QCOMPARE(gauges->pending, 15);
        QCOMPARE(gauges->processing, 2);
        QCOMPARE(gauges->delivered, 11);
        QCOMPARE(gauges->deliveredEstimated, false);
        QCOMPARE(gauges->dead, 4);
        QCOMPARE(gauges->dueNow, 12);
        QVERIFY2(gauges->oldestDueAgeSeconds >= 3599 && gauges->oldestDueAgeSeconds < 3700,
                 qPrintable(QString::number(gauges->oldestDueAgeSeconds)));
        QCOMPARE(gauges->pausedNamespaces, 0);
        QCOMPARE(gauges->dispatchersAlive, 1);

        // Pausing b takes its due rows out of "due" and the oldest age moves
        // to namespace a's.
        store::PauseStore pauses(*s);
        QVERIFY(pauses.pause(QStringLiteral("b"), std::nullopt, QStringLiteral("r"), {}).ok());
        QVERIFY(pauses.pause(QStringLiteral("a"), QStringLiteral("other"), QStringLiteral("r"), {})
                    .ok());
        gauges = store::readQueueGauges(*s);
        QVERIFY(gauges.ok());
        QCOMPARE(gauges->dueNow, 7);
        QVERIFY2(gauges->oldestDueAgeSeconds >= 89 && gauges->oldestDueAgeSeconds < 200,
                 qPrintable(QString::number(gauges->oldestDueAgeSeconds)));
        QCOMPARE(gauges->pausedNamespaces, 2);
        QCOMPARE(gauges->pausedScopes, 2);
    }

    // The claim skips a paused namespace and a paused topic, and so does the
    // next due time (no busy loop over paused rows).
    void claimSkipsWhatIsPaused() {
        insert(QStringLiteral("a"), QStringLiteral("pending"), 3, QStringLiteral("1 minute"));
        insert(QStringLiteral("b"), QStringLiteral("pending"), 2, QStringLiteral("1 minute"));
        auto s = session();
        store::PauseStore pauses(*s);
        QVERIFY(pauses.pause(QStringLiteral("a"), std::nullopt, QStringLiteral("r"), {}).ok());
        QVERIFY(
            pauses.pause(QStringLiteral("b"), QStringLiteral("t"), QStringLiteral("r"), {}).ok());
        store::OutboxStore store(*s);
        auto claimed = store.claimBatch(QUuid::createUuid(), store::ClaimOptions{});
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QCOMPARE(claimed->size(), 0);
        auto due = store.timeUntilNextDue();
        QVERIFY(due.ok());
        QVERIFY(!due.value().has_value());

        QCOMPARE(pauses.resume(QStringLiteral("b"), std::nullopt, {}).value(), 1);
        claimed = store.claimBatch(QUuid::createUuid(), store::ClaimOptions{});
        QVERIFY(claimed.ok());
        QCOMPARE(claimed->size(), 2);
        QCOMPARE(claimed->first().nameSpace, QStringLiteral("b"));
    }
};

QTEST_GUILESS_MAIN(TestQueueGauges)
#include "tst_queuegauges.moc"
