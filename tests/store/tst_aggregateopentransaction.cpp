// Aggregate order against producers' transactions that are still open
// (docs/DECISIONS.md, "Aggregate order and open producer transactions"): two
// producers on two connections of their own race on one aggregate; the
// ordered claim takes no event while a transaction that may still commit an
// earlier one of its aggregate is open, and the unordered claim is not
// affected.

#include "store/aggregateorder.h"
#include "store/outboxstore.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QSqlQuery>
#include <QtTest>

using namespace outbox;
using namespace std::chrono_literals;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

class TestAggregateOpenTransaction final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestAggregateOpenTransaction()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder) {}

private:
    const QUuid m_worker = QUuid::createUuid();

    // A producer's connection of its own (closed by the fixture).
    QSqlDatabase producer() { return m_pg->open(m_dbName, {}); }

    // outbox_enqueue, as a producer calls it, in `db`'s current transaction;
    // a null aggregate when `aggregate` is null.
    static QUuid enqueue(QSqlDatabase db, const char *aggregate) {
        const QString id = sqlScalar(
            db,
            QStringLiteral(
                "SELECT id FROM outbox_enqueue('ns', 't', '{}'::jsonb, NULL, NULL, ?, ?)"),
            {aggregate ? QVariant(QStringLiteral("invoice"))
                       : QVariant(QMetaType::fromType<QString>()),
             aggregate ? QVariant(QLatin1String(aggregate))
                       : QVariant(QMetaType::fromType<QString>())});
        return QUuid::fromString(id);
    }

    QList<store::ClaimedEvent> claim(core::Ordering ordering) {
        store::OutboxStore store(m_db);
        store::ClaimOptions options;
        options.ordering = ordering;
        const auto claimed = store.claimBatch(m_worker, options);
        if (!claimed.ok())
            qWarning().noquote() << claimed.errorMessage();
        return claimed.ok() ? claimed.value() : QList<store::ClaimedEvent>();
    }

    static QList<QUuid> ids(const QList<store::ClaimedEvent> &events) {
        QList<QUuid> list;
        for (const auto &event : events)
            list << event.id;
        std::sort(list.begin(), list.end());
        return list;
    }

    bool ack(const QList<store::ClaimedEvent> &events) {
        store::OutboxStore store(m_db);
        QList<store::Ack> acks;
        for (const auto &event : events)
            acks.append({event.id, event.attempts});
        const auto acked = store.ack(m_worker, acks);
        return acked.ok() && acked->applied == events.size();
    }

private Q_SLOTS:
    // The race of the issue: A enqueues event 1 and stays open, B enqueues
    // event 2 of the same aggregate and commits first. Event 2 waits until A
    // is over; then 1 goes first. An event without an aggregate does not wait.
    void laterEventWaitsForOpenProducer() {
        QSqlDatabase a = producer(), b = producer();
        QVERIFY(a.isOpen() && b.isOpen());
        QVERIFY(a.transaction());
        const QUuid first = enqueue(a, "1");
        QVERIFY(!first.isNull());
        QVERIFY(b.transaction());
        const QUuid second = enqueue(b, "1");
        const QUuid loose = enqueue(b, nullptr);
        QVERIFY(b.commit());

        QCOMPARE(ids(claim(core::Ordering::Aggregate)), QList<QUuid>{loose});
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());

        // What the console and `outboxctl show` say about event 2.
        const auto detail = store::EventQueries(m_db).detail(second);
        QVERIFY(detail.ok() && detail.value());
        const auto &blocker = detail.value()->blockedBy;
        QVERIFY(blocker.has_value());
        QCOMPARE(blocker->kind, store::AggregateBlocker::Kind::OpenTransaction);
        QCOMPARE(QString::number(blocker->transactionId),
                 sqlScalar(a, QStringLiteral("SELECT pg_current_xact_id()::text")));
        QCOMPARE(blocker->backendPid,
                 sqlScalar(a, QStringLiteral("SELECT pg_backend_pid()")).toInt());

        QVERIFY(a.commit());
        const auto afterA = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(afterA), QList<QUuid>{first});
        QVERIFY(ack(afterA));
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), QList<QUuid>{second});
    }

    // An open producer that rolls back leaves nothing behind: the later event
    // goes as soon as it is over.
    void rollbackReleasesTheWait() {
        QSqlDatabase a = producer(), b = producer();
        QVERIFY(a.transaction());
        QVERIFY(!enqueue(a, "1").isNull());
        const QUuid second = enqueue(b, "1"); // autocommit
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());
        QVERIFY(a.rollback());
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), QList<QUuid>{second});
    }

    // The order is that of the producers' transaction ids, which a
    // transaction gets at its first write: A began before B (an earlier
    // created_at) but wrote only after B had committed, so its event comes
    // after B's, and is not claimed while B's is in flight.
    void orderIsThatOfTheFirstWrite() {
        QSqlDatabase a = producer(), b = producer();
        QVERIFY(a.transaction());
        QVERIFY(sqlExec(a, QStringLiteral("SELECT 1"))); // reads: no transaction id yet
        QVERIFY(sqlExec(a, QStringLiteral("SELECT pg_sleep(0.01)")));
        const QUuid fromB = enqueue(b, "1"); // autocommit
        const auto claimedB = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(claimedB), QList<QUuid>{fromB});

        const QUuid fromA = enqueue(a, "1");
        QVERIFY(a.commit());
        QCOMPARE(
            sqlScalar(m_db,
                      QStringLiteral("SELECT (SELECT created_at FROM outbox_events"
                                     "         WHERE id = ?::uuid)"
                                     "     < (SELECT created_at FROM outbox_events"
                                     "         WHERE id = ?::uuid)"),
                      {fromA.toString(QUuid::WithoutBraces), fromB.toString(QUuid::WithoutBraces)}),
            QStringLiteral("true"));
        // B's event is in flight and comes first: A's waits for it.
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());
        const auto detail = store::EventQueries(m_db).detail(fromA);
        QVERIFY(detail.ok() && detail.value());
        const auto &blocker = detail.value()->blockedBy;
        QVERIFY(blocker.has_value());
        QCOMPARE(blocker->kind, store::AggregateBlocker::Kind::EarlierEvent);
        QCOMPARE(blocker->id, fromB);
        QVERIFY(ack(claimedB));
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), QList<QUuid>{fromA});
    }

    // A transaction that began writing before a dead event's can still add an
    // event before it: that event is not blocked behind the dead one, which a
    // requeue would never unblock (sql/013's insert trigger).
    void eventBeforeADeadOneIsNotBlocked() {
        QSqlDatabase a = producer(), b = producer();
        QVERIFY(a.transaction());
        QVERIFY(sqlExec(a, QStringLiteral("SELECT pg_current_xact_id()"))); // A's id first
        const QUuid dead = enqueue(b, "1");
        // Cancelled by an operator (or given up by an unordered dispatcher).
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET status = 'dead',"
                                       " last_error = 'cancelled by test' WHERE id = ?::uuid"),
                        {dead.toString(QUuid::WithoutBraces)}));

        const QUuid first = enqueue(a, "1");
        QVERIFY(a.commit());
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT blocked FROM outbox_events WHERE id = ?::uuid"),
                           {first.toString(QUuid::WithoutBraces)}),
                 QStringLiteral("false"));
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), QList<QUuid>{first});
        // One after the dead event is blocked as before.
        const QUuid after = enqueue(b, "1");
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT blocked FROM outbox_events WHERE id = ?::uuid"),
                           {after.toString(QUuid::WithoutBraces)}),
                 QStringLiteral("true"));
    }

    // The unordered claim takes event 2 while A is open, as before.
    void unorderedClaimDoesNotWait() {
        QSqlDatabase a = producer(), b = producer();
        QVERIFY(a.transaction());
        QVERIFY(!enqueue(a, "1").isNull());
        const QUuid second = enqueue(b, "1");
        QCOMPARE(ids(claim(core::Ordering::None)), QList<QUuid>{second});
        QVERIFY(a.rollback());
    }
};

QTEST_GUILESS_MAIN(TestAggregateOpenTransaction)
#include "tst_aggregateopentransaction.moc"
