// OperatorStore: every action changes only the states it allows, in audited
// batches, counts rows that moved meanwhile, and can be stopped, limited and
// throttled. Real PostgreSQL, a fresh migrated database per test.

#include "core/conninfo.h"
#include "store/database.h"
#include "store/operations.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QSignalSpy>
#include <QSqlDriver>
#include <QSqlQuery>
#include <QSysInfo>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

namespace {

using namespace std::chrono_literals;

const store::Actor kActor{QStringLiteral("alice"), QStringLiteral("ops-laptop"),
                          QStringLiteral("tst_operations")};

// `count` rows in one statement (so they share created_at; random ids break
// the tie), in a state that satisfies the table's constraints.
bool insertEvents(QSqlDatabase db, int count, const QString &status,
                  const QString &nameSpace = QStringLiteral("billing"),
                  const QString &topic = QStringLiteral("invoice.paid")) {
    return sqlExec(
        db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status, "
                       "attempts, last_error,"
                       " locked_by, locked_until, delivered_at)"
                       " SELECT gen_random_uuid(), ?, ?, jsonb_build_object('n', g), ?::text,"
                       "  CASE WHEN ?::text = 'pending' THEN 0 ELSE 3 END,"
                       "  CASE WHEN ?::text = 'dead' THEN 'boom ' || g END,"
                       "  CASE WHEN ?::text = 'processing' THEN gen_random_uuid() END,"
                       "  CASE WHEN ?::text = 'processing' THEN now() + interval '5 minutes' END,"
                       "  CASE WHEN ?::text = 'delivered' THEN now() END"
                       " FROM generate_series(1, ?) g"),
        {nameSpace, topic, status, status, status, status, status, status, count});
}

// Dead rows whose created_at steps by 1 ms, so that their order is known.
bool insertOrderedDead(QSqlDatabase db, int count) {
    return sqlExec(
        db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                       " attempts, last_error, created_at)"
                       " SELECT gen_random_uuid(), 'billing', 'invoice.paid', '{}',"
                       "  'dead', 5, 'boom', timestamptz '2024-01-01 00:00:00+00'"
                       "  + g * interval '1 millisecond'"
                       " FROM generate_series(1, ?) g"),
        {count});
}

QString statusCounts(QSqlDatabase db) {
    return sqlScalar(db, QStringLiteral("SELECT coalesce(string_agg(status || '=' || n, ','"
                                        " ORDER BY status), '') FROM (SELECT status, count(*) n"
                                        " FROM outbox_events GROUP BY status) s"));
}

// A fingerprint of every row in the given states, to prove they were not touched.
QString fingerprint(QSqlDatabase db, const QString &states) {
    return sqlScalar(db, QStringLiteral("SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY id),"
                                        " '')) FROM outbox_events t WHERE status IN (") +
                             states + QLatin1Char(')'));
}

EventFilter status(core::Status s) {
    EventFilter f;
    f.status = s;
    return f;
}

qint64 number(QSqlDatabase db, const QString &sql, const QVariantList &values = {}) {
    bool ok = false;
    const qint64 n = sqlScalar(db, sql, values).toLongLong(&ok);
    return ok ? n : -1;
}

} // namespace

class TestOperations final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOperations()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    QStringList m_extra;

    // Another session on the test database, closed before the database is dropped.
    QSqlDatabase openExtra() {
        const QString name = store::uniqueConnectionName(QStringLiteral("extra"));
        m_extra << name;
        return m_pg->open(m_dbName, name);
    }

private Q_SLOTS:
    void cleanup() {
        for (const QString &name : std::as_const(m_extra))
            m_pg->close(name);
        m_extra.clear();
        dropFreshDb();
    }

    void actorFromEnvironment() {
        qputenv("USER", "operator-x");
        const store::Actor actor = store::Actor::fromEnvironment(QStringLiteral("outboxctl"));
        QCOMPARE(actor.osUser, QStringLiteral("operator-x"));
        QCOMPARE(actor.host, QSysInfo::machineHostName());
        QCOMPARE(actor.application, QStringLiteral("outboxctl"));
        QCOMPARE(store::actionName(Action::RetryNow), QStringLiteral("retry"));
        QCOMPARE(store::actionName(Action::Replay), QStringLiteral("replay"));
    }

    void requeueTouchesOnlyDead() {
        for (const char *s : {"pending", "processing", "delivered", "dead"})
            QVERIFY(insertEvents(m_db, 5, QLatin1String(s)));
        const QString others =
            fingerprint(m_db, QStringLiteral("'pending','processing','delivered'"));
        const QStringList deadIds =
            sqlScalar(m_db, QStringLiteral("SELECT string_agg(id::text, ',' ORDER BY id) FROM "
                                           "outbox_events WHERE status = 'dead'"))
                .split(QLatin1Char(','));

        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{});
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->matched, 5);
        QCOMPARE(result->changed, 5);
        QCOMPARE(result->skipped, 0);
        QCOMPARE(result->sample.size(), 5);
        QVERIFY(!result->cancelled);
        QCOMPARE(statusCounts(m_db), QStringLiteral("delivered=5,pending=10,processing=5"));
        // The rows that were not dead are exactly as before (untouched).
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT md5(coalesce(string_agg(t::text, '|' ORDER"
                                          " BY id), '')) FROM outbox_events t WHERE NOT"
                                          " (id = ANY(?::uuid[]))"),
                           {QString(QLatin1Char('{') + deadIds.join(QLatin1Char(',')) +
                                    QLatin1Char('}'))}),
                 others);
        // Requeued: attempts reset, due now, no lease, last error kept.
        QCOMPARE(
            number(m_db,
                   QStringLiteral("SELECT count(*) FROM outbox_events WHERE id ="
                                  " ANY(?::uuid[]) AND status = 'pending' AND attempts ="
                                  " 0 AND next_attempt_at <= now() AND locked_by IS NULL"
                                  " AND locked_until IS NULL AND last_error LIKE 'boom %'"
                                  " AND updated_at >= created_at"),
                   {QString(QLatin1Char('{') + deadIds.join(QLatin1Char(',')) + QLatin1Char('}'))}),
            5);
    }

    void actionsRefuseStatesTheyDoNotAllow_data() {
        QTest::addColumn<Action>("action");
        QTest::addColumn<core::Status>("status");
        QTest::newRow("requeue pending") << Action::Requeue << core::Status::Pending;
        QTest::newRow("requeue delivered") << Action::Requeue << core::Status::Delivered;
        QTest::newRow("retry dead") << Action::RetryNow << core::Status::Dead;
        QTest::newRow("retry processing") << Action::RetryNow << core::Status::Processing;
        QTest::newRow("cancel processing") << Action::Cancel << core::Status::Processing;
        QTest::newRow("cancel delivered") << Action::Cancel << core::Status::Delivered;
        QTest::newRow("purge pending") << Action::Purge << core::Status::Pending;
        QTest::newRow("purge processing") << Action::Purge << core::Status::Processing;
        QTest::newRow("replay pending") << Action::Replay << core::Status::Pending;
        QTest::newRow("replay processing") << Action::Replay << core::Status::Processing;
    }

    // The filter names a state the action may not touch: nothing happens,
    // and the attempt is still audited.
    void actionsRefuseStatesTheyDoNotAllow() {
        QFETCH(Action, action);
        QFETCH(core::Status, status);
        for (const char *s : {"pending", "processing", "delivered", "dead"})
            QVERIFY(insertEvents(m_db, 3, QLatin1String(s)));
        const QString before =
            fingerprint(m_db, QStringLiteral("'pending','processing','delivered','dead'"));
        const auto result = OperatorStore(m_db, kActor).run(action, ::status(status));
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->matched, 0);
        QCOMPARE(result->changed, 0);
        QCOMPARE(fingerprint(m_db, QStringLiteral("'pending','processing','delivered','dead'")),
                 before);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 12);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT action || ':' || affected || ':' || "
                                                "(finished_at IS NOT NULL) FROM outbox_audit")),
                 store::actionName(action) + QStringLiteral(":0:true"));
    }

    void retryNowTouchesOnlyPending() {
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("pending")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now() +"
                                             " interval '1 hour', attempts = 2")));
        // One overdue row keeps its (earlier) due time.
        QVERIFY(
            sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at ="
                                         " timestamptz '2020-01-01 00:00:00+00' WHERE id ="
                                         " (SELECT id FROM outbox_events ORDER BY id LIMIT 1)")));
        for (const char *s : {"processing", "delivered", "dead"})
            QVERIFY(insertEvents(m_db, 3, QLatin1String(s)));
        const QString others = fingerprint(m_db, QStringLiteral("'processing','delivered','dead'"));

        const auto result = OperatorStore(m_db, kActor).retryNow(EventFilter{});
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 4);
        QCOMPARE(fingerprint(m_db, QStringLiteral("'processing','delivered','dead'")), others);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'pending' AND attempts = 2 AND next_attempt_at <="
                                             " now()")),
                 4);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT min(next_attempt_at) = timestamptz"
                                                " '2020-01-01 00:00:00+00' FROM outbox_events")),
                 QStringLiteral("true"));
    }

    void cancelTouchesPendingAndDead() {
        for (const char *s : {"pending", "processing", "delivered", "dead"})
            QVERIFY(insertEvents(m_db, 3, QLatin1String(s)));
        const QString others = fingerprint(m_db, QStringLiteral("'processing','delivered'"));
        BulkOptions options;
        options.reason = QStringLiteral("customer withdrew");
        OperatorStore ops(m_db, kActor);
        const auto result = ops.cancel(EventFilter{}, options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->matched, 6);
        QCOMPARE(result->changed, 6);
        QCOMPARE(statusCounts(m_db), QStringLiteral("dead=6,delivered=3,processing=3"));
        QCOMPARE(fingerprint(m_db, QStringLiteral("'processing','delivered'")), others);
        const QString user = sqlScalar(m_db, QStringLiteral("SELECT session_user"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(DISTINCT last_error, '|') FROM"
                                                " outbox_events WHERE status = 'dead'")),
                 QStringLiteral("cancelled by %1/alice@ops-laptop: customer withdrew").arg(user));
    }

    void purgeNeverTouchesPendingOrProcessing_data() {
        QTest::addColumn<EventFilter>("filter");
        QTest::addColumn<qint64>("purged");
        QTest::newRow("everything") << EventFilter{} << qint64(6);
        QTest::newRow("status pending") << status(core::Status::Pending) << qint64(0);
        QTest::newRow("status processing") << status(core::Status::Processing) << qint64(0);
        QTest::newRow("status delivered") << status(core::Status::Delivered) << qint64(3);
        EventFilter old;
        old.olderThan = 0ms;
        QTest::newRow("older than 0") << old << qint64(6);
    }

    void purgeNeverTouchesPendingOrProcessing() {
        QFETCH(EventFilter, filter);
        QFETCH(qint64, purged);
        for (const char *s : {"pending", "processing", "delivered", "dead"})
            QVERIFY(insertEvents(m_db, 3, QLatin1String(s)));
        // Every pending/processing id, named explicitly, must survive too.
        const QString liveIds = sqlScalar(
            m_db, QStringLiteral("SELECT '{' || string_agg(id::text, ',') || '}' FROM"
                                 " outbox_events WHERE status IN ('pending','processing')"));
        const QString live = fingerprint(m_db, QStringLiteral("'pending','processing'"));
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, error)"
                                         " SELECT id, 1, 'x' FROM outbox_events")));

        OperatorStore ops(m_db, kActor);
        const auto result = ops.purge(filter);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, purged);
        EventFilter byId;
        byId.ids = {};
        for (const QString &id : liveIds.mid(1, liveIds.size() - 2).split(QLatin1Char(',')))
            byId.ids << QUuid::fromString(id);
        QCOMPARE(byId.ids.size(), 6);
        const auto byIdResult = ops.purge(byId);
        QVERIFY2(byIdResult.ok(), qPrintable(byIdResult.errorMessage()));
        QCOMPARE(byIdResult->changed, 0);

        QCOMPARE(fingerprint(m_db, QStringLiteral("'pending','processing'")), live);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status IN"
                                             " ('pending','processing')")),
                 6);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 12 - purged);
        // Attempts of purged rows go with them; the others stay.
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts")), 12 - purged);
    }

    void purgeByAge() {
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("dead")));
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("pending")));
        // Ages 0..3 days per state, by row number; the pending rows are old too.
        QVERIFY(sqlExec(
            m_db, QStringLiteral("UPDATE outbox_events e SET updated_at = now() - r.age * interval"
                                 " '1 day' - interval '1 minute' FROM (SELECT id, (row_number()"
                                 " OVER (PARTITION BY status ORDER BY id) - 1) AS age FROM"
                                 " outbox_events) r WHERE r.id = e.id")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET updated_at = now() -"
                                             " interval '30 days' WHERE status = 'pending'")));
        EventFilter filter;
        filter.olderThan = 48h;
        const auto result = OperatorStore(m_db, kActor).purge(filter);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        // Ages 2 and 3 days (minus a minute more) of each terminal state.
        QCOMPARE(result->changed, 4);
        QCOMPARE(statusCounts(m_db), QStringLiteral("dead=2,delivered=2,pending=2"));
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status <>"
                                             " 'pending' AND updated_at < now() - interval '2"
                                             " days'")),
                 0);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT filter FROM outbox_audit")),
                 QStringLiteral("older than 2d"));
    }

    void replayCreatesLinkedEvent() {
        const QUuid tenant =
            QUuid::fromString(QLatin1String("10000000-aaaa-4bbb-8ccc-000000000001"));
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral(
                "INSERT INTO outbox_events (id, namespace, topic, aggregate_type, aggregate_id,"
                " tenant_id, dedupe_key, payload, status, attempts, delivered_at)"
                " VALUES (gen_random_uuid(), 'billing', 'invoice.paid', 'invoice', 'inv-7',"
                " ?::uuid, ?, '{\"amount\": 42}', 'delivered', 1, now())"),
            {tenant.toString(QUuid::WithoutBraces),
             QString(tenant.toString(QUuid::WithoutBraces) + QStringLiteral("/inv-7"))}));
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("pending")));
        const QString original = sqlScalar(
            m_db, QStringLiteral("SELECT id FROM outbox_events WHERE status = 'delivered'"));
        const QString before = fingerprint(m_db, QStringLiteral("'delivered','pending'"));

        EventFilter filter;
        filter.ids = {QUuid::fromString(original)};
        OperatorStore ops(m_db, kActor);
        const auto result = ops.replay(filter);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 1);
        QCOMPARE(result->sample, QList<QUuid>{QUuid::fromString(original)});
        QCOMPARE(result->created.size(), 1);
        const QString created = result->created.first().toString(QUuid::WithoutBraces);
        QVERIFY(created != original);

        // The original is untouched; the copy is a new pending event linked to it.
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT md5(coalesce(string_agg(t::text, '|' ORDER"
                                          " BY id), '')) FROM outbox_events t WHERE id <>"
                                          " ?::uuid"),
                           {created}),
                 before);
        QCOMPARE(
            sqlScalar(m_db,
                      QStringLiteral(
                          "SELECT concat_ws(';', c.status, c.attempts, c.replay_of = o.id,"
                          " c.dedupe_key IS NULL, c.namespace = o.namespace, c.topic = o.topic,"
                          " c.aggregate_type = o.aggregate_type, c.aggregate_id ="
                          " o.aggregate_id, c.tenant_id = o.tenant_id, c.payload = o.payload,"
                          " c.delivered_at IS NULL, c.next_attempt_at <= now())"
                          " FROM outbox_events c JOIN outbox_events o ON o.id = ?::uuid"
                          " WHERE c.id = ?::uuid"),
                      {original, created}),
            QStringLiteral("pending;0;t;t;t;t;t;t;t;t;t;t"));
        // Both ends are in the audit trail of the action.
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT string_agg(event_id::text, ',' ORDER BY"
                                          " event_id = ?::uuid DESC) FROM outbox_audit_events"),
                           {original}),
                 original + QLatin1Char(',') + created);
        // Replaying again (asked for explicitly: tst_operatorrules) makes a
        // second copy: the original's key is not reused.
        BulkOptions explicitly;
        explicitly.again = true;
        const auto again = ops.replay(filter, explicitly);
        QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
        QCOMPARE(number(m_db,
                        QStringLiteral("SELECT count(*) FROM outbox_events WHERE replay_of ="
                                       " ?::uuid"),
                        {original}),
                 2);
    }

    void actionsWakeDispatchers_data() {
        QTest::addColumn<Action>("action");
        QTest::addColumn<QString>("state");
        QTest::addColumn<bool>("notifies");
        QTest::newRow("requeue") << Action::Requeue << QStringLiteral("dead") << true;
        QTest::newRow("retry") << Action::RetryNow << QStringLiteral("pending") << true;
        QTest::newRow("replay") << Action::Replay << QStringLiteral("delivered") << true;
        QTest::newRow("purge") << Action::Purge << QStringLiteral("delivered") << false;
    }

    void actionsWakeDispatchers() {
        QFETCH(Action, action);
        QFETCH(QString, state);
        QFETCH(bool, notifies);
        QVERIFY(insertEvents(m_db, 3, state));
        QSqlDatabase listener = openExtra();
        QVERIFY(listener.isOpen());
        QVERIFY(listener.driver()->subscribeToNotification(store::kNotifyChannel));
        QSignalSpy spy(listener.driver(), &QSqlDriver::notification);
        const auto result = OperatorStore(m_db, kActor).run(action, EventFilter{});
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 3);
        if (notifies) {
            QTRY_VERIFY_WITH_TIMEOUT(spy.count() >= 1, 10000);
        } else {
            // A round trip on the listener delivers anything already sent.
            QVERIFY(sqlExec(listener, QStringLiteral("SELECT 1")));
            QTest::qWait(200);
            QCOMPARE(spy.count(), 0);
        }
    }

    void dryRunChangesNothing() {
        QVERIFY(insertOrderedDead(m_db, 30));
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("pending")));
        const QString before = fingerprint(m_db, QStringLiteral("'pending','dead'"));
        BulkOptions options;
        options.dryRun = true;
        options.sampleSize = 4;
        OperatorStore ops(m_db, kActor);
        for (Action action :
             {Action::Requeue, Action::Cancel, Action::Purge, Action::Replay, Action::RetryNow}) {
            const auto result = ops.run(action, EventFilter{}, options);
            QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
            QVERIFY(result->dryRun);
            QCOMPARE(result->changed, 0);
            QCOMPARE(result->auditId, 0);
            QCOMPARE(result->sample.size(), 4);
        }
        const auto requeue = ops.requeue(EventFilter{}, options);
        QVERIFY(requeue.ok());
        QCOMPARE(requeue->matched, 30);
        // The sample is the first rows in (created_at, id) order.
        QCOMPARE(QUuid(requeue->sample.first()).toString(QUuid::WithoutBraces),
                 sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_events WHERE status = 'dead'"
                                                " ORDER BY created_at, id LIMIT 1")));
        const auto cancel = ops.cancel(EventFilter{}, options);
        QVERIFY(cancel.ok());
        QCOMPARE(cancel->matched, 35);
        QCOMPARE(fingerprint(m_db, QStringLiteral("'pending','dead'")), before);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit")), 0);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit_events")), 0);
    }

    void auditRecordsTheAction() {
        QVERIFY(insertOrderedDead(m_db, 250));
        QVERIFY(insertEvents(m_db, 10, QStringLiteral("dead"), QStringLiteral("shipping")));
        EventFilter filter;
        filter.status = core::Status::Dead;
        filter.nameSpace = QStringLiteral("billing");
        BulkOptions options;
        options.batchSize = 100;
        options.reason = QStringLiteral("runner fixed");
        OperatorStore ops(m_db, kActor);
        const auto result = ops.requeue(filter, options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 250);
        QVERIFY(result->auditId > 0);
        const QString user = sqlScalar(m_db, QStringLiteral("SELECT session_user"));
        QCOMPARE(
            sqlScalar(m_db,
                      QStringLiteral("SELECT concat_ws('|', action, filter, affected, skipped,"
                                     " db_user, os_user, host, application, finished_at >= at)"
                                     " FROM outbox_audit WHERE id = ?"),
                      {result->auditId}),
            QStringLiteral("requeue|status=dead namespace=billing reason: runner fixed|250|0|") +
                user + QStringLiteral("|alice|ops-laptop|tst_operations|t"));
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit")), 1);
        // Exactly the changed events, and nothing else.
        QCOMPARE(number(m_db,
                        QStringLiteral("SELECT count(*) FROM outbox_audit_events ae JOIN"
                                       " outbox_events e ON e.id = ae.event_id WHERE"
                                       " ae.audit_id = ? AND e.namespace = 'billing' AND"
                                       " e.status = 'pending'"),
                        {result->auditId}),
                 250);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit_events")), 250);
    }

    // A requeue of 1000 rows in batches of 100; after the first batch another
    // session moves rows out of dead, out and back in, adds new dead rows and
    // locks some: every matched row that was not changed is counted as skipped,
    // rows that appeared meanwhile are left alone.
    void skippedCountsRowsThatMoved() {
        QVERIFY(insertOrderedDead(m_db, 1000));
        QSqlDatabase other = openExtra();
        QVERIFY(other.isOpen());
        QSqlDatabase locker = openExtra();
        QVERIFY(locker.isOpen());
        // Rows are numbered by created_at: 1..1000 ms after the base.
        const auto nth = [](int from, int to) {
            return QStringLiteral("created_at BETWEEN timestamptz '2024-01-01 00:00:00+00' + %1 *"
                                  " interval '1 millisecond' AND timestamptz '2024-01-01"
                                  " 00:00:00+00' + %2 * interval '1 millisecond'")
                .arg(from)
                .arg(to);
        };
        int calls = 0;
        bool sideEffectsOk = true;
        BulkOptions options;
        options.batchSize = 100;
        options.progress = [&](qint64 done, qint64 total) {
            ++calls;
            if (calls == 1) {
                sideEffectsOk =
                    done == 100 && total == 1000 &&
                    // 37 rows later in the run move out of dead.
                    sqlExec(other, QStringLiteral("UPDATE outbox_events SET status ="
                                                  " 'pending', updated_at = now()"
                                                  " WHERE ") +
                                       nth(401, 437)) &&
                    // Two rows go out and come back: they moved.
                    sqlExec(other, QStringLiteral("UPDATE outbox_events SET status ="
                                                  " 'pending', updated_at = now()"
                                                  " WHERE ") +
                                       nth(700, 701)) &&
                    sqlExec(other, QStringLiteral("UPDATE outbox_events SET status ="
                                                  " 'dead', updated_at = now()"
                                                  " WHERE ") +
                                       nth(700, 701)) &&
                    // A new dead row between two old ones, and one after all.
                    sqlExec(other, QStringLiteral("INSERT INTO outbox_events (id, namespace,"
                                                  " topic, payload, status, attempts, created_at)"
                                                  " VALUES (gen_random_uuid(), 'billing', 'x',"
                                                  " '{}', 'dead', 1, timestamptz '2024-01-01"
                                                  " 00:00:00+00' + interval '500500 microseconds'),"
                                                  " (gen_random_uuid(), 'billing', 'x', '{}',"
                                                  " 'dead', 1, now())")) &&
                    // Three rows locked by someone else for the whole run.
                    locker.transaction() &&
                    sqlExec(locker, QStringLiteral("SELECT id FROM outbox_events WHERE ") +
                                        nth(900, 902) + QStringLiteral(" FOR UPDATE"));
            }
            return true;
        };
        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{}, options);
        QVERIFY(locker.rollback());
        QVERIFY(sideEffectsOk);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(calls, 10);
        QCOMPARE(result->matched, 1000);
        QCOMPARE(result->skipped, 37 + 2 + 3);
        QCOMPARE(result->changed, 1000 - 42);
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral("SELECT affected || '/' || skipped FROM outbox_audit")),
            QStringLiteral("958/42"));
        // The new rows and the moved-back rows are still dead; so are the locked ones.
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'dead'")),
                 2 + 2 + 3);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'dead' AND topic = 'x'")),
                 2);
    }

    void progressCanStopTheRun() {
        QVERIFY(insertOrderedDead(m_db, 1000));
        QList<qint64> seen;
        BulkOptions options;
        options.batchSize = 100;
        options.progress = [&](qint64 done, qint64 total) {
            seen << done;
            return !(done >= 300 && total == 1000);
        };
        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{}, options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QVERIFY(result->cancelled);
        QCOMPARE(seen, (QList<qint64>{100, 200, 300}));
        QCOMPARE(result->changed, 300);
        QCOMPARE(result->skipped, 0);
        QCOMPARE(statusCounts(m_db), QStringLiteral("dead=700,pending=300"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT affected || '/' || skipped || '/' ||"
                                                " (finished_at IS NOT NULL) FROM outbox_audit")),
                 QStringLiteral("300/0/true"));
        // The oldest rows went first.
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'pending' AND created_at <= timestamptz '2024-01-01"
                                             " 00:00:00.300+00'")),
                 300);
    }

    void limitCapsTheRun() {
        QVERIFY(insertOrderedDead(m_db, 1000));
        QList<qint64> totals;
        BulkOptions options;
        options.batchSize = 100;
        options.limit = 250;
        options.sampleSize = 3;
        options.progress = [&](qint64, qint64 total) {
            totals << total;
            return true;
        };
        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{}, options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->matched, 1000);
        QCOMPARE(result->changed, 250);
        QCOMPARE(result->sample.size(), 3);
        QCOMPARE(totals, (QList<qint64>{250, 250, 250}));
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'pending' AND created_at <= timestamptz '2024-01-01"
                                             " 00:00:00.250+00'")),
                 250);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT filter FROM outbox_audit")),
                 QStringLiteral("all events limit=250"));
    }

    // Throttled runs use batches of about one second's worth of rows; the
    // timing itself is not asserted.
    void rateLimitUsesSmallBatches() {
        QVERIFY(insertOrderedDead(m_db, 500));
        QList<qint64> seen;
        BulkOptions options;
        options.batchSize = 500;
        options.ratePerSecond = 200;
        options.progress = [&](qint64 done, qint64) {
            seen << done;
            return true;
        };
        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{}, options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 500);
        QCOMPARE(seen, (QList<qint64>{200, 400, 500}));
    }

    void badOptionsAreRefused_data() {
        QTest::addColumn<BulkOptions>("options");
        QTest::addColumn<QString>("message");
        BulkOptions o;
        o.batchSize = 0;
        QTest::newRow("batch") << o << "batch size must be at least 1 (got 0)";
        o = {};
        o.limit = -5;
        QTest::newRow("limit") << o << "limit must be -1";
        o = {};
        o.ratePerSecond = -1;
        QTest::newRow("rate") << o << "rate must be 0";
        o = {};
        o.sampleSize = -1;
        QTest::newRow("sample") << o << "sample size must not be negative";
    }

    void badOptionsAreRefused() {
        QFETCH(BulkOptions, options);
        QFETCH(QString, message);
        QVERIFY(insertOrderedDead(m_db, 3));
        const auto result = OperatorStore(m_db, kActor).requeue(EventFilter{}, options);
        QVERIFY(!result.ok());
        QCOMPARE(result.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(result.errorMessage().startsWith(message), qPrintable(result.errorMessage()));
        QCOMPARE(statusCounts(m_db), QStringLiteral("dead=3"));
    }

    void viewerCannotOperate() {
        QVERIFY(insertOrderedDead(m_db, 3));
        QVERIFY(sqlExec(
            m_db, QStringLiteral("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname"
                                 " = 'ops_viewer_login') THEN CREATE ROLE ops_viewer_login LOGIN"
                                 " IN ROLE outbox_viewer; END IF; IF NOT EXISTS (SELECT 1 FROM"
                                 " pg_roles WHERE rolname = 'ops_operator_login') THEN CREATE ROLE"
                                 " ops_operator_login LOGIN IN ROLE outbox_operator; END IF; END"
                                 " $$")));
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        QVERIFY(info.ok());
        info->user = QStringLiteral("ops_viewer_login");
        const QString viewerName = store::uniqueConnectionName(QStringLiteral("viewer"));
        const QString operatorName = store::uniqueConnectionName(QStringLiteral("operator"));
        {
            auto viewer = store::openDatabase(info.value(), viewerName);
            QVERIFY2(viewer.ok(), qPrintable(viewer.errorMessage()));
            OperatorStore ops(viewer.value(), kActor);
            const auto denied = ops.requeue(EventFilter{});
            QVERIFY(!denied.ok());
            QCOMPARE(denied.errorKind(), core::ErrorKind::PermissionDenied);
            QCOMPARE(statusCounts(m_db), QStringLiteral("dead=3"));
            QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit")), 0);

            info->user = QStringLiteral("ops_operator_login");
            auto op = store::openDatabase(info.value(), operatorName);
            QVERIFY2(op.ok(), qPrintable(op.errorMessage()));
            OperatorStore allowed(op.value(), kActor);
            const auto requeued = allowed.requeue(EventFilter{});
            QVERIFY2(requeued.ok(), qPrintable(requeued.errorMessage()));
            QCOMPARE(requeued->changed, 3);
            QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered'")));
            const auto replayed = allowed.replay(EventFilter{});
            QVERIFY2(replayed.ok(), qPrintable(replayed.errorMessage()));
            QCOMPARE(replayed->changed, 3);
            const auto purged = allowed.purge(EventFilter{});
            QVERIFY2(purged.ok(), qPrintable(purged.errorMessage()));
            QCOMPARE(purged->changed, 3);
            QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(DISTINCT db_user, ',') FROM"
                                                    " outbox_audit")),
                     QStringLiteral("ops_operator_login"));
        }
        store::closeDatabase(viewerName);
        store::closeDatabase(operatorName);
    }
};

QTEST_GUILESS_MAIN(TestOperations)
#include "tst_operations.moc"
