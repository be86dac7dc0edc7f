// A paused backlog costs the claim nothing: paused events are held (the
// column `held`, sql/010_paused_backlog.sql) and outside the indexes the
// claim, the claim floor and the due time read. The plans are checked by
// what they read (EXPLAIN ANALYZE, BUFFERS), not by how long they take.

#include "core/conninfo.h"
#include "core/uuidv7.h"
#include "store/eventfilter.h"
#include "store/migrator.h"
#include "store/operations.h"
#include "store/outboxstore.h"
#include "store/pausestore.h"
#include "store/queries.h"
#include "store/queuegauges.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

using namespace outbox;
using Statement = outbox::store::OutboxStore::Statement;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

const QString kWorker = QStringLiteral("0190a5f4-7c2e-7b3a-9d4e-123456789abc");
const store::Actor kActor{QStringLiteral("alice"), QStringLiteral("ops-laptop"),
                          QStringLiteral("tst_pausedbacklog")};
constexpr int kPaused = 50000;

// `count` pending events of `ns`/`topic`, created `ageSeconds` ago (one
// microsecond apart), through a plain INSERT that does not name `held`; with
// `withAggregate` over 1,000 aggregates whose type is the topic.
bool insertPending(QSqlDatabase db, int count, const QString &ns, const QString &topic,
                   int ageSeconds, bool withAggregate = false) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                  " created_at, aggregate_type, aggregate_id)"
                                  " SELECT outbox_uuid_v7(), ?::text, ?::text,"
                                  "  jsonb_build_object('n', g), now() - ?::integer * interval '1s'"
                                  "  + g * interval '1 microsecond',"
                                  "  CASE WHEN ?::boolean THEN ?::text END, (g % 1000)::text"
                                  " FROM generate_series(1, ?::integer) AS g"),
                   {ns, topic, ageSeconds, withAggregate, topic, count});
}

// The plan node (of a FORMAT JSON plan) that scans `index`; empty when none.
QJsonObject nodeOn(const QJsonObject &node, const QString &index) {
    if (node.value(QLatin1String("Index Name")).toString() == index)
        return node;
    const QJsonArray children = node.value(QLatin1String("Plans")).toArray();
    for (const QJsonValue &child : children) {
        const QJsonObject found = nodeOn(child.toObject(), index);
        if (!found.isEmpty())
            return found;
    }
    return {};
}

// EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of `sql` ('?' placeholders) as a
// generic plan run with `args`, inside a transaction that is rolled back.
QJsonObject explainAnalyze(QSqlDatabase db, QString sql, const QString &args) {
    for (int n = 1; sql.contains(QLatin1Char('?')); ++n)
        sql.replace(sql.indexOf(QLatin1Char('?')), 1, QStringLiteral("$%1").arg(n));
    if (!sqlExec(db, QStringLiteral("PREPARE s AS %1").arg(sql)))
        return {};
    sqlExec(db, QStringLiteral("BEGIN"));
    const QString json = sqlScalar(
        db, QStringLiteral("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) EXECUTE s%1")
                .arg(args));
    sqlExec(db, QStringLiteral("ROLLBACK"));
    sqlExec(db, QStringLiteral("DEALLOCATE s"));
    return QJsonDocument::fromJson(json.toUtf8())
        .array()
        .first()
        .toObject()
        .value(QLatin1String("Plan"))
        .toObject();
}

struct IndexRead {
    qint64 rows = -1;     // returned by the index scan
    qint64 filtered = -1; // read and dropped by its filter
    qint64 buffers = -1;  // shared buffers it touched
    QString plan;         // for the failure message
};

// One line per node: its type, index, rows, rows filtered out and buffers.
QString outline(const QJsonObject &node, int depth = 0) {
    QString line = QString(depth * 2, QLatin1Char(' ')) +
                   QStringLiteral("%1 %2 rows=%3 removed=%4 buffers=%5\n")
                       .arg(node.value(QLatin1String("Node Type")).toString(),
                            node.value(QLatin1String("Index Name")).toString())
                       .arg(node.value(QLatin1String("Actual Rows")).toInteger())
                       .arg(node.value(QLatin1String("Rows Removed by Filter")).toInteger())
                       .arg(node.value(QLatin1String("Shared Hit Blocks")).toInteger());
    const QJsonArray children = node.value(QLatin1String("Plans")).toArray();
    for (const QJsonValue &child : children)
        line += outline(child.toObject(), depth + 1);
    return line;
}

IndexRead readOf(const QJsonObject &plan, const QString &index) {
    const QJsonObject node = nodeOn(plan, index);
    IndexRead read;
    read.plan = QLatin1Char('\n') + outline(plan);
    if (node.isEmpty())
        return read;
    read.rows = node.value(QLatin1String("Actual Rows")).toInteger();
    read.filtered = node.value(QLatin1String("Rows Removed by Filter")).toInteger(0);
    const auto buffers = [](const QJsonObject &of) {
        return of.value(QLatin1String("Shared Hit Blocks")).toInteger() +
               of.value(QLatin1String("Shared Read Blocks")).toInteger();
    };
    // The walk's own: not those of the tests it runs per row (its subplans).
    read.buffers = buffers(node);
    const QJsonArray children = node.value(QLatin1String("Plans")).toArray();
    for (const QJsonValue &child : children)
        read.buffers -= buffers(child.toObject());
    return read;
}

// What the claim's walk of its index (outbox_events_claim_idx, in aggregate
// order outbox_events_ordered_claim_idx) reads for a claim of 100.
IndexRead claimRead(QSqlDatabase db, core::Ordering ordering) {
    // What the claims rolled back before left behind is not what is measured.
    sqlExec(db, QStringLiteral("VACUUM outbox_events"));
    const QString claim = store::OutboxStore::statement(Statement::Claim, false, ordering);
    const QString pick = QStringLiteral("10, '-infinity', 100, ");
    const bool ordered = ordering == core::Ordering::Aggregate;
    return readOf(
        explainAnalyze(
            db, claim,
            QStringLiteral("(%1%2'%3', 30000)").arg(pick, ordered ? pick : QString(), kWorker)),
        ordered ? QStringLiteral("outbox_events_ordered_claim_idx")
                : QStringLiteral("outbox_events_claim_idx"));
}

} // namespace

class TestPausedBacklog final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestPausedBacklog()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    qint64 heldCount() {
        return sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events"
                                              " WHERE held AND status = 'pending'"))
            .toLongLong();
    }

    // What a dispatcher would do for what a pause or resume left: step until
    // nothing is queued.
    void finishPauseWork(int batch) {
        store::OutboxStore store(m_db);
        while (sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_pause_work")) !=
               QLatin1String("0"))
            QVERIFY(store.continuePauseWork(batch).ok());
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_paused_"), {QStringLiteral("dispatcher")});
    }

    void init() {
        if (!openFreshDb())
            return;
        // No autovacuum: what the claim reads stays what the test made.
        QVERIFY(sqlExec(m_db, QStringLiteral("ALTER TABLE outbox_events"
                                             " SET (autovacuum_enabled = false)")));
        QVERIFY(store::Migrator(m_db).enableAggregateOrder().ok());
    }

    void claimDoesNotVisitPausedEvents_data() {
        QTest::addColumn<QString>("pausedTopic"); // empty: the whole namespace
        QTest::addColumn<bool>("heldBeforePause");
        QTest::newRow("namespace, enqueued while paused") << QString() << false;
        QTest::newRow("namespace, backlog held by the pause") << QString() << true;
        QTest::newRow("topic, enqueued while paused") << QStringLiteral("invoice.paid") << false;
        QTest::newRow("topic, backlog held by the pause") << QStringLiteral("invoice.paid") << true;
    }

    // 50,000 paused events older than everything else: the claim's walk
    // of its index reads the same as with nothing paused, in both orders.
    void claimDoesNotVisitPausedEvents() {
        QFETCH(QString, pausedTopic);
        QFETCH(bool, heldBeforePause);
        const QString pausedNs = QStringLiteral("billing");
        // The rest: another namespace, or another topic of the same one.
        const QString liveNs = pausedTopic.isEmpty() ? QStringLiteral("shipping") : pausedNs;
        QVERIFY(insertPending(m_db, 1000, liveNs, QStringLiteral("parcel.sent"), 60, true));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        // The baseline: a pause of the same kind that holds nothing, so that
        // both runs test each claimed row against outbox_pauses alike.
        store::PauseStore pauses(m_db);
        QVERIFY(pauses
                    .pause(pausedTopic.isEmpty() ? QStringLiteral("decoy") : pausedNs,
                           pausedTopic.isEmpty() ? std::nullopt
                                                 : std::optional(QStringLiteral("decoy")),
                           QStringLiteral("nothing to hold"), kActor)
                    .ok());
        const IndexRead idle[] = {claimRead(m_db, core::Ordering::None),
                                  claimRead(m_db, core::Ordering::Aggregate)};

        const QString topic = pausedTopic.isEmpty() ? QStringLiteral("invoice.paid") : pausedTopic;
        const std::optional<QString> scope =
            pausedTopic.isEmpty() ? std::nullopt : std::optional(pausedTopic);
        if (heldBeforePause)
            QVERIFY(insertPending(m_db, kPaused, pausedNs, topic, 3600, true));
        QVERIFY(pauses.pause(pausedNs, scope, QStringLiteral("endpoint down"), kActor).ok());
        if (!heldBeforePause)
            QVERIFY(insertPending(m_db, kPaused, pausedNs, topic, 3600, true));
        QCOMPARE(heldCount(), qint64(kPaused));

        int i = 0;
        for (const auto ordering : {core::Ordering::None, core::Ordering::Aggregate}) {
            const IndexRead paused = claimRead(m_db, ordering);
            QVERIFY2(paused.rows == 100, qPrintable(paused.plan));
            QVERIFY2(paused.filtered == 0, qPrintable(paused.plan));
            // Not one buffer per paused event: about what it read with nothing
            // paused (vacuumed before each: the entries the rows had before
            // they were held are gone, as autovacuum removes them).
            QVERIFY2(paused.buffers <= 2 * idle[i].buffers + 20,
                     qPrintable(QStringLiteral("%1 buffers with %2 paused, %3 without: %4")
                                    .arg(paused.buffers)
                                    .arg(kPaused)
                                    .arg(idle[i].buffers)
                                    .arg(paused.plan)));
            ++i;
        }
        // And the claim takes only the rest.
        store::OutboxStore store(m_db);
        store::ClaimOptions options;
        options.batchSize = 2000;
        options.maxAttempts = 10;
        options.lease = core::Millis(30000);
        const auto claimed = store.claimBatch(core::createUuidV7(), options);
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QCOMPARE(claimed->size(), 1000);
        for (const store::ClaimedEvent &event : claimed.value())
            QCOMPARE(event.topic, QStringLiteral("parcel.sent"));
    }

    // With only paused events pending, the idle dispatcher's statements (the
    // next due time, the claim floor) read a few index pages, not the backlog.
    void idleStatementsDoNotReadThePausedBacklog() {
        store::PauseStore pauses(m_db);
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        QVERIFY(insertPending(m_db, kPaused, QStringLiteral("billing"), QStringLiteral("t"), 60));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        store::OutboxStore store(m_db);
        const auto due = store.timeUntilNextDue();
        QVERIFY2(due.ok(), qPrintable(due.errorMessage()));
        QVERIFY(!due->has_value());
        const auto floor = store.claimFloor();
        QVERIFY2(floor.ok(), qPrintable(floor.errorMessage()));
        QVERIFY(floor->isEmpty());

        const IndexRead nextDue =
            readOf(explainAnalyze(m_db, store::OutboxStore::statement(Statement::NextDue), {}),
                   QStringLiteral("outbox_events_pending_due_idx"));
        QVERIFY2(nextDue.rows == 0 && nextDue.buffers >= 0 && nextDue.buffers <= 5,
                 qPrintable(nextDue.plan));
        const IndexRead floorRead =
            readOf(explainAnalyze(m_db, store::OutboxStore::statement(Statement::Floor),
                                  QStringLiteral("(1000)")),
                   QStringLiteral("outbox_events_claim_idx"));
        QVERIFY2(floorRead.rows == 0 && floorRead.buffers >= 0 && floorRead.buffers <= 5,
                 qPrintable(floorRead.plan));

        // The gauges still count them as pending, none as due.
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        QVERIFY(info.ok());
        store::Session session(info.value(), store::Session::Options{});
        QVERIFY(session.open().ok());
        const auto gauges = store::readQueueGauges(session);
        QVERIFY2(gauges.ok(), qPrintable(gauges.errorMessage()));
        QCOMPARE(gauges->pending, qint64(kPaused));
        QCOMPARE(gauges->dueNow, qint64(0));
    }

    // Resuming releases the whole backlog, oldest first, and it is claimed
    // at once; a resume whose client stopped after the pause ended is
    // finished by dispatchers.
    void resumeReleasesTheBacklog() {
        store::PauseStore pauses(m_db);
        QVERIFY(insertPending(m_db, 12000, QStringLiteral("billing"), QStringLiteral("t"), 60));
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        QCOMPARE(heldCount(), qint64(12000));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_pause_work")),
                 QStringLiteral("0"));
        store::OutboxStore store(m_db);
        store::ClaimOptions options;
        options.batchSize = 100;
        options.maxAttempts = 10;
        options.lease = core::Millis(30000);
        QVERIFY(store.claimBatch(core::createUuidV7(), options)->isEmpty());

        const auto resumed = pauses.resume(QStringLiteral("billing"), std::nullopt, kActor);
        QVERIFY2(resumed.ok(), qPrintable(resumed.errorMessage()));
        QCOMPARE(resumed.value(), qint64(1));
        QCOMPARE(heldCount(), qint64(0));
        QCOMPARE(store.claimBatch(core::createUuidV7(), options)->size(), 100);

        // Paused again; then only the pause ends (the client went away).
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        QCOMPARE(heldCount(), qint64(11900));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_resume('billing', NULL)")));
        QCOMPARE(heldCount(), qint64(11900));
        const QString oldest = sqlScalar(
            m_db, QStringLiteral("SELECT id FROM outbox_events WHERE held ORDER BY created_at, id"
                                 " LIMIT 1"));
        const auto first = store.continuePauseWork(2000);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QCOMPARE(first.value(), qint64(2000));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT held FROM outbox_events WHERE id = ?"),
                           {oldest}),
                 QStringLiteral("false"));
        finishPauseWork(2000);
        QCOMPARE(heldCount(), qint64(0));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_pause_work")),
                 QStringLiteral("0"));
    }

    // Resuming a topic releases that topic only while its namespace stays
    // paused, and the namespace's resume releases the rest.
    void topicAndNamespacePauses() {
        store::PauseStore pauses(m_db);
        QVERIFY(insertPending(m_db, 300, QStringLiteral("shop"), QStringLiteral("a"), 60));
        QVERIFY(insertPending(m_db, 200, QStringLiteral("shop"), QStringLiteral("b"), 60));
        QVERIFY(
            pauses.pause(QStringLiteral("shop"), QStringLiteral("a"), QStringLiteral("x"), kActor)
                .ok());
        QCOMPARE(heldCount(), qint64(300));
        QVERIFY(
            pauses.pause(QStringLiteral("shop"), std::nullopt, QStringLiteral("x"), kActor).ok());
        QCOMPARE(heldCount(), qint64(500));
        QVERIFY(pauses.resume(QStringLiteral("shop"), QStringLiteral("a"), kActor).ok());
        QCOMPARE(heldCount(), qint64(500)); // the namespace is still paused
        QVERIFY(
            pauses.pause(QStringLiteral("shop"), QStringLiteral("a"), QStringLiteral("x"), kActor)
                .ok());
        // The namespace's pause ends, its release left to the dispatchers.
        QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_pauses WHERE topic IS NULL")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_pause_work (namespace, hold)"
                                             " VALUES ('shop', false)")));
        finishPauseWork(50);
        // Topic a is still paused on its own: only b was released.
        QCOMPARE(heldCount(), qint64(300));
        QVERIFY(pauses.resume(QStringLiteral("shop"), std::nullopt, kActor).ok());
        QCOMPARE(heldCount(), qint64(0));
    }

    // Every way an event becomes pending holds it while its scope is paused;
    // leaving pending ends the hold.
    void writersKeepTheHold() {
        store::PauseStore pauses(m_db);
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        const QString enqueued =
            sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('billing', 't', '{}')"));
        const QString other =
            sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_enqueue('shipping', 't', '{}')"));
        const auto held = [&](const QString &id) {
            return sqlScalar(m_db, QStringLiteral("SELECT held FROM outbox_events WHERE id = ?"),
                             {id});
        };
        QCOMPARE(held(enqueued), QStringLiteral("true"));
        QCOMPARE(held(other), QStringLiteral("false"));

        // A dead event requeued, and one replayed.
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                             " payload, status, attempts) VALUES"
                                             " (outbox_uuid_v7(), 'billing', 'dead', '{}', 'dead',"
                                             " 3)")));
        store::OperatorStore operators(m_db, kActor);
        store::EventFilter dead;
        dead.status = core::Status::Dead;
        QVERIFY(operators.replay(dead).ok());
        QVERIFY(operators.requeue(dead).ok());
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events"
                                                " WHERE topic = 'dead' AND status = 'pending'"
                                                " AND held")),
                 QStringLiteral("2"));

        // The sweep ends a held event at the attempt limit (the flag stays
        // with the dead event, which nothing reads); only pending and dead
        // events can carry it.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET attempts = 5"
                                       " WHERE id = ?"),
                        {enqueued}));
        store::OutboxStore store(m_db);
        QCOMPARE(store.deadSweep(5, {}, store::SweepScope::All).value(), qint64(1));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT status FROM outbox_events WHERE id = ?"),
                           {enqueued}),
                 QStringLiteral("dead"));
        QSqlQuery hold(m_db);
        QVERIFY(!hold.exec(QStringLiteral("UPDATE outbox_events SET held = true, status ="
                                          " 'delivered' WHERE id = '%1'")
                               .arg(enqueued)));
        QVERIFY2(hold.lastError().text().contains(QLatin1String("outbox_events_held_check")),
                 qPrintable(hold.lastError().text()));

        // The pending and dead views still show what is paused.
        store::EventQueries queries(m_db);
        store::PageRequest request;
        request.filter.status = core::Status::Pending;
        request.limit = 10;
        const auto page = queries.page(request);
        QVERIFY2(page.ok(), qPrintable(page.errorMessage()));
        QCOMPARE(page->rows.size(), 3);
        const auto counts = queries.counts(100);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(counts->pending + counts->retrying, qint64(3));
    }

    // Pages of pending events read the claim index and the index of held
    // events in key order, merged, never the table.
    void pagesOfPendingEventsUseBothIndexes() {
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                             " payload, status, attempts, delivered_at)"
                                             " SELECT outbox_uuid_v7(), 'x', 't', '{}',"
                                             " 'delivered', 1, now()"
                                             " FROM generate_series(1, 50000)")));
        store::PauseStore pauses(m_db);
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        QVERIFY(insertPending(m_db, 5000, QStringLiteral("billing"), QStringLiteral("t"), 60));
        QVERIFY(insertPending(m_db, 5000, QStringLiteral("shipping"), QStringLiteral("t"), 30));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        store::EventQueries queries(m_db);
        for (const bool pendingOnly : {true, false}) {
            store::PageRequest request;
            if (pendingOnly)
                request.filter.status = core::Status::Pending;
            request.order = store::SortOrder::OldestFirst;
            request.limit = 50;
            const auto page = queries.page(request);
            QVERIFY2(page.ok(), qPrintable(page.errorMessage()));
            QCOMPARE(page->rows.first().nameSpace, QStringLiteral("billing"));
            const auto plan = queries.explainPage(request);
            QVERIFY2(plan.ok(), qPrintable(plan.errorMessage()));
            for (const char *part :
                 {"Merge Append", "outbox_events_claim_idx", "outbox_events_held_idx"})
                QVERIFY2(plan->contains(QLatin1String(part)), qPrintable(plan.value()));
            QVERIFY2(!plan->contains(QLatin1String("Seq Scan")), qPrintable(plan.value()));
        }
    }

    void orderedClaimDoesNotVisitBlockedEvents_data() {
        QTest::addColumn<bool>("deadFirst");
        QTest::newRow("enqueued behind a dead event") << true;
        QTest::newRow("blocked when the head died") << false;
    }

    // Under aggregate order, 50,000 events queued behind dead events of their
    // aggregates, older than everything else: the ordered claim's walk of
    // its index reads what it reads without them; the unordered claim still
    // delivers them; requeuing or purging the dead events unblocks them.
    void orderedClaimDoesNotVisitBlockedEvents() {
        QFETCH(bool, deadFirst);
        QVERIFY(insertPending(m_db, 1000, QStringLiteral("shipping"), QStringLiteral("parcel.sent"),
                              60, true));
        // The baseline has a dead event too (of an aggregate nothing follows).
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                         " payload, status, aggregate_type, aggregate_id,"
                                         " created_at) VALUES (outbox_uuid_v7(), 'x', 'y',"
                                         " '{}', 'dead', 'other', '1', now() - interval '2h')")));
        QVERIFY(sqlExec(m_db, store::OutboxStore::sessionSettings()));
        const IndexRead idle = claimRead(m_db, core::Ordering::Aggregate);

        // One head per aggregate of invoice.paid (aggregate ids 0..999),
        // created before its 50 followers.
        const QString heads =
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                           " aggregate_type, aggregate_id, created_at)"
                           " SELECT outbox_uuid_v7(), 'billing', 'invoice.paid', '{}', '%1',"
                           " 'invoice.paid', g::text, now() - interval '3h'"
                           " FROM generate_series(0, 999) AS g");
        const int followers = kPaused;
        if (deadFirst) {
            QVERIFY(sqlExec(m_db, heads.arg(QLatin1String("dead"))));
            QVERIFY(insertPending(m_db, followers, QStringLiteral("billing"),
                                  QStringLiteral("invoice.paid"), 3600, true));
        } else {
            QVERIFY(sqlExec(m_db, heads.arg(QLatin1String("pending"))));
            QVERIFY(insertPending(m_db, followers, QStringLiteral("billing"),
                                  QStringLiteral("invoice.paid"), 3600, true));
            QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'dead'"
                                                 " WHERE created_at < now() - interval '2h30m'")));
        }
        const auto blocked = [&] {
            return sqlScalar(m_db,
                             QStringLiteral("SELECT count(*) FROM outbox_events WHERE blocked"))
                .toLongLong();
        };
        QCOMPARE(blocked(), qint64(followers));

        const IndexRead behind = claimRead(m_db, core::Ordering::Aggregate);
        QVERIFY2(behind.rows == 100, qPrintable(behind.plan));
        QVERIFY2(behind.filtered == 0, qPrintable(behind.plan));
        QVERIFY2(behind.buffers <= 2 * idle.buffers + 20,
                 qPrintable(QStringLiteral("%1 buffers with %2 blocked, %3 without: %4")
                                .arg(behind.buffers)
                                .arg(followers)
                                .arg(idle.buffers)
                                .arg(behind.plan)));

        store::OutboxStore store(m_db);
        store::ClaimOptions options;
        options.batchSize = 100;
        options.maxAttempts = 10;
        options.lease = core::Millis(30000);
        options.ordering = core::Ordering::Aggregate;
        auto claimed = store.claimBatch(core::createUuidV7(), options);
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QCOMPARE(claimed->size(), 100);
        for (const store::ClaimedEvent &event : claimed.value())
            QCOMPARE(event.nameSpace, QStringLiteral("shipping"));
        options.ordering = core::Ordering::None; // delivers what is blocked, oldest first
        claimed = store.claimBatch(core::createUuidV7(), options);
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QCOMPARE(claimed->size(), 100);
        QCOMPARE(claimed->first().nameSpace, QStringLiteral("billing"));

        // Requeued heads (aggregates 0..249) and purged ones (250..499) let
        // their followers go; the rest stay blocked.
        store::OperatorStore operators(m_db, kActor);
        const auto headsOf = [&](int from, int to) {
            store::EventFilter filter;
            const QStringList ids = testing::sqlColumn(
                m_db,
                QStringLiteral("SELECT id FROM outbox_events WHERE status = 'dead'"
                               " AND namespace = 'billing'"
                               " AND aggregate_id::integer BETWEEN ? AND ?"),
                {from, to});
            for (const QString &id : ids)
                filter.ids << QUuid::fromString(id);
            return filter;
        };
        QVERIFY(operators.requeue(headsOf(0, 249)).ok());
        QVERIFY(operators.purge(headsOf(250, 499)).ok());
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events"
                                           " WHERE status = 'dead' AND namespace = 'billing'")),
            QStringLiteral("500"));
        QVERIFY(sqlExec(m_db, QStringLiteral("RESET ALL")));
        QCOMPARE(blocked(),
                 sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events e"
                                                " WHERE e.status IN ('pending', 'processing')"
                                                " AND e.aggregate_id::integer >= 500"
                                                " AND e.aggregate_type = 'invoice.paid'"))
                     .toLongLong());
    }

    // An ordered dispatcher with only events behind dead ones left waits for
    // its poll instead of claiming again at once; an unordered one has them
    // due now.
    void orderedDispatcherIdlesBehindDeadEvents() {
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                         " payload, status, aggregate_type, aggregate_id,"
                                         " created_at) VALUES (outbox_uuid_v7(), 'billing',"
                                         " 't', '{}', 'dead', 't', '7', now() - interval '2h')")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_enqueue('billing', 't', '{}', NULL,"
                                             " NULL, 't', '7') FROM generate_series(1, 1000)")));
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE blocked")),
            QStringLiteral("1000"));
        store::OutboxStore store(m_db);
        const auto ordered = store.timeUntilNextDue({}, core::Ordering::Aggregate);
        QVERIFY2(ordered.ok(), qPrintable(ordered.errorMessage()));
        QVERIFY(!ordered->has_value());
        const auto unordered = store.timeUntilNextDue({}, core::Ordering::None);
        QVERIFY2(unordered.ok(), qPrintable(unordered.errorMessage()));
        QCOMPARE(unordered.value(), std::optional<core::Millis>(core::Millis(0)));
    }

    // The dispatcher login may finish queued holding and releasing, which
    // only makes `held` agree with the pauses; it cannot release a paused
    // event itself.
    void dispatchersCannotUnpause() {
        QVERIFY(insertPending(m_db, 10, QStringLiteral("billing"), QStringLiteral("t"), 60));
        store::PauseStore pauses(m_db);
        QVERIFY(
            pauses.pause(QStringLiteral("billing"), std::nullopt, QStringLiteral("down"), kActor)
                .ok());
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_pause_work (namespace, hold)"
                                             " VALUES ('billing', false)")));
        QSqlDatabase dispatcher = m_pg->open(m_dbName);
        QVERIFY(dispatcher.isOpen());
        QVERIFY(sqlExec(dispatcher, QStringLiteral("SET ROLE tst_paused_dispatcher")));
        QSqlQuery update(dispatcher);
        QVERIFY(!update.exec(QStringLiteral("UPDATE outbox_events SET held = false")));
        QVERIFY2(update.lastError().text().contains(QLatin1String("permission denied")),
                 qPrintable(update.lastError().text()));
        store::OutboxStore store(dispatcher);
        const auto step = store.continuePauseWork(100);
        QVERIFY2(step.ok(), qPrintable(step.errorMessage()));
        QCOMPARE(step.value(), qint64(0));
        QCOMPARE(heldCount(), qint64(10));
    }
};

QTEST_GUILESS_MAIN(TestPausedBacklog)
#include "tst_pausedbacklog.moc"
