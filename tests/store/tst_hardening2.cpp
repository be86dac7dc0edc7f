// The database half of the second hardening pass (sql/012_hardening.sql,
// sql/roles.sql, Migrator), each rule exercised through SQL as a real login
// granted one outbox_* role: the schema the outbox goes to, the search path
// of its SECURITY DEFINER functions, tenants' dedupe keys, the payload limit
// and the claim's byte budget, the dispatcher's transitions, retention,
// registry bounds, replaying a copy, the audit's texts and the server-side
// limits of each login.

#include "core/uuidv7.h"
#include "store/database.h"
#include "store/migrator.h"
#include "store/operations.h"
#include "store/outboxstore.h"
#include "store/registrystore.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

const QString kTenant = QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2");
const QString kOtherTenant = QStringLiteral("1b4e28ba-2fa1-11d2-883f-0016d3cca427");

// Every event and attempt row, to show that a refused statement changed
// nothing.
QString rowsFingerprint(QSqlDatabase db) {
    return sqlScalar(db, QStringLiteral("SELECT md5(coalesce(string_agg(t, '|' ORDER BY t), ''))"
                                        " FROM (SELECT e::text AS t FROM outbox_events e"
                                        " UNION ALL SELECT a::text FROM outbox_attempts a) r"));
}

// A JSON string payload of exactly `bytes` bytes of JSON text.
QByteArray payloadOf(int bytes) {
    return '"' + QByteArray(bytes - 2, 'x') + '"';
}

} // namespace

class TestHardening2 final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestHardening2()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    QSqlDatabase as(const QString &group) {
        return m_pg->open(m_dbName, {}, QStringLiteral("tst_h2_") + group);
    }

    QString enqueue(QSqlDatabase db, const QString &payload, const QString &key = {},
                    const QString &tenant = {}) {
        return sqlScalar(db,
                         QStringLiteral("SELECT id FROM outbox_enqueue('billing', 'invoice.paid',"
                                        " ?::jsonb, nullif(?, ''), nullif(?, '')::uuid)"),
                         {payload, key, tenant});
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_h2_"),
                             {QStringLiteral("producer"), QStringLiteral("dispatcher"),
                              QStringLiteral("operator"), QStringLiteral("viewer")});
    }

    // Where others may create objects in the outbox's schema, migrate
    // refuses and says how to fix it, also when the schema is up to date.
    void migrateRefusesASchemaOthersMayWrite() {
        const QString name = m_pg->freshDatabase();
        QSqlDatabase db = m_pg->open(name);
        QVERIFY(sqlExec(db, QStringLiteral("GRANT CREATE ON SCHEMA public TO PUBLIC")));
        for (const bool dryRun : {true, false}) {
            const auto refused = store::Migrator(db).migrate(false, dryRun);
            QVERIFY(!refused.ok());
            QCOMPARE(refused.errorKind(), core::ErrorKind::Invalid);
            QVERIFY2(refused.errorMessage().contains(
                         QLatin1String("REVOKE CREATE ON SCHEMA public FROM PUBLIC")),
                     qPrintable(refused.errorMessage()));
        }
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT to_regclass('outbox_events') IS NULL")),
                 QStringLiteral("true"));
        QVERIFY(sqlExec(db, QStringLiteral("REVOKE CREATE ON SCHEMA public FROM PUBLIC")));
        QVERIFY(store::Migrator(db).migrate().ok());

        QVERIFY(sqlExec(m_db, QStringLiteral("GRANT CREATE ON SCHEMA public TO tst_h2_producer")));
        const auto upToDate = store::Migrator(m_db).migrate();
        QVERIFY(!upToDate.ok());
        QVERIFY2(upToDate.errorMessage().contains(QLatin1String("lets tst_h2_producer create")),
                 qPrintable(upToDate.errorMessage()));
        m_pg->closeAndDrop(db, name);
    }

    // pg_catalog first, the schema, pg_temp last: in every function that
    // runs with the owner's rights.
    void definerFunctionsSearchTheCatalogFirst() {
        const QStringList paths = outbox::testing::sqlColumn(
            m_db, QStringLiteral("SELECT DISTINCT coalesce((SELECT c FROM unnest(proconfig) c"
                                 " WHERE c LIKE 'search\\_path=%'), '') FROM pg_proc WHERE"
                                 " prosecdef AND pronamespace = 'public'::regnamespace"));
        QCOMPARE(paths, QStringList{QStringLiteral("search_path=pg_catalog, public, pg_temp")});
    }

    // A key in the form of a tenant's keys needs that tenant; a call never
    // answers with another tenant's event.
    void tenantKeysBelongToTheirTenant() {
        QSqlDatabase producer = as(QStringLiteral("producer"));
        QVERIFY(producer.isOpen());
        const QString key = kTenant + QStringLiteral("/invoice-1");
        const QString squat = QStringLiteral(
            "SELECT id FROM outbox_enqueue('billing', 'invoice.paid', '{\"squat\": 1}', ?)");
        const auto refused = store::exec(producer, squat, {key});
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(refused.errorMessage().contains(QLatin1String("no tenant was given")),
                 qPrintable(refused.errorMessage()));
        const auto otherTenant =
            store::exec(producer, squat.chopped(1) + QStringLiteral(", ?::uuid)"),
                        {key.toUpper(), kOtherTenant});
        QVERIFY(!otherTenant.ok());
        QVERIFY(!enqueue(producer, QStringLiteral("{\"real\": 1}"), key, kTenant).isEmpty());

        // A key squatted before this rule existed: the tenant gets an error,
        // not the squatter's event.
        const QString legacy = kOtherTenant + QStringLiteral("/invoice-9");
        const QString squatter =
            sqlScalar(m_db,
                      QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                     " dedupe_key) VALUES (outbox_uuid_v7(), 'billing',"
                                     " 'invoice.paid', '{}', ?) RETURNING id"),
                      {legacy});
        const auto taken = store::exec(producer, squat.chopped(1) + QStringLiteral(", ?::uuid)"),
                                       {legacy, kOtherTenant});
        QVERIFY(!taken.ok());
        QVERIFY2(taken.errorMessage().contains(QLatin1String("taken by an event of another")),
                 qPrintable(taken.errorMessage()));
        QVERIFY(!taken.errorMessage().contains(squatter));
    }

    // The database refuses payloads over outbox_limits.max_payload_bytes
    // (1 MiB unless the owner changes it) and records each payload's size.
    void payloadsHaveAMaximumSize() {
        QSqlDatabase producer = as(QStringLiteral("producer"));
        QVERIFY(producer.isOpen());
        store::OutboxStore store(producer);
        store::EnqueueRequest request;
        request.nameSpace = QStringLiteral("billing");
        request.topic = QStringLiteral("big");
        request.payload = payloadOf(1048576);
        QVERIFY(store.enqueue(request).ok());
        request.payload = payloadOf(1048577);
        const auto tooBig = store.enqueue(request);
        QVERIFY(!tooBig.ok());
        QCOMPARE(tooBig.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(tooBig.errorMessage().contains(
                     QLatin1String("1048577 bytes, more than the maximum of 1048576")),
                 qPrintable(tooBig.errorMessage()));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_limits SET max_payload_bytes = 2048")));
        request.payload = payloadOf(2049);
        QVERIFY(!store.enqueue(request).ok());
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(payload_bytes::text, ',')"
                                                " FROM outbox_events")),
                 QStringLiteral("1048576"));
        const auto deleted = store::exec(m_db, QStringLiteral("DELETE FROM outbox_limits"));
        QVERIFY(!deleted.ok());
    }

    // A claim stops taking events once their payloads pass the byte budget,
    // and always takes at least one.
    void aClaimTakesABudgetOfBytes() {
        QVERIFY(
            sqlExec(m_db, QStringLiteral("UPDATE outbox_limits SET claim_budget_bytes = 100000")));
        for (int i = 0; i < 10; ++i)
            QVERIFY(!enqueue(m_db, QString::fromLatin1(payloadOf(30000))).isEmpty());
        QVERIFY(!enqueue(m_db, QString::fromLatin1(payloadOf(500000))).isEmpty());
        QSqlDatabase dispatcher = as(QStringLiteral("dispatcher"));
        QVERIFY(dispatcher.isOpen());
        store::OutboxStore store(dispatcher);
        const QUuid worker = core::createUuidV7();
        QList<qsizetype> claims;
        for (;;) {
            const auto claimed = store.claimBatch(worker, store::ClaimOptions{});
            QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
            if (claimed->isEmpty())
                break;
            claims << claimed->size();
        }
        // 0, 30, 60, 90 kB before the fourth: below 100 kB; the 500 kB
        // event comes after 60 kB and goes with the last two.
        QCOMPARE(claims, (QList<qsizetype>{4, 4, 3}));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'pending',"
                                             " locked_by = NULL, locked_until = NULL")));
        QVERIFY(
            sqlExec(m_db, QStringLiteral("UPDATE outbox_limits SET claim_budget_bytes = 1024")));
        const auto alone = store.claimBatch(worker, store::ClaimOptions{});
        QVERIFY2(alone.ok(), qPrintable(alone.errorMessage()));
        QCOMPARE(alone->size(), 1);
    }

    // Plain SQL as a dispatcher: only the transitions it makes.
    void dispatchersMakeOnlyTheirTransitions() {
        QVERIFY(sqlExec(
            m_db, QStringLiteral(
                      "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts,"
                      " next_attempt_at, locked_by, locked_until, delivered_at)"
                      " SELECT outbox_uuid_v7(), 'n', s, '{}', s, a, now() + d,"
                      "  CASE WHEN s = 'processing' THEN gen_random_uuid() END,"
                      "  CASE WHEN s = 'processing' THEN now() + interval '5 minutes' END,"
                      "  CASE WHEN s = 'delivered' THEN now() END"
                      " FROM (VALUES ('pending', 0, interval '0'), ('pending', 2, interval '0'),"
                      "  ('pending', 0, interval '1 hour'), ('processing', 3, interval '0'),"
                      "  ('delivered', 1, interval '0'), ('dead', 5, interval '0')) v(s, a, d)")));
        QSqlDatabase db = as(QStringLiteral("dispatcher"));
        QVERIFY(db.isOpen());
        const QString now = QStringLiteral("updated_at = statement_timestamp()");
        // Refused with "permission denied", or (for delivered and dead
        // events, which a dispatcher does not see as changeable) no row.
        enum Outcome { Refused, NoRow };
        const QList<std::tuple<const char *, Outcome, QString>> statements = {
            {"deliver an event never claimed", Refused,
             QStringLiteral("UPDATE outbox_events SET status = 'delivered', delivered_at = now(), "
                            "%1 WHERE status = 'pending' AND attempts = 0")},
            {"kill an event never claimed", Refused,
             QStringLiteral("UPDATE outbox_events SET status = 'dead', last_error = 'x', %1"
                            " WHERE status = 'pending' AND attempts = 0")},
            {"undeliver", NoRow,
             QStringLiteral("UPDATE outbox_events SET status = 'pending', delivered_at = NULL, %1"
                            " WHERE status = 'delivered'")},
            {"bring back the dead", NoRow,
             QStringLiteral("UPDATE outbox_events SET status = 'pending', attempts = 0, %1"
                            " WHERE status = 'dead'")},
            {"rewrite a delivery time", NoRow,
             QStringLiteral("UPDATE outbox_events SET delivered_at = now() - interval '1 day', %1"
                            " WHERE status = 'delivered'")},
            {"claim with an endless lease", Refused,
             QStringLiteral("UPDATE outbox_events SET status = 'processing', attempts = attempts"
                            " + 1, locked_by = gen_random_uuid(), locked_until = 'infinity', %1"
                            " WHERE status = 'pending' AND next_attempt_at <= now()")},
            {"set a lease to infinity", Refused,
             QStringLiteral("UPDATE outbox_events SET locked_until = 'infinity', %1 WHERE status ="
                            " 'processing'")},
            {"backdate a claim", Refused,
             QStringLiteral("UPDATE outbox_events SET status = 'processing', attempts = attempts"
                            " + 1, locked_by = gen_random_uuid(), locked_until = now() + interval"
                            " '1 minute', updated_at = now() - interval '1 hour'"
                            " WHERE status = 'pending'")},
            {"backdate a nack", Refused,
             QStringLiteral("UPDATE outbox_events SET status = 'pending', locked_by = NULL,"
                            " locked_until = NULL, updated_at = '2000-01-01'"
                            " WHERE status = 'processing'")},
            {"a delivery time on a pending event", Refused,
             QStringLiteral("UPDATE outbox_events SET delivered_at = now(), %1"
                            " WHERE status = 'pending'")},
            {"forge an attempt", Refused,
             QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, error)"
                            " SELECT id, attempts, 'forged' FROM outbox_events")},
        };
        for (const auto &[what, outcome, sql] : statements) {
            const QString label = QLatin1String(what);
            const QString before = rowsFingerprint(m_db);
            auto result =
                store::exec(db, sql.contains(QLatin1String("%1")) ? sql.arg(now) : sql, {}, label);
            if (outcome == Refused) {
                QVERIFY2(!result.ok(), qPrintable(label + QStringLiteral(" was accepted")));
                QVERIFY2(result.errorKind() == core::ErrorKind::PermissionDenied,
                         qPrintable(result.errorMessage()));
            } else {
                QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
                QCOMPARE(result->numRowsAffected(), 0);
            }
            QVERIFY2(rowsFingerprint(m_db) == before, qPrintable(label));
        }
        // What a dispatcher does: claim, nack with its attempt, ack.
        store::OutboxStore store(db);
        const QUuid worker = core::createUuidV7();
        const auto claimed = store.claimBatch(worker, store::ClaimOptions{});
        QVERIFY2(claimed.ok() && claimed->size() == 2, qPrintable(claimed.errorMessage()));
        store::Nack nack;
        nack.id = claimed->at(0).id;
        nack.attempts = claimed->at(0).attempts;
        nack.error = QStringLiteral("HTTP 503");
        nack.httpStatus = 503;
        const auto nacked = store.nack(worker, {nack}, 10);
        QVERIFY2(nacked.ok() && nacked->applied == 1, qPrintable(nacked.errorMessage()));
        const auto acked = store.ack(worker, {{claimed->at(1).id, claimed->at(1).attempts}});
        QVERIFY2(acked.ok() && acked->applied == 1, qPrintable(acked.errorMessage()));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts")),
                 QStringLiteral("1"));
    }

    // Only dispatchers run retention, and a dead event goes only once it
    // has been dead as long as retention keeps them; each one is audited.
    void retentionRemovesOnlyWhatItsRulesAllow() {
        QVERIFY(sqlExec(
            m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                 " status, attempts, created_at, updated_at)"
                                 " VALUES ('00000000-0000-7000-8000-00000000000a', 'n', 'long',"
                                 "  '{}', 'dead', 5, now() - interval '3 hours',"
                                 "  now() - interval '3 hours'),"
                                 " ('00000000-0000-7000-8000-00000000000b', 'n', 'just', '{}',"
                                 "  'dead', 5, now() - interval '3 hours', now())")));
        const QString call = QStringLiteral("SELECT outbox_retention_delete('dead', 3600000, 100)");
        QSqlDatabase op = as(QStringLiteral("operator"));
        QVERIFY(op.isOpen());
        const auto refused = store::exec(op, call);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), core::ErrorKind::PermissionDenied);
        QSqlDatabase dispatcher = as(QStringLiteral("dispatcher"));
        QCOMPARE(sqlScalar(dispatcher, call), QStringLiteral("1"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(topic, ',') FROM"
                                                " outbox_events")),
                 QStringLiteral("just"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT a.db_user || ' ' || e.event_id FROM"
                                                " outbox_audit a JOIN outbox_audit_events e ON"
                                                " e.audit_id = a.id")),
                 QStringLiteral("tst_h2_dispatcher 00000000-0000-7000-8000-00000000000a"));
    }

    // Each registry input is bounded; what was refused never reaches the
    // readers of the registry.
    void registryInputsAreBounded() {
        QSqlDatabase db = as(QStringLiteral("dispatcher"));
        QVERIFY(db.isOpen());
        const QString token = QString(40, QLatin1Char('t'));
        const QString registerSql =
            QStringLiteral("SELECT outbox_dispatcher_register(gen_random_uuid(), '%1', %2, %3,"
                           " '1.0', 'outboxctl', NULL, 'http://runner', %4, %5, now() + %6)")
                .arg(token);
        const auto reg = [&](const QString &host, const QString &pid, const QString &concurrency,
                             const QString &heartbeatMs, const QString &startedIn) {
            return store::exec(db, registerSql.arg(host, pid, concurrency, heartbeatMs, startedIn));
        };
        const QString ok = QStringLiteral("interval '0'");
        QVERIFY(reg(QStringLiteral("'h'"), QStringLiteral("1"), QStringLiteral("4"),
                    QStringLiteral("3600000"), ok)
                    .ok());
        for (const auto &bad :
             {reg(QStringLiteral("'h'"), QStringLiteral("1"), QStringLiteral("4"),
                  QStringLiteral("9000000000000000"), ok),
              reg(QStringLiteral("'h'"), QStringLiteral("1"), QStringLiteral("4"),
                  QStringLiteral("3600001"), ok),
              reg(QStringLiteral("E'h\\x1b[2J'"), QStringLiteral("1"), QStringLiteral("4"),
                  QStringLiteral("5000"), ok),
              reg(QStringLiteral("'h'"), QStringLiteral("-5"), QStringLiteral("4"),
                  QStringLiteral("5000"), ok),
              reg(QStringLiteral("'h'"), QStringLiteral("1"), QStringLiteral("0"),
                  QStringLiteral("5000"), ok),
              reg(QStringLiteral("'h'"), QStringLiteral("1"), QStringLiteral("4"),
                  QStringLiteral("5000"), QStringLiteral("interval '1000 years'"))}) {
            QVERIFY(!bad.ok());
            QCOMPARE(bad.errorKind(), core::ErrorKind::Invalid);
        }
        const QString worker = sqlScalar(db, QStringLiteral("SELECT worker_id FROM"
                                                            " outbox_dispatchers"));
        const QString beat =
            QStringLiteral("SELECT outbox_dispatcher_heartbeat('%1', '%2', %3)").arg(worker, token);
        QCOMPARE(sqlScalar(db, beat.arg(QStringLiteral("'running', 1, 2.5, 0, 9"))),
                 QStringLiteral("true"));
        for (const char *values :
             {"'running', 1, 'NaN', 0, 9", "'running', 1, 'Infinity', 0, 9",
              "'running', -1, 0, 0, 9", "'running', 1, 0, 0, -9", "E'run\\nning', 1, 0, 0, 9"})
            QVERIFY2(!store::exec(db, beat.arg(QLatin1String(values))).ok(), values);
        const auto list = store::RegistryStore(db).list();
        QVERIFY2(list.ok(), qPrintable(list.errorMessage()));
        QCOMPARE(list->entries.size(), 1);
        QCOMPARE(list->aliveCount(), 1);
    }

    // Replaying a copy makes one more copy of its original: it needs
    // "again" like replaying the original twice.
    void replayingACopyNeedsAgain() {
        const QString original = enqueue(m_db, QStringLiteral("{\"n\": 1}"));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered',"
                                             " delivered_at = now()")));
        QSqlDatabase db = as(QStringLiteral("operator"));
        QVERIFY(db.isOpen());
        store::OperatorStore ops(db, store::Actor::fromEnvironment(QStringLiteral("tst")));
        store::EventFilter filter;
        filter.ids = {QUuid::fromString(original)};
        QVERIFY(ops.replay(filter).ok());
        const QString copy = sqlScalar(
            m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered', delivered_at ="
                                 " now() WHERE replay_of IS NOT NULL RETURNING id"));
        filter.ids = {QUuid::fromString(copy)};
        const auto second = ops.replay(filter);
        QVERIFY(!second.ok());
        QVERIFY2(second.errorMessage().contains(QLatin1String("already replayed")),
                 qPrintable(second.errorMessage()));
        QVERIFY(db.transaction());
        const QString audit = sqlScalar(
            db, QStringLiteral("SELECT outbox_op_begin('replay', 'x', 'u', 'h', 'a', 1)"));
        const auto refused = store::exec(
            db, QStringLiteral("SELECT * FROM outbox_op_replay(?::bigint, ?::uuid[], now())"),
            {audit, QStringLiteral("{%1}").arg(copy)});
        QVERIFY(!refused.ok());
        QVERIFY2(refused.errorMessage().contains(QLatin1String("is a copy of event")),
                 qPrintable(refused.errorMessage()));
        QVERIFY(db.rollback());
        store::BulkOptions again;
        again.again = true;
        QVERIFY(ops.replay(filter, again).ok());
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("3"));
    }

    // An operator run names who, where and how many; the audit's and the
    // pauses' texts carry no control characters.
    void auditTextsAreHonest() {
        QSqlDatabase db = as(QStringLiteral("operator"));
        QVERIFY(db.isOpen());
        for (const char *args : {"'purge', 'status=dead', 'alice', 'laptop', 'psql', NULL",
                                 "'purge', 'status=dead', '', 'laptop', 'psql', 3",
                                 "'purge', 'status=dead', 'alice', NULL, 'psql', 3",
                                 "'purge', '', 'alice', 'laptop', 'psql', 3",
                                 "'purge', E'status=dead\\x1b[2J', 'alice', 'laptop', 'psql', 3"}) {
            const auto refused = store::exec(
                db, QStringLiteral("SELECT outbox_op_begin(%1)").arg(QLatin1String(args)));
            QVERIFY2(!refused.ok(), args);
            QCOMPARE(refused.errorKind(), core::ErrorKind::Invalid);
        }
        const auto paused = store::exec(
            db, QStringLiteral("SELECT outbox_pause('billing', NULL, E'INC-1\\x1b]0;pwned\\x07')"));
        QVERIFY(!paused.ok());
        QCOMPARE(paused.errorKind(), core::ErrorKind::Invalid);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT (SELECT count(*) FROM outbox_audit) +"
                                                " (SELECT count(*) FROM outbox_pauses)")),
                 QStringLiteral("0"));
    }

    // migrate --with-roles gives each outbox login server-side limits; an
    // administrator's own value is kept, and the limits act.
    void loginsGetServerSideLimits() {
        for (const char *login : {"tst_h2_lim_viewer", "tst_h2_lim_dispatcher"})
            QVERIFY(sqlExec(m_db, QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE outbox_%2")
                                      .arg(QLatin1String(login), QLatin1String(login + 11))));
        const auto migrated = store::Migrator(m_db).migrate(true);
        QVERIFY2(migrated.ok(), qPrintable(migrated.errorMessage()));
        const QString show =
            QStringLiteral("SELECT current_setting('statement_timeout') || ' ' ||"
                           " current_setting('idle_in_transaction_session_timeout')"
                           " || ' ' || rolconnlimit FROM pg_roles WHERE rolname ="
                           " current_user");
        QSqlDatabase viewer = m_pg->open(m_dbName, {}, QStringLiteral("tst_h2_lim_viewer"));
        QCOMPARE(sqlScalar(viewer, show), QStringLiteral("1min 1min 30"));
        QCOMPARE(sqlScalar(m_pg->open(m_dbName, {}, QStringLiteral("tst_h2_lim_dispatcher")), show),
                 QStringLiteral("1min 1min 100"));
        QCOMPARE(sqlScalar(as(QStringLiteral("operator")), show), QStringLiteral("5min 1min 30"));
        QCOMPARE(sqlScalar(as(QStringLiteral("producer")), show), QStringLiteral("0 0 -1"));

        // The documented way to change them, which a later migrate keeps.
        QVERIFY(sqlExec(m_db, QStringLiteral("ALTER ROLE tst_h2_lim_viewer IN DATABASE %1 SET"
                                             " idle_in_transaction_session_timeout = '1s'")
                                  .arg(m_dbName)));
        QVERIFY(sqlExec(m_db, QStringLiteral("ALTER ROLE tst_h2_lim_viewer CONNECTION LIMIT 1")));
        QVERIFY(store::Migrator(m_db).migrate(true).ok());
        const QString first = viewer.connectionName();
        viewer = QSqlDatabase();
        m_pg->close(first);
        // A closed connection's backend leaves a moment later; until then
        // it still counts against the limit of 1.
        QTRY_COMPARE_WITH_TIMEOUT(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM "
                                                                 "pg_stat_activity WHERE usename ="
                                                                 " 'tst_h2_lim_viewer'")),
                                  QStringLiteral("0"), 20000);
        viewer = m_pg->open(m_dbName, {}, QStringLiteral("tst_h2_lim_viewer"));
        QCOMPARE(sqlScalar(viewer, show), QStringLiteral("1min 1s 1"));
        QVERIFY(!m_pg->open(m_dbName, {}, QStringLiteral("tst_h2_lim_viewer")).isOpen());

        // A viewer that opens a transaction and sits in it is cut off.
        const QString pid = sqlScalar(viewer, QStringLiteral("SELECT pg_backend_pid()"));
        QVERIFY(viewer.transaction());
        QVERIFY(sqlExec(viewer, QStringLiteral("SELECT count(*) FROM outbox_events")));
        QTRY_COMPARE_WITH_TIMEOUT(
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE pid = ?"),
                      {pid}),
            QStringLiteral("0"), 30000);
        QVERIFY(!store::exec(viewer, QStringLiteral("SELECT 1")).ok());
    }
};

QTEST_GUILESS_MAIN(TestHardening2)
#include "tst_hardening2.moc"
