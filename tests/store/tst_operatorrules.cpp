// What the database enforces for operators, whatever the client does: as
// real login roles granted one outbox_* role each, direct writes to the
// events and the audit log are refused; the outbox_op_* functions refuse
// states their action may not touch, never change more than was confirmed,
// write who acted from the session (not from the client) and refuse to
// replay an event twice unless asked. Also: the sealed preview of
// OperatorStore, the os_user fallback and read-only sessions.

#include "core/conninfo.h"
#include "store/database.h"
#include "store/operations.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QtTest>

#include <memory>
#include <pwd.h>
#include <unistd.h>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

namespace {

const store::Actor kActor{QStringLiteral("alice"), QStringLiteral("ops-laptop"),
                          QStringLiteral("tst_operatorrules")};

// `count` rows in `status`, created `createdAgo` ago (an interval literal).
bool insertEvents(QSqlDatabase db, int count, const QString &status,
                  const QString &createdAgo = QStringLiteral("1 hour")) {
    return sqlExec(
        db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                       " attempts, locked_by, locked_until, delivered_at, created_at, updated_at)"
                       " SELECT gen_random_uuid(), 'billing', 'invoice.paid',"
                       "  jsonb_build_object('n', g), ?::text, 1,"
                       "  CASE WHEN ?::text = 'processing' THEN gen_random_uuid() END,"
                       "  CASE WHEN ?::text = 'processing' THEN now() + interval '5 minutes' END,"
                       "  CASE WHEN ?::text = 'delivered' THEN now() END,"
                       "  now() - ?::interval + g * interval '1 millisecond', now()"
                       " FROM generate_series(1, ?) g"),
        {status, status, status, status, createdAgo, count});
}

qint64 number(QSqlDatabase db, const QString &sql, const QVariantList &values = {}) {
    bool ok = false;
    const qint64 n = sqlScalar(db, sql, values).toLongLong(&ok);
    return ok ? n : -1;
}

QString fingerprint(QSqlDatabase db) {
    return sqlScalar(db,
                     QStringLiteral("SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY"
                                    " t::text), '')) FROM (SELECT e::text FROM outbox_events e"
                                    " UNION ALL SELECT a::text FROM outbox_audit a"
                                    " UNION ALL SELECT ae::text FROM outbox_audit_events ae) t"));
}

QString idArray(QSqlDatabase db, const QString &where) {
    return sqlScalar(db, QStringLiteral("SELECT '{' || coalesce(string_agg(id::text, ','), '') ||"
                                        " '}' FROM outbox_events WHERE ") +
                             where);
}

} // namespace

class TestOperatorRules final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    QStringList m_connections;

    // A connection as the login `user` (one of tst_rules_<group>).
    QSqlDatabase as(const QString &user) {
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        if (!info)
            return {};
        info->user = user;
        const QString name = store::uniqueConnectionName(user);
        auto db = store::openDatabase(info.value(), name);
        if (!db) {
            qWarning().noquote() << db.errorMessage();
            return {};
        }
        m_connections << name;
        return db.value();
    }

private Q_SLOTS:
    void initTestCase() {
        // One login per group, for every test.
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_rules_"),
                             {QStringLiteral("operator"), QStringLiteral("viewer"),
                              QStringLiteral("producer"), QStringLiteral("dispatcher")});
    }

    void init() { openFreshDb(); }

    void cleanup() {
        for (const QString &name : std::as_const(m_connections))
            store::closeDatabase(name);
        m_connections.clear();
        dropFreshDb();
    }

    void cleanupTestCase() { stopPg(); }

    // Plain SQL as each role: refused by PostgreSQL, nothing changes.
    void directWritesAreRefused() {
        const QList<std::pair<const char *, QString>> statements = {
            {"delete pending",
             QStringLiteral("DELETE FROM outbox_events WHERE status = 'pending'")},
            {"update payload",
             QStringLiteral("UPDATE outbox_events SET payload = '{\"forged\": true}'")},
            {"update status",
             QStringLiteral("UPDATE outbox_events SET status = 'dead', updated_at = now()"
                            " WHERE status = 'pending'")},
            {"insert event",
             QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                            " payload) VALUES (gen_random_uuid(), 'x', 'y', '{}')")},
            {"rewrite audit", QStringLiteral("UPDATE outbox_audit SET db_user = 'someone_else'")},
            {"forge audit", QStringLiteral("INSERT INTO outbox_audit (db_user, action, filter)"
                                           " VALUES ('forged', 'purge', 'nothing')")},
            {"delete audit", QStringLiteral("DELETE FROM outbox_audit")},
            {"forge audit link",
             QStringLiteral("INSERT INTO outbox_audit_events (audit_id, event_id)"
                            " SELECT id, gen_random_uuid() FROM outbox_audit")},
        };
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("pending")));
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("dead")));
        OperatorStore admin(m_db, kActor);
        QVERIFY(admin.requeue(EventFilter{}).ok()); // one audit entry to attack
        const QString before = fingerprint(m_db);
        int refused = 0;
        for (const char *group : {"operator", "viewer", "producer", "dispatcher"}) {
            const QString user = QStringLiteral("tst_rules_%1").arg(QLatin1String(group));
            QSqlDatabase db = as(user);
            QVERIFY(db.isOpen());
            for (const auto &[what, sql] : statements) {
                // Dispatchers do change status (claim, ack): their column grants.
                if (QLatin1String(group) == QLatin1String("dispatcher") &&
                    QLatin1String(what) == QLatin1String("update status"))
                    continue;
                const QString label = user + QStringLiteral(": ") + QLatin1String(what);
                const auto result = store::exec(db, sql, {}, label);
                QVERIFY2(!result.ok(), qPrintable(label + QStringLiteral(" was not refused")));
                QVERIFY2(result.errorKind() == core::ErrorKind::PermissionDenied,
                         qPrintable(result.errorMessage()));
                QVERIFY2(fingerprint(m_db) == before, qPrintable(label));
                ++refused;
            }
        }
        QCOMPARE(refused, 4 * 8 - 1);
    }

    // Even the owner cannot rewrite or delete the audit log, and a new entry
    // always names the session's user.
    void auditIsAppendOnlyForEveryone() {
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("dead")));
        OperatorStore ops(m_db, kActor);
        QVERIFY(ops.requeue(EventFilter{}).ok());
        const QString before = fingerprint(m_db);
        for (const QString &sql :
             {QStringLiteral("UPDATE outbox_audit SET db_user = 'someone_else'"),
              QStringLiteral("UPDATE outbox_audit SET affected = 0"),
              QStringLiteral("DELETE FROM outbox_audit"),
              QStringLiteral("DELETE FROM outbox_audit_events"),
              QStringLiteral("UPDATE outbox_audit_events SET event_id = gen_random_uuid()"),
              QStringLiteral("TRUNCATE outbox_audit_events"),
              QStringLiteral("TRUNCATE outbox_audit CASCADE")}) {
            const auto refused = store::exec(m_db, sql);
            QVERIFY2(!refused.ok(), qPrintable(sql));
            QVERIFY2(refused.errorMessage().contains(QLatin1String("append-only")),
                     qPrintable(refused.errorMessage()));
        }
        QCOMPARE(fingerprint(m_db), before);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("INSERT INTO outbox_audit (db_user, action, filter)"
                                                " VALUES ('forged', 'purge', 'x') RETURNING"
                                                " db_user = session_user")),
                 QStringLiteral("true"));
    }

    // The one table of which states each action may touch is in SQL; the
    // client's copy must say the same.
    void allowedStatesAgreeWithTheDatabase() {
        for (Action action :
             {Action::RetryNow, Action::Requeue, Action::Cancel, Action::Purge, Action::Replay}) {
            QStringList client;
            for (core::Status status : store::allowedStates(action))
                client << core::statusName(status);
            const QString database = sqlScalar(
                m_db, QStringLiteral("SELECT array_to_string(outbox_op_allowed_states(?), ',')"),
                {store::actionName(action)});
            QCOMPARE(database, client.join(QLatin1Char(',')));
        }
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT outbox_op_allowed_states('pause') IS"
                                                " NULL")),
                 QStringLiteral("true"));
    }

    void functionsRefuseWrongStates_data() {
        QTest::addColumn<QString>("action");
        QTest::addColumn<QString>("status");
        const QStringList all{QStringLiteral("pending"), QStringLiteral("processing"),
                              QStringLiteral("delivered"), QStringLiteral("dead")};
        for (Action action :
             {Action::RetryNow, Action::Requeue, Action::Cancel, Action::Purge, Action::Replay}) {
            QStringList allowed;
            for (core::Status status : store::allowedStates(action))
                allowed << core::statusName(status);
            for (const QString &status : all) {
                if (!allowed.contains(status))
                    QTest::addRow("%s %s", qPrintable(store::actionName(action)),
                                  qPrintable(status))
                        << store::actionName(action) << status;
            }
        }
    }

    // Called directly by an operator with the ids of rows in a state the
    // action may not touch: nothing changes, and the audit says so.
    void functionsRefuseWrongStates() {
        QFETCH(QString, action);
        QFETCH(QString, status);
        QVERIFY(insertEvents(m_db, 4, status));
        const QString ids = idArray(m_db, QStringLiteral("true"));
        const QString events =
            sqlScalar(m_db, QStringLiteral("SELECT md5(string_agg(e::text, '|' ORDER BY id)) FROM"
                                           " outbox_events e"));
        QSqlDatabase db = as(QStringLiteral("tst_rules_operator"));
        QVERIFY(db.isOpen());
        QVERIFY(db.transaction());
        const QString audit = sqlScalar(
            db, QStringLiteral("SELECT outbox_op_begin(?, 'direct', 'mallory', 'h', 'psql', 4)"),
            {action});
        QVERIFY(!audit.isEmpty());
        const QString changed =
            sqlScalar(db,
                      QStringLiteral("SELECT count(*) FROM outbox_op_%1(?::bigint, ?::uuid[],"
                                     " now(), 4)")
                          .arg(action),
                      {audit, ids});
        QCOMPARE(changed, QStringLiteral("0"));
        QVERIFY(sqlExec(db, QStringLiteral("SELECT outbox_op_finish(?::bigint)"), {audit}));
        QVERIFY(db.commit());
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT md5(string_agg(e::text, '|' ORDER BY id))"
                                                " FROM outbox_events e")),
                 events);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT concat_ws('|', db_user, os_user, action,"
                                                " affected, skipped) FROM outbox_audit")),
                 QStringLiteral("tst_rules_operator|mallory|%1|0|4").arg(action));
    }

    // A run belongs to the user who began it; another login cannot use its
    // audit id, and a closed run takes no more batches.
    void runsBelongToTheirUser() {
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("dead")));
        const QString ids = idArray(m_db, QStringLiteral("true"));
        const QString audit = sqlScalar(
            m_db,
            QStringLiteral("SELECT outbox_op_begin('purge', 'admin run', 'root', 'h', 'x', 3)"));
        QSqlDatabase db = as(QStringLiteral("tst_rules_operator"));
        QVERIFY(db.isOpen());
        const auto foreign = store::exec(
            db, QStringLiteral("SELECT * FROM outbox_op_purge(?::bigint, ?::uuid[], now())"),
            {audit, ids});
        QVERIFY(!foreign.ok());
        QCOMPARE(foreign.errorKind(), core::ErrorKind::PermissionDenied);
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_op_finish(?::bigint)"), {audit}));
        const auto closed = store::exec(
            m_db, QStringLiteral("SELECT * FROM outbox_op_purge(?::bigint, ?::uuid[], now())"),
            {audit, ids});
        QVERIFY(!closed.ok());
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 3);
    }

    // db_user is the session's user: the client has no way to send one.
    void auditNamesTheSessionUser() {
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("dead")));
        QSqlDatabase db = as(QStringLiteral("tst_rules_operator"));
        QVERIFY(db.isOpen());
        const store::Actor actor{QStringLiteral("postgres"), QStringLiteral("h"),
                                 QStringLiteral("forger")};
        OperatorStore ops(db, actor);
        const auto result = ops.requeue(EventFilter{});
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->changed, 3);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT db_user || '|' || os_user FROM"
                                                " outbox_audit")),
                 QStringLiteral("tst_rules_operator|postgres"));
    }

    void osUserFallsBackToTheProcessAccount() {
        const QByteArray user = qgetenv("USER");
        const QByteArray logname = qgetenv("LOGNAME");
        qunsetenv("USER");
        qunsetenv("LOGNAME");
        const store::Actor actor = store::Actor::fromEnvironment(QStringLiteral("outboxctl"));
        qputenv("USER", user);
        qputenv("LOGNAME", logname);
        const passwd *entry = ::getpwuid(::getuid());
        QVERIFY(entry);
        QCOMPARE(actor.osUser, QString::fromLocal8Bit(entry->pw_name));
        qputenv("LOGNAME", "from-logname");
        qunsetenv("USER");
        QCOMPARE(store::Actor::fromEnvironment(QStringLiteral("x")).osUser,
                 QStringLiteral("from-logname"));
        qputenv("USER", user);
        qputenv("LOGNAME", logname);
    }

    // The preview seals the set: rows that match only afterwards (new rows,
    // rows delivered since) are left and counted, and the run changes at
    // most what was confirmed.
    void sealedPreviewIsTheMostThatChanges() {
        QVERIFY(insertEvents(m_db, 50, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("pending"), QStringLiteral("2 hours")));
        EventFilter delivered;
        delivered.status = core::Status::Delivered;
        BulkOptions preview;
        preview.dryRun = true;
        OperatorStore ops(m_db, kActor);
        const auto previewed = ops.purge(delivered, preview);
        QVERIFY2(previewed.ok(), qPrintable(previewed.errorMessage()));
        QCOMPARE(previewed->seal.count, 50);
        QVERIFY(previewed->seal.isValid());

        // Meanwhile: 30 new delivered rows, and the 5 older pending rows
        // are delivered (older created_at than the sealed rows).
        QVERIFY(insertEvents(m_db, 30, QStringLiteral("delivered"), QStringLiteral("1 minute")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered',"
                                             " delivered_at = clock_timestamp(), updated_at ="
                                             " clock_timestamp() WHERE status = 'pending'")));
        BulkOptions run;
        run.seal = previewed->seal;
        run.batchSize = 7;
        const auto purged = ops.purge(delivered, run);
        QVERIFY2(purged.ok(), qPrintable(purged.errorMessage()));
        QCOMPARE(purged->changed, 50);
        QCOMPARE(purged->confirmed, 50);
        QCOMPARE(purged->newer, 35);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 35);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT affected || '/' || confirmed FROM"
                                                " outbox_audit")),
                 QStringLiteral("50/50"));

        // A seal with a limit: the first rows only, and never more.
        QVERIFY(insertEvents(m_db, 10, QStringLiteral("dead")));
        EventFilter dead;
        dead.status = core::Status::Dead;
        preview.limit = 4;
        const auto limited = ops.requeue(dead, preview);
        QVERIFY(limited.ok());
        QCOMPARE(limited->seal.count, 4);
        BulkOptions limitedRun;
        limitedRun.seal = limited->seal;
        const auto requeued = ops.requeue(dead, limitedRun);
        QVERIFY2(requeued.ok(), qPrintable(requeued.errorMessage()));
        QCOMPARE(requeued->changed, 4);
        QCOMPARE(requeued->newer, 6);
    }

    // The confirmed count is a limit the database keeps: handed more ids
    // than confirmed, the function changes no more than that.
    void databaseNeverChangesMoreThanConfirmed() {
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("dead")));
        const QString ids = idArray(m_db, QStringLiteral("true"));
        QSqlDatabase db = as(QStringLiteral("tst_rules_operator"));
        QVERIFY(db.isOpen());
        QVERIFY(db.transaction());
        const QString audit = sqlScalar(
            db, QStringLiteral("SELECT outbox_op_begin('purge', 'five ids', 'u', 'h', 'a', 2)"));
        QCOMPARE(sqlScalar(db,
                           QStringLiteral("SELECT count(*) FROM outbox_op_purge(?::bigint,"
                                          " ?::uuid[], now(), 5)"),
                           {audit, ids}),
                 QStringLiteral("2"));
        QCOMPARE(sqlScalar(db,
                           QStringLiteral("SELECT count(*) FROM outbox_op_purge(?::bigint,"
                                          " ?::uuid[], now(), 3)"),
                           {audit, ids}),
                 QStringLiteral("0"));
        QVERIFY(db.commit());
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 3);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT affected || '/' || confirmed FROM"
                                                " outbox_audit")),
                 QStringLiteral("2/2"));
    }

    // Replaying an event that already has a copy needs an explicit "again",
    // in OperatorStore and in the function itself.
    void replayingTwiceNeedsAgain() {
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("delivered")));
        EventFilter originals;
        originals.status = core::Status::Delivered;
        QSqlDatabase db = as(QStringLiteral("tst_rules_operator"));
        QVERIFY(db.isOpen());
        OperatorStore ops(db, kActor);
        const auto first = ops.replay(originals);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QCOMPARE(first->changed, 2);

        BulkOptions preview;
        preview.dryRun = true;
        const auto previewed = ops.replay(originals, preview);
        QVERIFY(previewed.ok());
        QCOMPARE(previewed->alreadyReplayed, 2);
        const auto second = ops.replay(originals);
        QVERIFY(!second.ok());
        QCOMPARE(second.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(second.errorMessage().contains(QLatin1String("already replayed")),
                 qPrintable(second.errorMessage()));
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")), 4);

        // The function refuses too, for a client that skips the check.
        const QString ids = idArray(m_db, QStringLiteral("replay_of IS NULL"));
        QVERIFY(db.transaction());
        const QString audit = sqlScalar(
            db, QStringLiteral("SELECT outbox_op_begin('replay', 'x', 'u', 'h', 'a', 2)"));
        const auto refused = store::exec(
            db, QStringLiteral("SELECT * FROM outbox_op_replay(?::bigint, ?::uuid[], now())"),
            {audit, ids});
        QVERIFY(!refused.ok());
        QVERIFY2(refused.errorMessage().contains(QLatin1String("already replayed")),
                 qPrintable(refused.errorMessage()));
        QVERIFY(db.rollback());

        BulkOptions again;
        again.again = true;
        const auto third = ops.replay(originals, again);
        QVERIFY2(third.ok(), qPrintable(third.errorMessage()));
        QCOMPARE(third->changed, 2);
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE replay_of"
                                             " IS NOT NULL")),
                 4);
    }

    // A read-only session is read-only in the server: the UPDATE fails
    // there, also when the connection string has options of its own.
    void readOnlySessionRefusesWrites_data() {
        QTest::addColumn<QString>("extra");
        QTest::newRow("plain") << QString();
        QTest::newRow("with options") << QStringLiteral(" options='-c search_path=public'");
    }

    void readOnlySessionRefusesWrites() {
        QFETCH(QString, extra);
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("dead")));
        const QString text = m_pg->connInfo(m_dbName) + extra;
        auto info = core::ConnInfo::parse(text);
        QVERIFY2(info.ok(), qPrintable(info.errorMessage()));
        store::Session session(store::readOnlySession(info.value()), {});
        const auto opened = session.open();
        QVERIFY2(opened.ok(), qPrintable(opened.errorMessage()));
        QVERIFY(store::exec(session.database(), QStringLiteral("SELECT count(*) FROM"
                                                               " outbox_events"))
                    .ok());
        const auto update = store::exec(session.database(),
                                        QStringLiteral("UPDATE outbox_events SET attempts = 0"));
        QVERIFY(!update.ok());
        QVERIFY2(update.errorMessage().contains(QLatin1String("read-only transaction")),
                 qPrintable(update.errorMessage()));
        OperatorStore ops(session, kActor);
        QVERIFY(!ops.requeue(EventFilter{}).ok());
        QCOMPARE(number(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status ="
                                             " 'dead'")),
                 2);
    }
};

QTEST_GUILESS_MAIN(TestOperatorRules)
#include "tst_operatorrules.moc"
