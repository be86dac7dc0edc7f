// The SQL contract of sql/001_init.sql and sql/roles.sql, exercised with
// plain SQL the way a producer in any language would use it: outbox_enqueue,
// dedupe (also under a race), tenant checks, NOTIFY, and the least-privilege
// roles.

#include "core/conninfo.h"
#include "core/uuidv7.h"
#include "store/database.h"
#include "store/migrator.h"
#include "store/outboxstore.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QSignalSpy>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

struct Enqueued {
    bool ok = false;
    QUuid id;
    bool inserted = false;
    QSqlError error;
};

Enqueued enqueueSql(QSqlDatabase db, const QVariant &nameSpace, const QVariant &topic,
                    const QVariant &payload, const QVariant &dedupeKey = {},
                    const QVariant &tenant = {}) {
    QSqlQuery query(db);
    Enqueued result;
    if (!query.prepare(QStringLiteral(
            "SELECT id, inserted FROM outbox_enqueue(?::text, ?::text, ?::jsonb, ?::text, "
            "?::uuid)"))) {
        result.error = query.lastError();
        return result;
    }
    const QVariant nullText(QMetaType::fromType<QString>());
    query.addBindValue(nameSpace.isValid() ? nameSpace : nullText);
    query.addBindValue(topic.isValid() ? topic : nullText);
    query.addBindValue(payload.isValid() ? payload : nullText);
    query.addBindValue(dedupeKey.isValid() ? dedupeKey : nullText);
    query.addBindValue(tenant.isValid() ? tenant : nullText);
    if (!query.exec() || !query.next()) {
        result.error = query.lastError();
        return result;
    }
    result.ok = true;
    result.id = QUuid::fromString(query.value(0).toString());
    result.inserted = query.value(1).toBool();
    return result;
}

QString eventCount(QSqlDatabase db) {
    return sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_events"));
}

const QStringList kGroupRoles{QStringLiteral("producer"), QStringLiteral("dispatcher"),
                              QStringLiteral("operator"), QStringLiteral("viewer")};

} // namespace

class TestSchema final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    QStringList m_databases; // made by the current test function, dropped in cleanup()

    QString migratedDatabase() {
        const QString name = m_pg->freshMigratedDatabase();
        m_databases << name;
        return name;
    }

    core::ConnInfo info(const QString &db, const QString &user = {}) const {
        core::ConnInfo result = core::ConnInfo::parse(m_pg->connInfo(db)).value();
        if (!user.isEmpty()) {
            result.user = user;
        }
        return result;
    }

    // A fresh migrated database with the outbox_* grants applied.
    QString freshDatabaseWithRoles() {
        const QString name = migratedDatabase();
        if (name.isEmpty()) {
            return {};
        }
        QSqlDatabase db = m_pg->open(name);
        const auto report = store::Migrator(db).migrate(true);
        if (!report.ok()) {
            qWarning().noquote() << report.errorMessage();
            return {};
        }
        return name;
    }

private Q_SLOTS:
    void initTestCase() {
        if (!startPg(outbox::testing::migrateSchema))
            return;

        // Group roles are cluster-wide: create them once, then one LOGIN role
        // per group for the privilege tests (trust authentication).
        const QString name = freshDatabaseWithRoles();
        QVERIFY(!name.isEmpty());
        QSqlDatabase db = m_pg->open(name);
        for (const QString &group : kGroupRoles) {
            QVERIFY(sqlExec(
                db, QStringLiteral("CREATE ROLE tst_%1 LOGIN IN ROLE outbox_%1").arg(group)));
        }
    }
    void cleanupTestCase() { stopPg(); }
    // Dropped as we go: a cluster with hundreds of databases is slow to
    // shut down and to remove.
    void cleanup() {
        for (const QString &name : std::as_const(m_databases)) {
            m_pg->dropDatabase(name);
        }
        m_databases.clear();
    }

    void enqueueReturnsIdAndInserted() {
        QSqlDatabase db = m_pg->open(migratedDatabase());
        QVERIFY(db.isOpen());
        const auto e = enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                                  QStringLiteral("{\"invoice\": 42, \"note\": \"it's\"}"));
        QVERIFY2(e.ok, qPrintable(e.error.text()));
        QVERIFY(!e.id.isNull());
        QVERIFY(e.inserted);
        QCOMPARE(
            sqlScalar(
                db,
                QStringLiteral(
                    "SELECT concat_ws('|', namespace, topic, status, attempts, "
                    "payload->>'invoice', "
                    "payload->>'note', dedupe_key IS NULL, tenant_id IS NULL, locked_by IS NULL,"
                    " next_attempt_at <= now(), created_at = updated_at) "
                    "FROM outbox_events WHERE id = ?::uuid"),
                {e.id.toString(QUuid::WithoutBraces)}),
            QStringLiteral("billing|invoice.paid|pending|0|42|it's|t|t|t|t|t"));
        QCOMPARE(eventCount(db), QStringLiteral("1"));
    }

    void enqueueMakesUuidV7() {
        QSqlDatabase db = m_pg->open(migratedDatabase());
        const qint64 before =
            sqlScalar(db, QStringLiteral(
                              "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"))
                .toLongLong();
        QList<QUuid> ids;
        for (int i = 0; i < 20; ++i) {
            const auto e =
                enqueueSql(db, QStringLiteral("ns"), QStringLiteral("t"), QStringLiteral("{}"));
            QVERIFY2(e.ok, qPrintable(e.error.text()));
            ids << e.id;
        }
        const qint64 after =
            sqlScalar(db, QStringLiteral(
                              "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"))
                .toLongLong();
        QVERIFY(before > 0 && after >= before);
        for (const QUuid &id : ids) {
            const QByteArray bytes = id.toRfc4122();
            QCOMPARE(quint8(bytes.at(6)) >> 4, 7);    // version
            QCOMPARE(quint8(bytes.at(8)) >> 6, 0b10); // RFC 9562 variant
            qint64 millis = 0;
            for (int i = 0; i < 6; ++i) {
                millis = (millis << 8) | quint8(bytes.at(i));
            }
            QVERIFY2(millis >= before && millis <= after,
                     qPrintable(
                         QStringLiteral("%1 not in [%2, %3]").arg(millis).arg(before).arg(after)));
            QCOMPARE(core::uuidV7Time(id).toMSecsSinceEpoch(), millis);
        }
        QCOMPARE(QSet<QUuid>(ids.begin(), ids.end()).size(), ids.size());
    }

    void dedupeReturnsExisting() {
        QSqlDatabase db = m_pg->open(migratedDatabase());
        const auto first = enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                                      QStringLiteral("{\"v\": 1}"), QStringLiteral("invoice-42"));
        QVERIFY2(first.ok, qPrintable(first.error.text()));
        QVERIFY(first.inserted);
        const auto again = enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                                      QStringLiteral("{\"v\": 2}"), QStringLiteral("invoice-42"));
        QVERIFY2(again.ok, qPrintable(again.error.text()));
        QVERIFY(!again.inserted);
        QCOMPARE(again.id, first.id);
        // The first payload wins; nothing was changed by the duplicate.
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT payload->>'v' FROM outbox_events")),
                 QStringLiteral("1"));

        // The key is scoped by namespace and topic.
        const auto otherTopic =
            enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.voided"),
                       QStringLiteral("{}"), QStringLiteral("invoice-42"));
        QVERIFY(otherTopic.ok && otherTopic.inserted && otherTopic.id != first.id);
        const auto otherNamespace =
            enqueueSql(db, QStringLiteral("shipping"), QStringLiteral("invoice.paid"),
                       QStringLiteral("{}"), QStringLiteral("invoice-42"));
        QVERIFY(otherNamespace.ok && otherNamespace.inserted);
        // Without a key there is no deduplication.
        QVERIFY(enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                           QStringLiteral("{}"))
                    .inserted);
        QVERIFY(enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                           QStringLiteral("{}"))
                    .inserted);
        QCOMPARE(eventCount(db), QStringLiteral("5"));
    }

    // Two producers enqueue the same key at once. The second waits on the
    // unique index for the first transaction: after a commit it gets the
    // first event's id with inserted = false; after a rollback it inserts.
    void dedupeRace_data() {
        QTest::addColumn<bool>("commitFirst");
        QTest::newRow("first commits") << true;
        QTest::newRow("first rolls back") << false;
    }

    void dedupeRace() {
        QFETCH(bool, commitFirst);
        const QString name = migratedDatabase();
        QSqlDatabase first = m_pg->open(name);
        QSqlDatabase observer = m_pg->open(name);
        QVERIFY(first.transaction());
        const auto mine =
            enqueueSql(first, QStringLiteral("orders"), QStringLiteral("order.placed"),
                       QStringLiteral("{\"by\": 1}"), QStringLiteral("order-7"));
        QVERIFY2(mine.ok && mine.inserted, qPrintable(mine.error.text()));

        Enqueued theirs;
        const core::ConnInfo conn = info(name);
        std::unique_ptr<QThread> thread(QThread::create([&] {
            const QString connection = store::uniqueConnectionName(QStringLiteral("racer"));
            {
                const auto db = store::openDatabase(conn, connection);
                if (db.ok()) {
                    theirs = enqueueSql(db.value(), QStringLiteral("orders"),
                                        QStringLiteral("order.placed"),
                                        QStringLiteral("{\"by\": 2}"), QStringLiteral("order-7"));
                }
            }
            store::closeDatabase(connection);
        }));
        thread->start();
        // The racer is blocked on the first transaction's index entry.
        QTRY_COMPARE_WITH_TIMEOUT(
            sqlScalar(observer, QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE "
                                               "datname = current_database() AND "
                                               "wait_event_type = 'Lock'")),
            QStringLiteral("1"), 30000);
        QVERIFY(!thread->isFinished());

        if (commitFirst) {
            QVERIFY(first.commit());
        } else {
            QVERIFY(first.rollback());
        }
        QVERIFY(thread->wait(30000));
        QVERIFY2(theirs.ok, qPrintable(theirs.error.text()));
        if (commitFirst) {
            QVERIFY(!theirs.inserted);
            QCOMPARE(theirs.id, mine.id);
            QCOMPARE(
                sqlScalar(observer, QStringLiteral("SELECT payload->>'by' FROM outbox_events")),
                QStringLiteral("1"));
        } else {
            QVERIFY(theirs.inserted);
            QVERIFY(theirs.id != mine.id);
            QCOMPARE(
                sqlScalar(observer, QStringLiteral("SELECT payload->>'by' FROM outbox_events")),
                QStringLiteral("2"));
        }
        QCOMPARE(eventCount(observer), QStringLiteral("1"));
    }

    // outbox_enqueue runs with its owner's rights: a caller's temporary
    // table must not be able to stand in for outbox_events.
    void enqueueIgnoresTemporaryShadows() {
        QSqlDatabase db = m_pg->open(migratedDatabase());
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT array_to_string(proconfig, ',') FROM pg_proc "
                                              "WHERE proname = 'outbox_enqueue'")),
                 QStringLiteral("search_path=pg_catalog, public, pg_temp"));
        QVERIFY(sqlExec(
            db, QStringLiteral(
                    "CREATE TEMP TABLE outbox_events (LIKE public.outbox_events INCLUDING ALL)")));
        const auto e =
            enqueueSql(db, QStringLiteral("ns"), QStringLiteral("t"), QStringLiteral("{}"));
        QVERIFY2(e.ok && e.inserted, qPrintable(e.error.text()));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM public.outbox_events")),
                 QStringLiteral("1"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM pg_temp.outbox_events")),
                 QStringLiteral("0"));
    }

    // The outbox pattern itself: the event exists exactly when the business
    // change does.
    void enqueueFollowsTheProducerTransaction() {
        QSqlDatabase db = m_pg->open(migratedDatabase());
        QVERIFY(sqlExec(db, QStringLiteral("CREATE TABLE orders (id integer PRIMARY KEY)")));
        for (const bool commit : {false, true}) {
            QVERIFY(db.transaction());
            QVERIFY(sqlExec(db, QStringLiteral("INSERT INTO orders VALUES (1)")));
            const auto e = enqueueSql(db, QStringLiteral("orders"), QStringLiteral("order.placed"),
                                      QStringLiteral("{\"order\": 1}"), QStringLiteral("order-1"));
            QVERIFY2(e.ok && e.inserted, qPrintable(e.error.text()));
            QVERIFY(commit ? db.commit() : db.rollback());
            const QString expected = commit ? QStringLiteral("1") : QStringLiteral("0");
            QCOMPARE(eventCount(db), expected);
            QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM orders")), expected);
        }
    }

    void tenantAndDedupeKey_data() {
        QTest::addColumn<QString>("dedupeKey");
        QTest::addColumn<bool>("accepted");
        const QString tenant = QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2");
        QTest::newRow("tenant prefix") << tenant + QStringLiteral("/invoice-1") << true;
        QTest::newRow("upper-case tenant prefix")
            << tenant.toUpper() + QStringLiteral("/invoice-1") << true;
        QTest::newRow("no key") << QString() << true;
        QTest::newRow("other tenant")
            << QStringLiteral("00000000-9dc0-11d1-b245-5ffdce74fad2/invoice-1") << false;
        QTest::newRow("no prefix") << QStringLiteral("invoice-1") << false;
        QTest::newRow("prefix without slash") << tenant + QStringLiteral("invoice-1") << false;
    }

    void tenantAndDedupeKey() {
        QFETCH(QString, dedupeKey);
        QFETCH(bool, accepted);
        const QString tenant = QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2");
        QSqlDatabase db = m_pg->open(migratedDatabase());
        const auto e = enqueueSql(db, QStringLiteral("billing"), QStringLiteral("invoice.paid"),
                                  QStringLiteral("{}"),
                                  dedupeKey.isNull() ? QVariant() : QVariant(dedupeKey), tenant);
        QCOMPARE(e.ok, accepted);
        if (accepted) {
            QCOMPARE(sqlScalar(db, QStringLiteral("SELECT tenant_id FROM outbox_events")), tenant);
            QCOMPARE(eventCount(db), QStringLiteral("1"));
        } else {
            QCOMPARE(e.error.nativeErrorCode(), QStringLiteral("22023"));
            const core::Error mapped = store::toError(e.error, QStringLiteral("enqueue"));
            QCOMPARE(mapped.kind, core::ErrorKind::Invalid);
            QVERIFY2(mapped.message.contains(QStringLiteral("does not belong to tenant ") + tenant),
                     qPrintable(mapped.message));
            QVERIFY2(mapped.message.contains(dedupeKey), qPrintable(mapped.message));
            QCOMPARE(eventCount(db), QStringLiteral("0"));
        }
        // A key without a tenant is never checked against one.
        QVERIFY(enqueueSql(db, QStringLiteral("billing"), QStringLiteral("x"), QStringLiteral("{}"),
                           QStringLiteral("anything"))
                    .inserted);
    }

    void invalidArgumentsRejected_data() {
        QTest::addColumn<QVariant>("nameSpace");
        QTest::addColumn<QVariant>("topic");
        QTest::addColumn<QVariant>("payload");
        QTest::addColumn<QVariant>("dedupeKey");
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("message");

        const QVariant ns(QStringLiteral("billing"));
        const QVariant topic(QStringLiteral("invoice.paid"));
        const QVariant payload(QStringLiteral("{}"));
        QTest::newRow("empty namespace")
            << QVariant(QStringLiteral("")) << topic << payload << QVariant()
            << QStringLiteral("22023") << QStringLiteral("namespace must not be empty");
        QTest::newRow("blank namespace")
            << QVariant(QStringLiteral("  ")) << topic << payload << QVariant()
            << QStringLiteral("22023") << QStringLiteral("namespace must not be empty");
        QTest::newRow("null namespace")
            << QVariant() << topic << payload << QVariant() << QStringLiteral("22023")
            << QStringLiteral("namespace must not be empty");
        QTest::newRow("empty topic")
            << ns << QVariant(QStringLiteral("")) << payload << QVariant()
            << QStringLiteral("22023") << QStringLiteral("topic must not be empty");
        QTest::newRow("json null payload")
            << ns << topic << QVariant(QStringLiteral("null")) << QVariant()
            << QStringLiteral("22023") << QStringLiteral("payload must be a JSON value");
        QTest::newRow("sql null payload")
            << ns << topic << QVariant() << QVariant() << QStringLiteral("22023")
            << QStringLiteral("payload must be a JSON value");
        QTest::newRow("invalid json")
            << ns << topic << QVariant(QStringLiteral("{oops")) << QVariant()
            << QStringLiteral("22P02") << QStringLiteral("invalid input syntax for type json");
        QTest::newRow("empty dedupe key")
            << ns << topic << payload << QVariant(QStringLiteral("")) << QStringLiteral("22023")
            << QStringLiteral("dedupe_key must be NULL");
    }

    void invalidArgumentsRejected() {
        QFETCH(QVariant, nameSpace);
        QFETCH(QVariant, topic);
        QFETCH(QVariant, payload);
        QFETCH(QVariant, dedupeKey);
        QFETCH(QString, code);
        QFETCH(QString, message);
        QSqlDatabase db = m_pg->open(migratedDatabase());
        const auto e = enqueueSql(db, nameSpace, topic, payload, dedupeKey);
        QVERIFY(!e.ok);
        QCOMPARE(e.error.nativeErrorCode(), code);
        const core::Error mapped = store::toError(e.error, QStringLiteral("enqueue"));
        QCOMPARE(mapped.kind, core::ErrorKind::Invalid);
        QVERIFY2(mapped.message.contains(message), qPrintable(mapped.message));
        QCOMPARE(eventCount(db), QStringLiteral("0"));
    }

    // NOTIFY is a wake-up hint: one per inserting statement at most, folded
    // per transaction, constant empty payload.
    void notifiesOnInsert() {
        const QString name = migratedDatabase();
        QSqlDatabase listener = m_pg->open(name);
        QSqlDatabase producer = m_pg->open(name);
        QVERIFY(listener.driver()->subscribeToNotification(store::kNotifyChannel));
        QSignalSpy spy(listener.driver(), &QSqlDriver::notification);
        QVERIFY(spy.isValid());

        // A sentinel sent after an action, in its own transaction, arrives
        // after every notification of that action: count hints up to it.
        int sentinels = 0;
        const auto sendSentinel = [&]() -> QString {
            const QString sentinel = QStringLiteral("sentinel-%1").arg(++sentinels);
            return sqlExec(producer, QStringLiteral("SELECT pg_notify('outbox_events', ?)"),
                           {sentinel})
                       ? sentinel
                       : QString();
        };
        const auto arrived = [&](const QString &sentinel) {
            return !spy.isEmpty() && spy.last().at(2).toString() == sentinel;
        };
        const auto hints = [&]() {
            int count = 0;
            for (const QList<QVariant> &signal : std::as_const(spy)) {
                if (signal.at(0).toString() == store::kNotifyChannel &&
                    signal.at(2).toString().isEmpty()) {
                    ++count;
                }
            }
            return count;
        };
#define EXPECT_HINTS(expected)                                                                     \
    do {                                                                                           \
        const QString sentinel = sendSentinel();                                                   \
        QVERIFY(!sentinel.isEmpty());                                                              \
        QTRY_VERIFY_WITH_TIMEOUT(arrived(sentinel), 30000);                                        \
        QCOMPARE(hints(), expected);                                                               \
        spy.clear();                                                                               \
    } while (false)

        EXPECT_HINTS(0);
        QVERIFY(
            enqueueSql(producer, QStringLiteral("ns"), QStringLiteral("t"), QStringLiteral("{}"))
                .inserted);
        EXPECT_HINTS(1);

        QVERIFY(
            sqlExec(producer,
                    QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload) "
                                   "SELECT outbox_uuid_v7(), 'ns', 't', jsonb_build_object('n', n) "
                                   "FROM generate_series(1, 25) AS n")));
        EXPECT_HINTS(1);

        QVERIFY(producer.transaction());
        for (int i = 0; i < 3; ++i) {
            QVERIFY(enqueueSql(producer, QStringLiteral("ns"), QStringLiteral("t"),
                               QStringLiteral("{}"))
                        .inserted);
        }
        QVERIFY(producer.commit());
        EXPECT_HINTS(1);

        // A rolled-back insert wakes nobody.
        QVERIFY(producer.transaction());
        QVERIFY(
            enqueueSql(producer, QStringLiteral("ns"), QStringLiteral("t"), QStringLiteral("{}"))
                .inserted);
        QVERIFY(producer.rollback());
        EXPECT_HINTS(0);
#undef EXPECT_HINTS
        QCOMPARE(eventCount(producer), QStringLiteral("29"));
    }

    // What each outbox_* role may do. Every row runs on a fresh database,
    // connected as a LOGIN member of the group role.
    void privileges_data() {
        QTest::addColumn<QString>("role");
        QTest::addColumn<QString>("sql");
        QTest::addColumn<bool>("allowed");

        const QString enqueue =
            QStringLiteral("SELECT * FROM outbox_enqueue('billing', 'invoice.paid', '{\"n\": 1}')");
        const QString readEvents = QStringLiteral("SELECT count(*) FROM outbox_events");
        const QString updateStatus = QStringLiteral(
            "UPDATE outbox_events SET status = 'dead', last_error = 'x', updated_at = now()");
        const QString updatePayload = QStringLiteral("UPDATE outbox_events SET payload = '{}'");
        const QString deleteEvents = QStringLiteral("DELETE FROM outbox_events");
        const QString insertEvent =
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload) "
                           "VALUES (outbox_uuid_v7(), 'ops', 'replayed', '{}')");
        const QString readAttempts = QStringLiteral("SELECT count(*) FROM outbox_attempts");
        const QString insertAttempt =
            QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, error) "
                           "VALUES ('%1', 1, 'HTTP 503')");
        const QString insertAudit =
            QStringLiteral("INSERT INTO outbox_audit (action, filter, affected) VALUES ('requeue', "
                           "'status=dead', 1)");
        const QString auditEvent =
            QStringLiteral("INSERT INTO outbox_audit_events (audit_id, event_id) "
                           "VALUES ('%2', '%1')");
        const QString finishAudit = QStringLiteral("UPDATE outbox_audit SET finished_at = now()");
        const QString deleteAudit = QStringLiteral("DELETE FROM outbox_audit");
        const QString readVersion =
            QStringLiteral("SELECT max(version) FROM outbox_schema_version");

        const auto row = [](const char *role, const char *what, const QString &sql, bool allowed) {
            QTest::addRow("%s: %s", role, what) << QString::fromLatin1(role) << sql << allowed;
        };
        row("producer", "enqueue", enqueue, true);
        row("producer", "read events", readEvents, false);
        row("producer", "update events", updateStatus, false);
        row("producer", "delete events", deleteEvents, false);
        row("producer", "insert events directly", insertEvent, false);
        row("producer", "read attempts", readAttempts, false);
        row("producer", "read schema version", readVersion, true);
        row("producer", "begin an audited run",
            QStringLiteral("SELECT outbox_op_begin('retry', 'x', 'u', 'h', 'a', 1)"), false);

        row("dispatcher", "read events", readEvents, true);
        // Only as its own operations could (tst_hardening2): an event
        // never claimed does not go to dead.
        row("dispatcher", "update delivery columns outside a transition", updateStatus, false);
        row("dispatcher", "update payload", updatePayload, false);
        row("dispatcher", "insert events", insertEvent, false);
        row("dispatcher", "delete events", deleteEvents, false);
        row("dispatcher", "enqueue", enqueue, false);
        row("dispatcher", "insert an attempt without its nack", insertAttempt, false);
        row("dispatcher", "write audit", insertAudit, false);
        row("dispatcher", "read schema version", readVersion, true);

        // Operators change events only through the outbox_op_* functions
        // (tst_operatorrules); no direct writes to events or the audit log.
        row("operator", "read events", readEvents, true);
        row("operator", "update events", updateStatus, false);
        row("operator", "update payload", updatePayload, false);
        row("operator", "delete events", deleteEvents, false);
        row("operator", "insert events", insertEvent, false);
        row("operator", "read attempts", readAttempts, true);
        row("operator", "write audit", insertAudit, false);
        row("operator", "link audit to events", auditEvent, false);
        row("operator", "finish audit", finishAudit, false);
        row("operator", "delete audit", deleteAudit, false);
        row("operator", "read schema version", readVersion, true);
        row("operator", "begin an audited run",
            QStringLiteral("SELECT outbox_op_begin('retry', 'x', 'u', 'h', 'a', 1)"), true);

        row("viewer", "read events", readEvents, true);
        row("viewer", "read attempts", readAttempts, true);
        row("viewer", "read audit",
            QStringLiteral("SELECT count(*) FROM outbox_audit, outbox_audit_events"), true);
        row("viewer", "read schema version", readVersion, true);
        row("viewer", "update events", updateStatus, false);
        row("viewer", "delete events", deleteEvents, false);
        row("viewer", "insert events", insertEvent, false);
        row("viewer", "enqueue", enqueue, false);
        row("viewer", "write audit", insertAudit, false);
    }

    void privileges() {
        QFETCH(QString, role);
        QFETCH(QString, sql);
        QFETCH(bool, allowed);

        const QString name = freshDatabaseWithRoles();
        QVERIFY(!name.isEmpty());
        QSqlDatabase admin = m_pg->open(name);
        const auto seed = enqueueSql(admin, QStringLiteral("seed"), QStringLiteral("seeded"),
                                     QStringLiteral("{}"));
        QVERIFY(seed.ok);
        const QString auditId = sqlScalar(
            admin,
            QStringLiteral(
                "INSERT INTO outbox_audit (action, filter) VALUES ('retry', 'seed') RETURNING id"));
        QVERIFY(!auditId.isEmpty());
        const QString statement =
            QString(sql)
                .replace(QLatin1String("%1"), seed.id.toString(QUuid::WithoutBraces))
                .replace(QLatin1String("%2"), auditId);

        const QString connection = store::uniqueConnectionName(QStringLiteral("role"));
        {
            const auto db =
                store::openDatabase(info(name, QStringLiteral("tst_") + role), connection);
            QVERIFY2(db.ok(), qPrintable(db.errorMessage()));
            QCOMPARE(sqlScalar(db.value(), QStringLiteral("SELECT current_user")),
                     QStringLiteral("tst_") + role);
            const auto result =
                store::exec(db.value(), statement, {}, QStringLiteral("as ") + role);
            if (allowed) {
                QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
            } else {
                QVERIFY2(!result.ok(), "the statement should have been refused");
                QCOMPARE(result.errorKind(), core::ErrorKind::PermissionDenied);
                // A grant that is missing, or a row-level security policy
                // (the dispatcher's, sql/012_hardening.sql).
                QVERIFY2(result.errorMessage().contains(QLatin1String("permission denied")) ||
                             result.errorMessage().contains(QLatin1String("row-level security")),
                         qPrintable(result.errorMessage()));
            }
        }
        store::closeDatabase(connection);
    }

    // The dispatcher's real statements (prepared claim, fenced ack/nack with
    // the attempts insert, release, sweep) run with outbox_dispatcher only;
    // the producer's OutboxStore::enqueue runs with outbox_producer only.
    void rolesRunTheStore() {
        const QString name = freshDatabaseWithRoles();
        QVERIFY(!name.isEmpty());
        const QString producerConnection = store::uniqueConnectionName(QStringLiteral("producer"));
        const QString dispatcherConnection =
            store::uniqueConnectionName(QStringLiteral("dispatcher"));
        {
            const auto producerDb =
                store::openDatabase(info(name, QStringLiteral("tst_producer")), producerConnection);
            QVERIFY2(producerDb.ok(), qPrintable(producerDb.errorMessage()));
            store::OutboxStore producer(producerDb.value());
            for (int i = 0; i < 4; ++i) {
                store::EnqueueRequest request;
                request.nameSpace = QStringLiteral("billing");
                request.topic = QStringLiteral("invoice.paid");
                request.payload = QByteArrayLiteral("{\"n\": 1}");
                request.dedupeKey = QStringLiteral("k%1").arg(i);
                const auto e = producer.enqueue(request);
                QVERIFY2(e.ok() && e->inserted, qPrintable(e.errorMessage()));
            }

            const auto dispatcherDb = store::openDatabase(
                info(name, QStringLiteral("tst_dispatcher")), dispatcherConnection);
            QVERIFY2(dispatcherDb.ok(), qPrintable(dispatcherDb.errorMessage()));
            store::OutboxStore dispatcher(dispatcherDb.value());
            const QUuid worker = QUuid::createUuid();
            store::ClaimOptions options;
            options.maxAttempts = 1;
            const auto claimed = dispatcher.claimBatch(worker, options);
            QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
            QCOMPARE(claimed->size(), 4);
            const auto acked =
                dispatcher.ack(worker, {{claimed->at(0).id, claimed->at(0).attempts}});
            QVERIFY2(acked.ok() && acked->applied == 1, qPrintable(acked.errorMessage()));
            store::Nack nack;
            nack.id = claimed->at(1).id;
            nack.attempts = claimed->at(1).attempts;
            nack.error = QStringLiteral("HTTP 503");
            nack.httpStatus = 503;
            const auto nacked = dispatcher.nack(worker, {nack}, options.maxAttempts);
            QVERIFY2(nacked.ok() && nacked->applied == 1, qPrintable(nacked.errorMessage()));
            const auto released = dispatcher.release(
                worker, {{claimed->at(2).id, claimed->at(2).attempts, /*attemptMade=*/true}},
                options.maxAttempts);
            QVERIFY2(released.ok() && released->applied == 1, qPrintable(released.errorMessage()));
            // At its last attempt: dead at once, nothing left for a sweep.
            QCOMPARE(released->madeDead, QList<QUuid>{claimed->at(2).id});
            for (const auto scope : {store::SweepScope::ExpiredLeases, store::SweepScope::All}) {
                const auto swept = dispatcher.deadSweep(options.maxAttempts, {}, scope);
                QVERIFY2(swept.ok(), qPrintable(swept.errorMessage()));
                QCOMPARE(swept.value(), qint64(0));
            }
            const auto due = dispatcher.timeUntilNextDue();
            QVERIFY2(due.ok(), qPrintable(due.errorMessage()));
            QVERIFY(!due->has_value());
            // The producer cannot act as a dispatcher.
            const auto refused = producer.claimBatch(worker, options);
            QVERIFY(!refused.ok());
            QCOMPARE(refused.errorKind(), core::ErrorKind::PermissionDenied);
        }
        store::closeDatabase(producerConnection);
        store::closeDatabase(dispatcherConnection);
        QSqlDatabase admin = m_pg->open(name);
        QCOMPARE(
            sqlScalar(admin,
                      QStringLiteral(
                          "SELECT string_agg(status, ',' ORDER BY status) FROM outbox_events")),
            QStringLiteral("dead,dead,delivered,processing"));
        QCOMPARE(sqlScalar(admin, QStringLiteral("SELECT count(*) FROM outbox_attempts")),
                 QStringLiteral("1"));
    }
};

QTEST_GUILESS_MAIN(TestSchema)
#include "tst_schema.moc"
