// The ordered claim (core::Ordering::Aggregate): one event per aggregate at
// a time, oldest first; an earlier pending (also in backoff), processing or
// dead event holds the later ones back; requeue and purge let them go;
// events without an aggregate and the unordered claim are not affected. An
// event's detail looks for what holds it only where something can.

#include "core/uuidv7.h"
#include "store/aggregateorder.h"
#include "store/outboxstore.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace std::chrono_literals;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

class TestAggregateOrder final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestAggregateOrder()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder) {}

private:
    const QUuid m_worker = QUuid::createUuid();
    int m_created = 0;

    // An event `type`/`id` (null = none), created a second after the previous one.
    QUuid add(const char *type, const char *aggregate) {
        const QUuid id = core::createUuidV7();
        ++m_created;
        const bool ok = sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                           " aggregate_type, aggregate_id, created_at)"
                           " VALUES (?::uuid, 'ns', 't', '{}', ?, ?,"
                           " now() - interval '1 hour' + ?::integer * interval '1 second')"),
            {id.toString(QUuid::WithoutBraces),
             type ? QVariant(QLatin1String(type)) : QVariant(QMetaType::fromType<QString>()),
             aggregate ? QVariant(QLatin1String(aggregate))
                       : QVariant(QMetaType::fromType<QString>()),
             m_created});
        return ok ? id : QUuid();
    }

    QList<store::ClaimedEvent> claim(core::Ordering ordering, core::Millis lease = 30s) {
        store::OutboxStore store(m_db);
        store::ClaimOptions options;
        options.ordering = ordering;
        options.lease = lease;
        const auto claimed = store.claimBatch(m_worker, options);
        if (!claimed.ok())
            qWarning().noquote() << claimed.errorMessage();
        return claimed.ok() ? claimed.value() : QList<store::ClaimedEvent>();
    }

    static QSet<QUuid> ids(const QList<store::ClaimedEvent> &events) {
        QSet<QUuid> set;
        for (const auto &event : events)
            set.insert(event.id);
        return set;
    }

    bool ack(const store::ClaimedEvent &event) {
        store::OutboxStore store(m_db);
        const auto acked = store.ack(m_worker, {{event.id, event.attempts}});
        return acked.ok() && acked->applied == 1;
    }

    bool nack(const store::ClaimedEvent &event, bool permanent, core::Millis delay = 0ms) {
        store::OutboxStore store(m_db);
        store::Nack n{event.id, event.attempts, QStringLiteral("503"), delay, permanent, 503};
        const auto nacked = store.nack(m_worker, {n}, 10);
        return nacked.ok() && nacked->applied == 1;
    }

    static store::ClaimedEvent find(const QList<store::ClaimedEvent> &events, const QUuid &id) {
        for (const auto &event : events)
            if (event.id == id)
                return event;
        return {};
    }

    // Reads the detail of each of `ids` (the console's detail pane on every
    // refresh, `outboxctl show`) `times` times; returns how many lookups of
    // an earlier event of the aggregate (the blocker's join of the table to
    // itself) that ran, as pg_stat_statements counts them.
    qint64 lookupsReading(const QList<QUuid> &ids, int times = 3) {
        if (!sqlExec(m_db, QStringLiteral("SELECT pg_stat_statements_reset()")))
            return -1;
        for (int i = 0; i < times; ++i) {
            for (const QUuid &id : ids) {
                const auto detail = store::EventQueries(m_db).detail(id);
                if (!detail.ok() || !detail.value())
                    return -1;
            }
        }
        return sqlScalar(m_db,
                         QStringLiteral("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                                        " WHERE dbid = (SELECT oid FROM pg_database"
                                        "   WHERE datname = current_database())"
                                        " AND query LIKE '%JOIN outbox_events p%'"))
            .toLongLong();
    }

private Q_SLOTS:
    // The cluster counts statements (lookupsReading).
    void initTestCase() {
        devtools::EmbeddedPostgres::Options options;
        options.serverSettings = {QStringLiteral("shared_preload_libraries=pg_stat_statements")};
        startPg(outbox::testing::migrateSchemaWithAggregateOrder, options);
    }

    void init() {
        openFreshDb();
        QVERIFY(sqlExec(m_db, QStringLiteral("CREATE EXTENSION pg_stat_statements")));
    }

    void oneAtATimeOldestFirst() {
        const QUuid a1 = add("invoice", "1"), a2 = add("invoice", "1"), a3 = add("invoice", "1");
        const QUuid b1 = add("invoice", "2"), b2 = add("invoice", "2");
        const QUuid other = add("account", "1"); // same id, other type: its own aggregate
        const QUuid n1 = add(nullptr, nullptr), n2 = add(nullptr, nullptr);
        const QUuid idOnly = add(nullptr, "1"); // no type: not ordered

        auto first = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(first), (QSet<QUuid>{a1, b1, other, n1, n2, idOnly}));
        // While a1 and b1 are processing nothing more of theirs is claimed.
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());

        // b1 delivered: b2 goes. a1 fails and backs off: a2 waits for it.
        QVERIFY(ack(find(first, b1)));
        QVERIFY(nack(find(first, a1), false, 1h));
        auto second = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(second), (QSet<QUuid>{b2}));

        // a1 dead: a2 and a3 stay behind it, and the blocker names it.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET next_attempt_at = now()"
                                       " WHERE id = ?::uuid"),
                        {a1.toString(QUuid::WithoutBraces)}));
        auto retried = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(retried), (QSet<QUuid>{a1}));
        QVERIFY(nack(find(retried, a1), true));
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());
        const auto detail = store::EventQueries(m_db).detail(a3);
        QVERIFY(detail.ok() && detail.value());
        const auto &blocker = detail.value()->blockedBy;
        QVERIFY(blocker.has_value());
        QCOMPARE(blocker->id, a1);
        QCOMPARE(blocker->status, core::Status::Dead);
        QCOMPARE(blocker->unfinishedBefore, qint64(2));
        QVERIFY(!store::EventQueries(m_db).detail(a1).value().value().blockedBy);
        QVERIFY(!store::EventQueries(m_db).detail(n1).value().value().blockedBy);

        // Requeued, a1 goes first, then a2.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET status = 'pending',"
                                       " attempts = 0, next_attempt_at = now()"
                                       " WHERE id = ?::uuid"),
                        {a1.toString(QUuid::WithoutBraces)}));
        auto requeued = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(requeued), (QSet<QUuid>{a1}));
        QVERIFY(ack(find(requeued, a1)));
        auto third = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(third), (QSet<QUuid>{a2}));

        // a2 dead, then purged: a3 goes.
        QVERIFY(nack(find(third, a2), true));
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());
        QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_events WHERE id = ?::uuid"),
                        {a2.toString(QUuid::WithoutBraces)}));
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), (QSet<QUuid>{a3}));
    }

    // A lease that expires (a dispatcher killed) is taken over by the next
    // claim; its successor still waits until it is delivered.
    void expiredLeaseKeepsItsPlace() {
        const QUuid a1 = add("invoice", "1"), a2 = add("invoice", "1");
        QCOMPARE(ids(claim(core::Ordering::Aggregate, 1ms)), (QSet<QUuid>{a1}));
        QTest::qWait(20);
        auto again = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(again), (QSet<QUuid>{a1}));
        QCOMPARE(find(again, a1).attempts, 2);
        QVERIFY(claim(core::Ordering::Aggregate).isEmpty());
        QVERIFY(ack(find(again, a1)));
        QCOMPARE(ids(claim(core::Ordering::Aggregate)), (QSet<QUuid>{a2}));
    }

    // An event's detail looks for what holds it only where something can:
    // never for a delivered event or one without an aggregate.
    void detailLooksUpOnlyWhereAnEventCanWait() {
        const QUuid a1 = add("invoice", "1"), b1 = add("invoice", "2");
        auto first = claim(core::Ordering::Aggregate);
        QCOMPARE(ids(first), (QSet<QUuid>{a1, b1}));
        QVERIFY(nack(find(first, a1), true));
        QVERIFY(ack(find(first, b1)));
        const QUuid a2 = add("invoice", "1"), loose = add(nullptr, nullptr);

        QCOMPARE(lookupsReading({b1, loose}), qint64(0));
        QCOMPARE(lookupsReading({a2}), qint64(3));
        const auto detail = store::EventQueries(m_db).detail(a2);
        QVERIFY(detail.ok() && detail.value());
        QVERIFY(detail.value()->blockedBy);
        QCOMPARE(detail.value()->blockedBy->id, a1);
    }

    // With aggregate order off nothing waits, and no detail looks. Its plan
    // (without the aggregate index, a scan of every unfinished event that a
    // one-time filter never runs) was compiled by JIT on every refresh of a
    // large table's detail pane.
    void detailLooksUpNothingWhileOrderIsOff() {
        QVERIFY(sqlExec(m_db, QStringLiteral("DROP INDEX outbox_events_aggregate_idx")));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT outbox_aggregate_order_on()")),
                 QStringLiteral("false"));
        const QUuid a1 = add("invoice", "1"), a2 = add("invoice", "1");
        QCOMPARE(lookupsReading({a1, a2}), qint64(0));
        const auto detail = store::EventQueries(m_db).detail(a2);
        QVERIFY(detail.ok() && detail.value());
        QVERIFY(!detail.value()->blockedBy);
    }

    // Without ordering every due event is claimed, aggregates or not.
    void unorderedClaimIgnoresAggregates() {
        const QUuid a1 = add("invoice", "1"), a2 = add("invoice", "1");
        QCOMPARE(ids(claim(core::Ordering::None)), (QSet<QUuid>{a1, a2}));
    }
};

QTEST_GUILESS_MAIN(TestAggregateOrder)
#include "tst_aggregateorder.moc"
