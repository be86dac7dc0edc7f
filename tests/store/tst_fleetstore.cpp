// The fleet's store side: the fleet file, one database's snapshot read from
// the cheap sources (checked against the table it describes, as a viewer
// login, and by the shape of its plan rather than its speed), and the rule
// that judges it.

#include "store/fleetfile.h"
#include "store/fleethealth.h"
#include "store/fleetstore.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestFleetStore final : public QObject, protected PgTestCase {
    Q_OBJECT

private:
    void insert(const QString &ns, const QString &status, int count, const QString &dueAgo,
                const QString &error = {}) {
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                       " status, next_attempt_at, locked_by, locked_until,"
                                       " last_error)"
                                       " SELECT outbox_uuid_v7(), ?, 't', '{}', ?,"
                                       " now() - ?::interval,"
                                       " CASE WHEN ? = 'processing' THEN gen_random_uuid() END,"
                                       " CASE WHEN ? = 'processing' THEN now() + interval '1m' END,"
                                       " nullif(?, '') || ' #' || g"
                                       " FROM generate_series(1, ?) g"),
                        {ns, status, dueAgo, status, status, error, count}));
    }

    core::Result<store::FleetSnapshot> readAs(const QString &user,
                                              store::FleetProbe::Options options = {}) {
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value();
        if (!user.isEmpty())
            info.user = user;
        store::Session session(store::readOnlySession(info), store::Session::Options{});
        if (auto opened = session.open(); !opened)
            return opened.error();
        store::FleetProbe probe(options);
        return probe.read(session.database());
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_fleet_"), {QStringLiteral("viewer")});
    }
    void init() { openFreshDb(); }
    void cleanup() { dropFreshDb(); }
    void cleanupTestCase() { stopPg(); }

    void parsesAFleetFile() {
        const auto fleet = store::parseFleet(
            QStringLiteral("# the payments team's outboxes\n"
                           "[orders]\n"
                           "conninfo = host=db1 port=5433 dbname=orders user=viewer\n"
                           "group = payments\n"
                           "owner = team-payments\n"
                           "\n"
                           "; a service of pg_service.conf\n"
                           "[billing]\n"
                           "service = billing\n"
                           "[uri]\n"
                           "conninfo = postgresql://viewer@db3/ledger\n"),
            QStringLiteral("fleet.conf"));
        QVERIFY2(fleet.ok(), qPrintable(fleet.errorMessage()));
        QCOMPARE(fleet->size(), 3);
        QCOMPARE(fleet->at(0).name, QStringLiteral("orders"));
        QCOMPARE(fleet->at(0).target.host, QStringLiteral("db1"));
        QCOMPARE(fleet->at(0).target.port, 5433);
        QCOMPARE(fleet->at(0).group, QStringLiteral("payments"));
        QCOMPARE(fleet->at(0).owner, QStringLiteral("team-payments"));
        QCOMPARE(fleet->at(1).target.option(QStringLiteral("service")), QStringLiteral("billing"));
        QCOMPARE(fleet->at(2).target.dbname, QStringLiteral("ledger"));
    }

    void fleetFileErrorsNameTheLineAndTheFix_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("password in conninfo")
            << QStringLiteral("[a]\nconninfo = host=x password=secret\n")
            << QStringLiteral("f:2: the connection of \"a\" holds a password");
        QTest::newRow("password key") << QStringLiteral("[a]\nservice = a\npassword = x\n")
                                      << QStringLiteral("f:3: a fleet file is meant to be shared");
        QTest::newRow("unknown key") << QStringLiteral("[a]\nservice = a\nhots = x\n")
                                     << QStringLiteral("f:3: unknown key \"hots\"");
        QTest::newRow("no server") << QStringLiteral("\n[a]\ngroup = g\n")
                                   << QStringLiteral("f:2: the database \"a\" names no server");
        QTest::newRow("twice") << QStringLiteral("[a]\nservice = a\n[a]\nservice = b\n")
                               << QStringLiteral("f:3: the name \"a\" is used twice");
        QTest::newRow("before section") << QStringLiteral("service = a\n")
                                        << QStringLiteral("f:1: \"service\" comes before any");
        QTest::newRow("bad conninfo")
            << QStringLiteral("[a]\nconninfo = host\n")
            << QStringLiteral("f:2: the connection of \"a\" is not valid");
        QTest::newRow("empty") << QStringLiteral("# nothing\n")
                               << QStringLiteral("the fleet names no database");
    }
    void fleetFileErrorsNameTheLineAndTheFix() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const auto fleet = store::parseFleet(text, QStringLiteral("f"));
        QVERIFY(!fleet.ok());
        QVERIFY2(fleet.errorMessage().contains(expected), qPrintable(fleet.errorMessage()));
        QVERIFY(!fleet.errorMessage().contains(QLatin1String("secret")));
    }

    void snapshotMatchesTheTable() {
        insert(QStringLiteral("a"), QStringLiteral("pending"), 7, QStringLiteral("90 seconds"));
        insert(QStringLiteral("a"), QStringLiteral("pending"), 3, QStringLiteral("-1 hour"));
        insert(QStringLiteral("b"), QStringLiteral("pending"), 5, QStringLiteral("1 hour"));
        insert(QStringLiteral("a"), QStringLiteral("processing"), 2, QStringLiteral("0s"));
        insert(QStringLiteral("a"), QStringLiteral("delivered"), 11, QStringLiteral("0s"));
        insert(QStringLiteral("b"), QStringLiteral("dead"), 4, QStringLiteral("0s"),
               QStringLiteral("HTTP 503 from runner"));
        // b is paused: its due events are held, not due.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_pause('b', NULL, 'maintenance')")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                             " repeat('x', 40), 'h', 1, 'v', 'a', NULL, 'u', 1,"
                                             " 60000, now())")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                             " repeat('y', 40), 'h', 2, 'v', 'a', NULL, 'u', 1,"
                                             " 100, now())")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_dispatchers SET heartbeat_at ="
                                             " now() - interval '1 minute' WHERE pid = 2")));
        // Two minutes of history: 30 and 12 delivered, 3 died.
        QVERIFY(sqlExec(
            m_db, QStringLiteral("INSERT INTO outbox_throughput_history (minute, worker_id,"
                                 " delivered, failed, dead) VALUES"
                                 " (date_trunc('minute', now()), gen_random_uuid(), 12, 1, 1),"
                                 " (date_trunc('minute', now()) - interval '1 minute',"
                                 "  gen_random_uuid(), 30, 2, 2),"
                                 " (date_trunc('minute', now()) - interval '2 hours',"
                                 "  gen_random_uuid(), 99, 99, 99)")));

        auto s = readAs(QStringLiteral("tst_fleet_viewer"));
        QVERIFY2(s.ok(), qPrintable(s.errorMessage()));
        QCOMPARE(s->due, (store::FleetCount{7, false}));
        QCOMPARE(s->waiting, (store::FleetCount{8, false}));
        QCOMPARE(s->processing, 2);
        QCOMPARE(s->dead, (store::FleetCount{4, false}));
        QVERIFY(s->oldestDueAt.isValid());
        QVERIFY(s->oldestDueAgeSeconds() >= 89);
        QCOMPARE(s->dispatchersAlive, 1);
        QCOMPARE(s->dispatchersGone, 1);
        QCOMPARE(s->pausedNamespaces, QStringList{QStringLiteral("b")});
        QCOMPARE(s->diedLastHour, 3);
        QCOMPARE(s->diedRecentMinute, 2);
        QCOMPARE(s->deliveredPerMinute.size(), store::FleetSnapshot::kSparkMinutes);
        QCOMPARE(s->deliveredPerMinute.last(), 12);
        QCOMPARE(s->deliveredPerMinute[store::FleetSnapshot::kSparkMinutes - 2], 30);
        QVERIFY(s->topError.has_value());
        QCOMPARE(s->topError->count, 4);
        QVERIFY2(s->topError->signature.contains(QLatin1String("HTTP")),
                 qPrintable(s->topError->signature));
    }

    void beyondTheCapCountsAreMarkedEstimated() {
        insert(QStringLiteral("a"), QStringLiteral("pending"), 30, QStringLiteral("1 minute"));
        insert(QStringLiteral("a"), QStringLiteral("dead"), 30, QStringLiteral("0s"),
               QStringLiteral("boom"));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        store::FleetProbe::Options options;
        options.countCap = 10;
        options.errorSample = 5;
        auto s = readAs({}, options);
        QVERIFY2(s.ok(), qPrintable(s.errorMessage()));
        QVERIFY(s->due.estimated);
        QCOMPARE(s->due.value, 10); // at least the cap
        QVERIFY(s->dead.estimated);
        QVERIFY(s->dead.value >= 11);
        QVERIFY(s->topErrorSampled);
        QCOMPARE(s->topError->count, 5);
        QCOMPARE(store::fleetCountText(s->due), QStringLiteral("~10"));
    }

    // The counts read index heads and stop at the cap: the plan must not
    // scan the table, whatever it holds.
    void countsReadNoTableScan() {
        QVERIFY(sqlExec(
            m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                 " status, next_attempt_at)"
                                 " SELECT outbox_uuid_v7(), 'n', 't', '{}',"
                                 " (ARRAY['pending','delivered','dead','delivered'])[1 + g % 4],"
                                 " now() - (g % 100) * interval '1 s'"
                                 " FROM generate_series(1, 20000) g")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        // EXPLAIN takes no parameters: the cap goes in as a literal.
        QString sql = store::FleetProbe::countsSql();
        sql.replace(QLatin1Char('?'), QLatin1String("10001"));
        const QString plan =
            sqlColumn(m_db, QStringLiteral("EXPLAIN ") + sql).join(QLatin1Char('\n'));
        QVERIFY2(!plan.isEmpty(), "EXPLAIN failed");
        QVERIFY2(!plan.contains(QLatin1String("Seq Scan on outbox_events")), qPrintable(plan));
        QVERIFY2(plan.contains(QLatin1String("Limit")), qPrintable(plan));
    }

    void judgesBySeverity() {
        store::FleetThresholds t; // 300 s oldest due, 10 deaths/min, 120 s unclaimed
        store::FleetSnapshot s;
        s.serverTime = QDateTime::currentDateTimeUtc();
        s.dispatchersAlive = 1;
        QCOMPARE(store::assessFleet(s, t).state, store::FleetState::Ok);

        s.diedLastHour = 3;
        auto h = store::assessFleet(s, t);
        QCOMPARE(h.state, store::FleetState::Warning);
        QCOMPARE(h.reasons, QStringList{QStringLiteral("3 events died in the last hour")});

        s.oldestDueAt = s.serverTime.addSecs(-600);
        s.due = {5, false};
        h = store::assessFleet(s, t);
        QCOMPARE(h.state, store::FleetState::Alert);
        QVERIFY2(h.reasons.first().contains(QLatin1String("10 min (alert after 5 min)")),
                 qPrintable(h.reasons.first()));

        store::FleetSnapshot idle;
        idle.serverTime = s.serverTime;
        idle.due = {4, false};
        idle.oldestDueAt = idle.serverTime.addSecs(-150);
        h = store::assessFleet(idle, t);
        QCOMPARE(h.state, store::FleetState::Alert);
        QVERIFY2(h.reasons.join(QLatin1Char('|')).contains(QLatin1String("no dispatcher")),
                 qPrintable(h.reasons.join(QLatin1Char('|'))));

        store::FleetSnapshot dying;
        dying.serverTime = s.serverTime;
        dying.dispatchersAlive = 2;
        dying.diedRecentMinute = 11;
        QCOMPARE(store::assessFleet(dying, t).state, store::FleetState::Alert);
        t.deathsPerMinute = 0; // off
        dying.diedLastHour = 11;
        QCOMPARE(store::assessFleet(dying, t).state, store::FleetState::Warning);

        QVERIFY(store::fleetSeverity(store::FleetState::Alert) >
                store::fleetSeverity(store::FleetState::Unreachable));
        QVERIFY(store::fleetSeverity(store::FleetState::Unreachable) >
                store::fleetSeverity(store::FleetState::Warning));
        QVERIFY(store::fleetSeverity(store::FleetState::Warning) >
                store::fleetSeverity(store::FleetState::Ok));
        QCOMPARE(store::fleetStateName(store::FleetState::Unreachable),
                 QStringLiteral("unreachable"));
    }
};

QTEST_GUILESS_MAIN(TestFleetStore)
#include "tst_fleetstore.moc"
