// The dispatcher's statements keep one plan whatever the statistics say: the
// claim walks the claim index in order, the fenced statements look rows up
// by primary key, on a backlog the planner has never seen (no ANALYZE) and
// on one that arrived after an ANALYZE taken while nothing was pending.

#include "core/uuidv7.h"
#include "store/claimstatement.h"
#include "store/outboxstore.h"
#include "support/pgtestcase.h"

#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using Statement = outbox::store::OutboxStore::Statement;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

const QString kWorker = QStringLiteral("0190a5f4-7c2e-7b3a-9d4e-123456789abc");

// 25,000 pending events without an aggregate and 25,000 over 2,500
// aggregates, and `processing` leased ones: a backlog the statistics do not
// know about.
bool insertBacklog(QSqlDatabase db, int processing) {
    return sqlExec(db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                      " aggregate_type, aggregate_id)"
                                      " SELECT outbox_uuid_v7(), 'ns', 't', '{}'::jsonb,"
                                      "  CASE WHEN i % 2 = 0 THEN 'invoice' END, (i % 2500)::text"
                                      " FROM generate_series(1, 50000) AS i")) &&
           sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                  " status, attempts, locked_by, locked_until)"
                                  " SELECT outbox_uuid_v7(), 'ns', 't', '{}'::jsonb, 'processing',"
                                  " 1, ?::uuid, now() + interval '30 seconds'"
                                  " FROM generate_series(1, ?::integer)"),
                   {kWorker, processing});
}

// EXPLAIN of `sql` ('?' placeholders) as a generic plan, run with `args`;
// `options` such as "(ANALYZE)" run it.
QString explain(QSqlDatabase db, QString sql, const QString &args,
                const QString &options = QString()) {
    for (int n = 1; sql.contains(QLatin1Char('?')); ++n)
        sql.replace(sql.indexOf(QLatin1Char('?')), 1, QStringLiteral("$%1").arg(n));
    if (!sqlExec(db, QStringLiteral("PREPARE s AS %1").arg(sql)))
        return QStringLiteral("PREPARE failed");
    QSqlQuery query(db);
    QStringList lines;
    if (!query.exec(QStringLiteral("EXPLAIN %1 EXECUTE s%2").arg(options, args)))
        lines << query.lastError().text();
    while (query.next())
        lines << query.value(0).toString();
    query.finish();
    sqlExec(db, QStringLiteral("DEALLOCATE s"));
    return lines.join(QLatin1Char('\n'));
}

// The claim's arguments ("(...)" for EXECUTE): the picking ones (twice in
// aggregate order), then the worker and the lease.
QString claimArgs(core::Ordering ordering, const QString &ns = QString()) {
    const QString pick = QStringLiteral("10, '-infinity'%1, 100").arg(ns);
    return QStringLiteral("(%1%2, '%3', 30000)")
        .arg(pick, ordering == core::Ordering::Aggregate ? QStringLiteral(", ") + pick : QString(),
             kWorker);
}

// The part of a claim's plan that picks the rows (CTE c, before CTE u).
QString pickingPart(const QString &plan) {
    const qsizetype from = plan.indexOf(QLatin1String("CTE c"));
    const qsizetype to = plan.indexOf(QLatin1String("CTE u"));
    return from < 0 || to < from ? plan : plan.mid(from, to - from);
}

} // namespace

class TestClaimPlans final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestClaimPlans()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder) {}

private:
    // Every statement of the dispatcher's hot path on the current data.
    void checkHotPath() {
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        for (const bool byNamespace : {false, true}) {
            const QString ns = byNamespace ? QStringLiteral(", 'ns'") : QString();
            for (const auto ordering : {core::Ordering::None, core::Ordering::Aggregate}) {
                const QString plan = explain(
                    m_db, store::OutboxStore::statement(Statement::Claim, byNamespace, ordering),
                    claimArgs(ordering, ns));
                const QString picking = pickingPart(plan);
                // In aggregate order: the index without processing, blocked
                // and held events (sql/011), expired leases from the lease
                // index first.
                const bool ordered = ordering == core::Ordering::Aggregate;
                QVERIFY2(picking.contains(
                             ordered
                                 ? QLatin1String("Index Scan using outbox_events_ordered_claim_idx")
                                 : QLatin1String("Index Scan using outbox_events_claim_idx")),
                         qPrintable(plan));
                if (ordered)
                    QVERIFY2(
                        plan.contains(QLatin1String("Index Scan using outbox_events_lease_idx")),
                        qPrintable(plan));
                for (const char *bad : {"Sort", "Bitmap", "Seq Scan"})
                    QVERIFY2(!picking.contains(QLatin1String(bad)), qPrintable(plan));
                // The UPDATE takes the picked rows by the tuple ids the
                // picking locked: no descent of the primary key per row.
                QVERIFY2(plan.contains(QLatin1String("Tid Scan on outbox_events e")),
                         qPrintable(plan));
                QVERIFY2(!plan.contains(QLatin1String("outbox_events_pkey")), qPrintable(plan));
                if (ordering == core::Ordering::Aggregate)
                    QVERIFY2(picking.contains(QLatin1String("outbox_events_aggregate_idx")),
                             qPrintable(plan));
            }
            const QString floor =
                explain(m_db, store::OutboxStore::statement(Statement::Floor, byNamespace),
                        QStringLiteral("(1000%1)").arg(ns));
            QVERIFY2(floor.contains(QLatin1String("outbox_events_claim_idx")), qPrintable(floor));
            // The next due time reads the head of the due index's range of
            // events that are not blocked, and unordered also of those that are.
            const QString due =
                explain(m_db, store::OutboxStore::statement(Statement::NextDue, byNamespace),
                        byNamespace ? QStringLiteral("('ns', 'ns')") : QString());
            QVERIFY2(due.count(QLatin1String("Index Scan using outbox_events_pending_due_idx")) ==
                         2,
                     qPrintable(due));
            const QString orderedDue =
                explain(m_db,
                        store::OutboxStore::statement(Statement::NextDue, byNamespace,
                                                      core::Ordering::Aggregate),
                        byNamespace ? QStringLiteral("('ns')") : QString());
            QVERIFY2(orderedDue.count(
                         QLatin1String("Index Scan using outbox_events_pending_due_idx")) == 1,
                     qPrintable(orderedDue));
            const QString sweep = explain(m_db,
                                          store::OutboxStore::deadSweepStatement(
                                              byNamespace, store::SweepScope::ExpiredLeases),
                                          QStringLiteral("(3, 3%1)").arg(ns));
            QVERIFY2(sweep.contains(QLatin1String("outbox_events_lease_idx")), qPrintable(sweep));
            for (const QString &plan : {floor, due, orderedDue, sweep}) {
                for (const char *bad : {"Bitmap", "Seq Scan"})
                    QVERIFY2(!plan.contains(QLatin1String(bad)), qPrintable(plan));
            }
        }

        // Ack, nack and release: one primary-key lookup per id, whatever the
        // planner believes about the processing rows.
        const QString json = QStringLiteral("'[{\"id\": \"%1\", \"attempts\": 1}]'").arg(kWorker);
        const QString fenced[] = {
            explain(m_db, store::OutboxStore::statement(Statement::Ack),
                    QStringLiteral("(%1, '%2')").arg(json, kWorker)),
            explain(m_db, store::OutboxStore::statement(Statement::Nack),
                    QStringLiteral("(%1, 3, 3, '%2', '%2')").arg(json, kWorker)),
            explain(m_db, store::OutboxStore::statement(Statement::Release),
                    QStringLiteral("(%1, 3, '%2')").arg(json, kWorker)),
        };
        for (const QString &plan : fenced) {
            QVERIFY2(plan.contains(QLatin1String("Nested Loop")), qPrintable(plan));
            QVERIFY2(plan.contains(QLatin1String("Index Scan using outbox_events_pkey")),
                     qPrintable(plan));
            for (const char *bad :
                 {"claim_idx", "lease_idx", "pending_due_idx", "Seq Scan", "Bitmap", "Hash"})
                QVERIFY2(!plan.contains(QLatin1String(bad)), qPrintable(plan));
        }
    }

private Q_SLOTS:
    void init() {
        if (!openFreshDb())
            return;
        // No autovacuum: the statistics stay what the test made them.
        QVERIFY(sqlExec(m_db, QStringLiteral("ALTER TABLE outbox_events"
                                             " SET (autovacuum_enabled = false)")));
    }

    // A backlog that arrived before any ANALYZE.
    void unanalyzedBacklog() {
        QVERIFY(insertBacklog(m_db, 2000));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM pg_stats"
                                                " WHERE tablename = 'outbox_events'")),
                 QStringLiteral("0"));
        checkHotPath();
    }

    // The steady state (everything delivered, analyzed), then a burst with no
    // ANALYZE in between: the statistics say nothing is pending or processing.
    void burstIntoStatisticsOfAnEmptyQueue() {
        QVERIFY(sqlExec(
            m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                 " status, attempts, delivered_at)"
                                 " SELECT outbox_uuid_v7(), 'ns', 't', '{}'::jsonb, 'delivered',"
                                 " 1, now() FROM generate_series(1, 30000)")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        QVERIFY(insertBacklog(m_db, 5000));
        checkHotPath();
    }

    // While nothing is paused, the claim asks outbox_pauses once per
    // statement, not once per row it picks; a pause makes every row ask again,
    // and the paused namespace is not claimed.
    void pauseProbePerRowOnlyWhileSomethingIsPaused() {
        QVERIFY(insertBacklog(m_db, 0));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        const QString claim =
            store::OutboxStore::statement(Statement::Claim, false, core::Ordering::None);
        const auto run = [&] {
            sqlExec(m_db, QStringLiteral("BEGIN"));
            const QString plan = explain(
                m_db, claim, QStringLiteral("(10, '-infinity', 100, '%1', 30000)").arg(kWorker),
                QStringLiteral("(ANALYZE, COSTS OFF, TIMING OFF)"));
            sqlExec(m_db, QStringLiteral("ROLLBACK"));
            return plan;
        };
        const QString idle = run();
        QVERIFY2(idle.contains(QLatin1String("Update on outbox_events e (actual rows=100 ")),
                 qPrintable(idle));
        QVERIFY2(idle.contains(QLatin1String("Index Scan using outbox_pauses_scope_idx on "
                                             "outbox_pauses p (never executed)")),
                 qPrintable(idle));

        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_pauses (namespace, reason,"
                                             " paused_by) VALUES ('other', 'test', 'test')")));
        const QString other = run();
        QVERIFY2(other.contains(QLatin1String("Update on outbox_events e (actual rows=100 ")),
                 qPrintable(other));
        QVERIFY2(other.contains(QLatin1String("loops=100)")), qPrintable(other));

        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_pauses (namespace, reason,"
                                             " paused_by) VALUES ('ns', 'test', 'test')")));
        const QString paused = run();
        QVERIFY2(paused.contains(QLatin1String("Update on outbox_events e (actual rows=0 ")),
                 qPrintable(paused));
    }

    // A routing dispatcher's claim (store::ClaimRoute) still walks the claim
    // index in order, testing each row against its routes; it takes only the
    // events whose first matching route's destination may be claimed and is
    // not paused (outbox_destination_pauses).
    void routedClaimKeepsTheClaimIndex() {
        QVERIFY(insertBacklog(m_db, 0));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        const auto args = [](const QList<store::ClaimRoute> &routes) {
            return QStringLiteral("('%1', 10, '-infinity', 100, '%2', 30000)")
                .arg(store::routesJson(routes), kWorker);
        };
        const store::ClaimRoute ns{QStringLiteral("n%"), QStringLiteral("%"), QStringLiteral("a")};
        const QString plan =
            explain(m_db, store::claimStatement(false, core::Ordering::None, 1), args({ns}));
        const QString picking = pickingPart(plan);
        QVERIFY2(picking.contains(QLatin1String("Index Scan using outbox_events_claim_idx")),
                 qPrintable(plan));
        for (const char *bad : {"Sort", "Bitmap", "Seq Scan"})
            QVERIFY2(!picking.contains(QLatin1String(bad)), qPrintable(plan));

        const auto claimed = [&](const QList<store::ClaimRoute> &routes) {
            sqlExec(m_db, QStringLiteral("BEGIN"));
            const QString analyzed = explain(
                m_db, store::claimStatement(false, core::Ordering::None, int(routes.size())),
                args(routes), QStringLiteral("(ANALYZE, COSTS OFF, TIMING OFF)"));
            sqlExec(m_db, QStringLiteral("ROLLBACK"));
            static const QRegularExpression rows(
                QStringLiteral("Update on outbox_events e \\(actual rows=(\\d+) "));
            const auto match = rows.match(analyzed);
            return match.hasMatch() ? match.captured(1).toInt() : -1;
        };
        QCOMPARE(claimed({ns}), 100);
        // No route matches: not claimed.
        QCOMPARE(claimed({{QStringLiteral("billing"), QStringLiteral("%"), QStringLiteral("a")}}),
                 0);
        // The first match decides: its destination's circuit is open.
        store::ClaimRoute open = ns;
        open.claimable = false;
        QCOMPARE(claimed({open, {QStringLiteral("%"), QStringLiteral("%"), QStringLiteral("b")}}),
                 0);
        QCOMPARE(claimed({{QStringLiteral("x%"), QStringLiteral("%"), QStringLiteral("a")},
                          {QStringLiteral("%"), QStringLiteral("t"), QStringLiteral("b")}}),
                 100);
        // A paused destination's events stay where they are.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_destination_pause('a', 'test')")));
        QCOMPARE(claimed({ns}), 0);
        QCOMPARE(claimed({{QStringLiteral("n%"), QStringLiteral("%"), QStringLiteral("b")}}), 100);
    }

    // A routing dispatcher's floor leaves out what its routes may not claim
    // now (the backlog behind an open circuit), from a lower bound, and is
    // now (less the margin) when nothing may be claimed.
    void routedFloorSkipsWhatIsNotClaimable() {
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                             " payload, created_at) SELECT outbox_uuid_v7(),"
                                             " 'a', 't', '{}', now() - interval '1 hour'"
                                             " FROM generate_series(1, 100)")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                             " payload, created_at) VALUES (outbox_uuid_v7(),"
                                             " 'b', 't', '{}', now() - interval '10 minutes')")));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        store::OutboxStore outbox(m_db);
        const store::ClaimRoute a{QStringLiteral("a"), QStringLiteral("%"), QStringLiteral("a")};
        const store::ClaimRoute b{QStringLiteral("b"), QStringLiteral("%"), QStringLiteral("b")};
        const auto ageOf = [&](const QString &floor) {
            return sqlScalar(m_db,
                             QStringLiteral("SELECT round(extract(epoch FROM now() -"
                                            " ?::timestamptz) / 60)"),
                             {floor});
        };
        auto floor = outbox.claimFloor({}, core::Millis(0), {a, b});
        QVERIFY2(floor.ok(), qPrintable(floor.errorMessage()));
        QCOMPARE(ageOf(floor.value()), QStringLiteral("60"));
        store::ClaimRoute open = a;
        open.claimable = false;
        floor = outbox.claimFloor({}, core::Millis(0), {open, b});
        QVERIFY2(floor.ok(), qPrintable(floor.errorMessage()));
        QCOMPARE(ageOf(floor.value()), QStringLiteral("10"));
        // From a lower bound past b's event: nothing to claim there.
        floor = outbox.claimFloor({}, core::Millis(0), {open, b},
                                  sqlScalar(m_db, QStringLiteral("SELECT (now() - interval"
                                                                 " '5 minutes')::text")));
        QVERIFY2(floor.ok(), qPrintable(floor.errorMessage()));
        QCOMPARE(ageOf(floor.value()), QStringLiteral("0"));
    }

    // Whether JIT compiles is decided by the estimated cost, which a generic
    // plan over a large backlog can push past the threshold; the dispatcher's
    // session never compiles.
    void hotPathNeverCompiles() {
        if (sqlScalar(m_db, QStringLiteral("SELECT pg_jit_available()")) != QLatin1String("true"))
            QSKIP("this server has no JIT");
        QVERIFY(insertBacklog(m_db, 0));
        QVERIFY(sqlExec(m_db, QStringLiteral("SET jit_above_cost = 0")));
        const QString claim =
            store::OutboxStore::statement(Statement::Claim, false, core::Ordering::None);
        const QString args = QStringLiteral("(10, '-infinity', 100, '%1', 30000)").arg(kWorker);
        const QString compiled = explain(m_db, claim, args);
        QVERIFY2(compiled.contains(QLatin1String("JIT:")), qPrintable(compiled));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        const QString plain = explain(m_db, claim, args);
        QVERIFY2(!plain.contains(QLatin1String("JIT")), qPrintable(plain));
    }

    // The acknowledging statements find rows by lease without naming the
    // status; the database guarantees that only processing rows hold one.
    void onlyProcessingRowsHoldALease() {
        for (const char *status : {"pending", "delivered", "dead"}) {
            QSqlQuery insert(m_db);
            QVERIFY(insert.prepare(QStringLiteral(
                "INSERT INTO outbox_events (id, namespace, topic, payload, status, locked_by,"
                " locked_until) VALUES (?::uuid, 'ns', 't', '{}', ?, ?::uuid, now())")));
            insert.addBindValue(core::createUuidV7().toString(QUuid::WithoutBraces));
            insert.addBindValue(QLatin1String(status));
            insert.addBindValue(kWorker);
            QVERIFY2(!insert.exec(), status);
            QVERIFY2(insert.lastError().text().contains(
                         QLatin1String("outbox_events_lease_only_processing_check")),
                     qPrintable(insert.lastError().text()));
        }
    }
};

QTEST_GUILESS_MAIN(TestClaimPlans)
#include "tst_claimplans.moc"
