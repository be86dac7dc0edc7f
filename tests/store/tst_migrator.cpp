// Migrations (store::Migrator) and the connection layer under them
// (store::openDatabase, toError, isConnectionLost), against a real cluster.

#include "core/conninfo.h"
#include "store/database.h"
#include "store/migrator.h"
#include "support/pgtestcase.h"

#include <QDir>
#include <QFile>
#include <QSemaphore>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QtTest>

#include <memory>
#include <vector>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

const QString kOutboxObjects = QStringLiteral(
    "SELECT count(*) FROM (VALUES (to_regclass('outbox_events')), (to_regclass('outbox_attempts')),"
    " (to_regclass('outbox_audit')), (to_regclass('outbox_audit_events')),"
    " (to_regproc('outbox_enqueue')::oid::regclass),"
    " (to_regprocedure('outbox_uuid_v7()')::oid::regclass)) AS t(o) WHERE o IS NOT NULL");

const QString kVersionRows = QStringLiteral("SELECT coalesce(string_agg(version || ':' || name || "
                                            "'@' || applied_at::text, ',' ORDER BY version), '')"
                                            " FROM outbox_schema_version");

const QString kOutboxRoleCount =
    QStringLiteral("SELECT count(*) FROM pg_roles WHERE rolname IN ('outbox_producer', "
                   "'outbox_dispatcher', 'outbox_operator', 'outbox_viewer')");

struct ThreadOutcome {
    bool ok = false;
    QString error;
    QStringList applied;
};

} // namespace

class TestMigrator final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    core::ConnInfo info(const QString &db, const QString &user = {}) const {
        auto parsed = core::ConnInfo::parse(m_pg->connInfo(db));
        if (!parsed.ok()) {
            qWarning().noquote() << "cannot parse the fixture's connInfo:" << parsed.errorMessage();
            return {};
        }
        core::ConnInfo result = parsed.value();
        if (!user.isEmpty()) {
            result.user = user;
        }
        return result;
    }

    // `again` ran on an up-to-date database: it applied nothing, and the
    // version table still reads `versionRows`.
    static void verifyNothingApplied(const core::Result<store::Migrator::Report> &again,
                                     QSqlDatabase db, const QString &versionRows) {
        QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
        QVERIFY(again->applied.isEmpty());
        QCOMPARE(again->fromVersion, store::Migrator::latestVersion());
        QCOMPARE(again->toVersion, store::Migrator::latestVersion());
        QCOMPARE(sqlScalar(db, kVersionRows), versionRows);
    }

private Q_SLOTS:
    void initTestCase() {
        if (!startPg())
            return;
        QVERIFY(store::Migrator::latestVersion() >= 1);
    }
    void cleanupTestCase() { stopPg(); }

    // The binary holds exactly the numbered migrations of sql/: one the build
    // left out, or one no longer in the tree, fails here.
    void compiledMigrationsAreThoseOfTheSourceTree() {
        const QString source = qEnvironmentVariable("OUTBOX_SOURCE_DIR");
        QVERIFY2(!source.isEmpty(), "OUTBOX_SOURCE_DIR is not set (ctest sets it)");
        const QStringList migrations{QStringLiteral("[0-9][0-9][0-9]_*.sql")};
        const QStringList inTree =
            QDir(source + QStringLiteral("/sql")).entryList(migrations, QDir::Files, QDir::Name);
        const QStringList compiled =
            QDir(QStringLiteral(":/sql")).entryList(migrations, QDir::Files, QDir::Name);
        QVERIFY(!inTree.isEmpty());
        QStringList missing;
        for (const QString &file : inTree) {
            if (!compiled.contains(file))
                missing.append(file);
        }
        QStringList stray;
        for (const QString &file : compiled) {
            if (!inTree.contains(file))
                stray.append(file);
        }
        QVERIFY2(missing.isEmpty() && stray.isEmpty(),
                 qPrintable(QStringLiteral("in sql/ but not in the binary: [%1]; in the binary but "
                                           "not in sql/: [%2] (src/store/CMakeLists.txt compiles "
                                           "every sql/NNN_*.sql in)")
                                .arg(missing.join(QStringLiteral(", ")),
                                     stray.join(QStringLiteral(", ")))));
        QCOMPARE(store::Migrator::latestVersion(), inTree.last().left(3).toInt());
    }

    // First, while no test has created the outbox roles in this cluster.
    void dryRunChangesNothing() {
        const QString name = m_pg->freshDatabase();
        QSqlDatabase db = m_pg->open(name);
        QVERIFY(db.isOpen());
        QCOMPARE(sqlScalar(db, kOutboxRoleCount), QStringLiteral("0"));

        store::Migrator migrator(db);
        const auto report = migrator.migrate(/*withRoles=*/true, /*dryRun=*/true);
        QVERIFY2(report.ok(), qPrintable(report.errorMessage()));
        QCOMPARE(report->fromVersion, 0);
        QCOMPARE(report->toVersion, store::Migrator::latestVersion());
        QVERIFY(!report->applied.isEmpty());
        QCOMPARE(report->applied.first(), QStringLiteral("001_init.sql"));
        QVERIFY(report->rolesApplied);

        // Not even the version table or a role appeared.
        QCOMPARE(
            sqlScalar(db, QStringLiteral("SELECT to_regclass('outbox_schema_version') IS NULL")),
            QStringLiteral("true"));
        QCOMPARE(sqlScalar(db, kOutboxObjects), QStringLiteral("0"));
        QCOMPARE(sqlScalar(db, kOutboxRoleCount), QStringLiteral("0"));
        QCOMPARE(migrator.currentVersion().value(), 0);

        // On an up-to-date database a dry run has nothing to report.
        QVERIFY(migrator.migrate().ok());
        const QString before = sqlScalar(db, kVersionRows);
        verifyNothingApplied(migrator.migrate(false, true), db, before);
    }

    void freshDatabaseIsVersionZero() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        QVERIFY(db.isOpen());
        store::Migrator migrator(db);
        const auto version = migrator.currentVersion();
        QVERIFY2(version.ok(), qPrintable(version.errorMessage()));
        QCOMPARE(version.value(), 0);
        const auto check = migrator.checkCurrent();
        QVERIFY(!check.ok());
        QCOMPARE(check.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(check.errorMessage().contains(QLatin1String("outboxctl migrate")),
                 qPrintable(check.errorMessage()));
    }

    void appliesMigrations() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        QVERIFY(db.isOpen());
        store::Migrator migrator(db);
        const auto report = migrator.migrate();
        QVERIFY2(report.ok(), qPrintable(report.errorMessage()));
        QCOMPARE(report->fromVersion, 0);
        QCOMPARE(report->toVersion, store::Migrator::latestVersion());
        QCOMPARE(report->applied.first(), QStringLiteral("001_init.sql"));
        QVERIFY(!report->rolesApplied);

        // Every object of the multi-statement file (with $$ bodies) exists.
        QCOMPARE(sqlScalar(db, kOutboxObjects), QStringLiteral("6"));
        QCOMPARE(
            sqlScalar(db,
                      QStringLiteral(
                          "SELECT count(*) FROM pg_trigger WHERE tgname = 'outbox_events_notify'")),
            QStringLiteral("1"));
        QCOMPARE(sqlScalar(db, QStringLiteral(
                                   "SELECT name FROM outbox_schema_version WHERE version = 1")),
                 QStringLiteral("001_init.sql"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_schema_version")),
                 QString::number(report->applied.size()));
        QCOMPARE(migrator.currentVersion().value(), store::Migrator::latestVersion());
        const auto check = migrator.checkCurrent();
        QVERIFY2(check.ok(), qPrintable(check.errorMessage()));
    }

    void rerunIsNoOp() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        store::Migrator migrator(db);
        QVERIFY(migrator.migrate().ok());
        const QString before = sqlScalar(db, kVersionRows);
        QVERIFY(!before.isEmpty());

        verifyNothingApplied(migrator.migrate(), db, before);
    }

    // Delivery in aggregate order is off after a migration, and on exactly
    // while its index exists and is valid; a build that was cut off (left
    // invalid) is built again.
    void aggregateOrderIsOptIn() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        store::Migrator migrator(db);
        QVERIFY(migrator.migrate().ok());
        const QString indexed =
            QStringLiteral("SELECT to_regclass('outbox_events_aggregate_idx') IS NOT NULL");
        QCOMPARE(sqlScalar(db, indexed), QStringLiteral("false"));
        QCOMPARE(migrator.aggregateOrderOn().value(), false);
        const auto refused = migrator.checkAggregateOrder();
        QCOMPARE(refused.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(refused.errorMessage().contains(QLatin1String("outboxctl migrate "
                                                               "--aggregate-order")),
                 qPrintable(refused.errorMessage()));

        QCOMPARE(migrator.enableAggregateOrder().value(), true);
        QCOMPARE(migrator.aggregateOrderOn().value(), true);
        QVERIFY(migrator.checkAggregateOrder().ok());
        QCOMPARE(migrator.enableAggregateOrder().value(), false); // on already

        QVERIFY(
            sqlExec(db, QStringLiteral("UPDATE pg_index SET indisvalid = false WHERE "
                                       "indexrelid = 'outbox_events_aggregate_idx'::regclass")));
        QCOMPARE(migrator.aggregateOrderOn().value(), false);
        QCOMPARE(migrator.enableAggregateOrder().value(), true);
        QCOMPARE(migrator.aggregateOrderOn().value(), true);
    }

    // The migration that made it opt-in keeps the index of a database whose
    // dispatchers are registered (one of them may deliver in aggregate
    // order) and drops it where none is.
    void optInMigrationKeepsTheIndexOfRegisteredDispatchers() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        store::Migrator migrator(db);
        QVERIFY(migrator.migrate().ok());
        // The migration's own text, run again: later migrations need not be
        // repeatable.
        const auto replayOptIn = [&] {
            QFile file(QStringLiteral(":/sql/009_aggregate_order_opt_in.sql"));
            QVERIFY(file.open(QIODevice::ReadOnly));
            QVERIFY(sqlExec(db, QStringLiteral("DROP FUNCTION outbox_aggregate_order_on()")));
            const auto ran = store::execScript(db, QString::fromUtf8(file.readAll()),
                                               QStringLiteral("009 again"));
            QVERIFY2(ran.ok(), qPrintable(ran.errorMessage()));
        };
        QVERIFY(migrator.enableAggregateOrder().value());
        QVERIFY(sqlExec(
            db, QStringLiteral("INSERT INTO outbox_dispatchers (worker_id, host, pid, version,"
                               " application, runner_url, concurrency, heartbeat_interval,"
                               " started_at, token_sha256) VALUES (gen_random_uuid(), 'h', 1,"
                               " '1', 'a', 'http://r', 1, '5 s', now(), '\\x00')")));
        replayOptIn();
        QCOMPARE(migrator.aggregateOrderOn().value(), true);

        QVERIFY(sqlExec(db, QStringLiteral("DELETE FROM outbox_dispatchers")));
        replayOptIn();
        QCOMPARE(migrator.aggregateOrderOn().value(), false);
    }

    // Several processes running `outboxctl migrate` at once: exactly one
    // applies each migration, the others wait and find nothing to do.
    void concurrentMigrateIsSafe() {
        for (int round = 0; round < 3; ++round) {
            const QString name = m_pg->freshDatabase();
            const core::ConnInfo conn = info(name);
            constexpr int kThreads = 4;
            QSemaphore ready;
            QSemaphore go;
            std::vector<ThreadOutcome> outcomes(kThreads);
            std::vector<std::unique_ptr<QThread>> threads;
            for (int i = 0; i < kThreads; ++i) {
                threads.emplace_back(QThread::create([&, i] {
                    ThreadOutcome &out = outcomes[size_t(i)];
                    const QString connection =
                        store::uniqueConnectionName(QStringLiteral("migrate"));
                    {
                        auto db = store::openDatabase(conn, connection);
                        ready.release();
                        go.acquire();
                        if (!db.ok()) {
                            out.error = db.errorMessage();
                        } else {
                            store::Migrator migrator(db.value());
                            const auto report = migrator.migrate(true);
                            out.ok = report.ok();
                            if (report.ok()) {
                                out.applied = report->applied;
                            } else {
                                out.error = report.errorMessage();
                            }
                        }
                    }
                    store::closeDatabase(connection);
                }));
                threads.back()->start();
            }
            ready.acquire(kThreads);
            go.release(kThreads);
            for (auto &thread : threads) {
                QVERIFY(thread->wait(120000));
            }
            QStringList applied;
            for (const ThreadOutcome &out : outcomes) {
                QVERIFY2(out.ok, qPrintable(out.error));
                applied << out.applied;
            }
            applied.sort();
            QStringList expected = applied;
            expected.removeDuplicates();
            QCOMPARE(applied, expected); // nothing applied twice
            QCOMPARE(applied.first(), QStringLiteral("001_init.sql"));

            QSqlDatabase db = m_pg->open(name);
            QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_schema_version")),
                     QString::number(applied.size()));
            QCOMPARE(
                sqlScalar(db, QStringLiteral("SELECT max(version) FROM outbox_schema_version")),
                QString::number(store::Migrator::latestVersion()));
        }
    }

    void newerDatabaseIsRefused() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        store::Migrator migrator(db);
        QVERIFY(migrator.migrate().ok());
        const int future = store::Migrator::latestVersion() + 1;
        QVERIFY(sqlExec(
            db, QStringLiteral("INSERT INTO outbox_schema_version (version, name) VALUES (?, ?)"),
            {future, QStringLiteral("%1_future.sql").arg(future, 3, 10, QLatin1Char('0'))}));
        const QString before = sqlScalar(db, kVersionRows);

        const QString expected =
            QStringLiteral("database schema is version %1 but this outboxctl knows only "
                           "up to %2: upgrade Outbox Console")
                .arg(future)
                .arg(store::Migrator::latestVersion());
        for (const bool dryRun : {false, true}) {
            const auto report = migrator.migrate(true, dryRun);
            QVERIFY(!report.ok());
            QCOMPARE(report.errorKind(), core::ErrorKind::Conflict);
            QCOMPARE(report.errorMessage(), expected);
        }
        const auto check = migrator.checkCurrent();
        QVERIFY(!check.ok());
        QCOMPARE(check.errorKind(), core::ErrorKind::Conflict);
        QCOMPARE(check.errorMessage(), expected);
        QCOMPARE(sqlScalar(db, kVersionRows), before);
    }

    // A migration that fails half-way leaves nothing behind: not its earlier
    // statements, not the version table created in the same transaction.
    void failedMigrationRollsBack() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        QVERIFY(sqlExec(db, QStringLiteral("CREATE TABLE outbox_attempts (x integer)")));
        store::Migrator migrator(db);
        const auto report = migrator.migrate();
        QVERIFY(!report.ok());
        QVERIFY2(report.errorMessage().contains(QLatin1String("001_init.sql")),
                 qPrintable(report.errorMessage()));
        QVERIFY2(report.errorMessage().contains(QLatin1String("outbox_attempts")),
                 qPrintable(report.errorMessage()));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT to_regclass('outbox_events') IS NULL")),
                 QStringLiteral("true"));
        QCOMPARE(
            sqlScalar(db, QStringLiteral("SELECT to_regclass('outbox_schema_version') IS NULL")),
            QStringLiteral("true"));
        QCOMPARE(migrator.currentVersion().value(), 0);
        // The connection is usable afterwards (no transaction left open).
        QVERIFY(sqlExec(db, QStringLiteral("DROP TABLE outbox_attempts")));
        const auto retry = migrator.migrate();
        QVERIFY2(retry.ok(), qPrintable(retry.errorMessage()));
        QCOMPARE(retry->toVersion, store::Migrator::latestVersion());
    }

    void withRolesTwice() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        store::Migrator migrator(db);
        for (int run = 0; run < 2; ++run) {
            const auto report = migrator.migrate(true);
            QVERIFY2(report.ok(), qPrintable(report.errorMessage()));
            QVERIFY(report->rolesApplied);
            QCOMPARE(report->applied.isEmpty(), run == 1);
        }
        QCOMPARE(sqlScalar(db, kOutboxRoleCount), QStringLiteral("4"));
        QCOMPARE(sqlScalar(db, QStringLiteral(
                                   "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'outbox\\_%' "
                                   "AND rolcanlogin")),
                 QStringLiteral("0"));
        const QString enqueueFn = QStringLiteral(
            "'outbox_enqueue(text,text,jsonb,text,uuid,text,text,integer,text,text)'");
        QCOMPARE(
            sqlScalar(db, QStringLiteral(
                              "SELECT has_function_privilege('outbox_producer', %1, 'EXECUTE')")
                              .arg(enqueueFn)),
            QStringLiteral("true"));
        QCOMPARE(sqlScalar(db, QStringLiteral(
                                   "SELECT has_function_privilege('outbox_viewer', %1, 'EXECUTE')")
                                   .arg(enqueueFn)),
                 QStringLiteral("false"));
        QCOMPARE(sqlScalar(db, QStringLiteral(
                                   "SELECT has_table_privilege('outbox_viewer', 'outbox_events', "
                                   "'SELECT')")),
                 QStringLiteral("true"));

        // Roles on an already migrated database: nothing to migrate, roles
        // still (re)applied.
        QSqlDatabase other = m_pg->open(m_pg->freshDatabase());
        store::Migrator second(other);
        QVERIFY(second.migrate().ok());
        QCOMPARE(
            sqlScalar(other,
                      QStringLiteral("SELECT has_table_privilege('outbox_viewer', 'outbox_events', "
                                     "'SELECT')")),
            QStringLiteral("false"));
        const auto report = second.migrate(true);
        QVERIFY2(report.ok(), qPrintable(report.errorMessage()));
        QVERIFY(report->applied.isEmpty());
        QVERIFY(report->rolesApplied);
        QCOMPARE(
            sqlScalar(other,
                      QStringLiteral("SELECT has_table_privilege('outbox_viewer', 'outbox_events', "
                                     "'SELECT')")),
            QStringLiteral("true"));
    }

    // --- the connection layer -------------------------------------------

    void openDatabaseConnects() {
        const QString name = m_pg->freshDatabase();
        const QString connection = store::uniqueConnectionName(QStringLiteral("tst"));
        QVERIFY(connection != store::uniqueConnectionName(QStringLiteral("tst")));
        for (int round = 0; round < 2; ++round) {
            // The same name twice: the second open replaces the first.
            auto db = store::openDatabase(info(name), connection);
            QVERIFY2(db.ok(), qPrintable(db.errorMessage()));
            QVERIFY(db->isOpen());
            QCOMPARE(db->connectionName(), connection);
            QCOMPARE(sqlScalar(db.value(), QStringLiteral("SELECT current_database()")), name);
        }
        store::closeDatabase(connection);
        QVERIFY(!QSqlDatabase::contains(connection));
        store::closeDatabase(connection); // harmless when already gone
    }

    void splitsScripts_data() {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QStringList>("statements");

        QTest::newRow("plain") << QStringLiteral("SELECT 1; SELECT 2;\n")
                               << QStringList{QStringLiteral("SELECT 1"),
                                              QStringLiteral("SELECT 2")};
        QTest::newRow("no final semicolon")
            << QStringLiteral("SELECT 1;\nSELECT 2")
            << QStringList{QStringLiteral("SELECT 1"), QStringLiteral("SELECT 2")};
        QTest::newRow("quotes") << QStringLiteral("SELECT 'a;''b'; SELECT \"x;\"\"y\"")
                                << QStringList{QStringLiteral("SELECT 'a;''b'"),
                                               QStringLiteral("SELECT \"x;\"\"y\"")};
        QTest::newRow("E string") << QStringLiteral("SELECT E'\\';'; SELECT 'c\\'; SELECT 3")
                                  << QStringList{QStringLiteral("SELECT E'\\';'"),
                                                 QStringLiteral("SELECT 'c\\'"),
                                                 QStringLiteral("SELECT 3")};
        QTest::newRow("dollar bodies")
            << QStringLiteral("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n"
                              "DO $body$ BEGIN PERFORM 'x;$$'; END $body$;")
            << QStringList{QStringLiteral(
                               "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$"),
                           QStringLiteral("DO $body$ BEGIN PERFORM 'x;$$'; END $body$")};
        QTest::newRow("parameters are not quotes")
            << QStringLiteral("SELECT $1 + a$b; SELECT 2")
            << QStringList{QStringLiteral("SELECT $1 + a$b"), QStringLiteral("SELECT 2")};
        QTest::newRow("comments")
            << QStringLiteral("-- one; two\nSELECT 1; /* a; /* nested; */ b; */ SELECT 2;\n-- end;")
            << QStringList{QStringLiteral("SELECT 1"), QStringLiteral("SELECT 2")};
        QTest::newRow("empty") << QStringLiteral(" ;\n; -- nothing\n") << QStringList{};
    }

    void splitsScripts() {
        QFETCH(QString, script);
        QFETCH(QStringList, statements);
        QCOMPARE(store::splitSqlScript(script), statements);
    }

    // QPSQL swallows errors after the first statement of a multi-statement
    // text; execScript must not.
    void scriptStopsAtFirstError() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        const auto result = store::execScript(db,
                                              QStringLiteral("CREATE TABLE a (x integer);\n"
                                                             "INSERT INTO a VALUES (1);\n"
                                                             "INSERT INTO missing VALUES (2);\n"
                                                             "CREATE TABLE b (x integer);"),
                                              QStringLiteral("running the script"));
        QVERIFY(!result.ok());
        QVERIFY2(result.errorMessage().contains(QLatin1String("INSERT INTO missing VALUES (2)")),
                 qPrintable(result.errorMessage()));
        QVERIFY2(result.errorMessage().contains(QLatin1String("\"missing\" does not exist")),
                 qPrintable(result.errorMessage()));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM a")), QStringLiteral("1"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT to_regclass('b') IS NULL")),
                 QStringLiteral("true"));
    }

    void connectErrorsAreClassified_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QStringList>("mentions");

        QTest::newRow("refused") << QStringLiteral("refused") << int(core::ErrorKind::Unavailable)
                                 << QStringList{QStringLiteral(
                                                    "cannot connect to PostgreSQL at 127.0.0.1:1"),
                                                QStringLiteral("is the server running"),
                                                QStringLiteral("host and port of the connection "
                                                               "string")};
        QTest::newRow("no database")
            << QStringLiteral("database") << int(core::ErrorKind::Invalid)
            << QStringList{QStringLiteral("no_such_db_x"), QStringLiteral("does not exist"),
                           QStringLiteral("dbname=")};
        QTest::newRow("no role") << QStringLiteral("role") << int(core::ErrorKind::Invalid)
                                 << QStringList{QStringLiteral("no_such_role_x"),
                                                QStringLiteral("does not exist"),
                                                QStringLiteral("user=")};
    }

    void connectErrorsAreClassified() {
        QFETCH(QString, what);
        QFETCH(int, kind);
        QFETCH(QStringList, mentions);

        core::ConnInfo conn = info(QStringLiteral("postgres"));
        conn.password = QStringLiteral("Sup3rSecretPw");
        if (what == QLatin1String("refused")) {
            conn.host = QStringLiteral("127.0.0.1");
            conn.port = 1;
        } else if (what == QLatin1String("database")) {
            conn.dbname = QStringLiteral("no_such_db_x");
        } else {
            conn.user = QStringLiteral("no_such_role_x");
        }
        const QString connection = store::uniqueConnectionName(QStringLiteral("tst-bad"));
        const auto db = store::openDatabase(conn, connection);
        QVERIFY(!db.ok());
        QCOMPARE(int(db.errorKind()), kind);
        for (const QString &mention : mentions) {
            QVERIFY2(db.errorMessage().contains(mention), qPrintable(db.errorMessage()));
        }
        QVERIFY2(!db.errorMessage().contains(QLatin1String("Sup3rSecretPw")),
                 qPrintable(db.errorMessage()));
        QVERIFY(!QSqlDatabase::contains(connection)); // a failed open leaves no registration
    }

    void statementErrorsAreClassified() {
        const QString name = m_pg->freshDatabase();
        QSqlDatabase admin = m_pg->open(name);
        QVERIFY(sqlExec(admin, QStringLiteral("CREATE TABLE secret (x integer)")));
        QVERIFY(sqlExec(admin, QStringLiteral("DROP ROLE IF EXISTS tst_nobody")));
        QVERIFY(sqlExec(admin, QStringLiteral("CREATE ROLE tst_nobody LOGIN")));

        const QString connection = store::uniqueConnectionName(QStringLiteral("tst-nobody"));
        {
            auto db = store::openDatabase(info(name, QStringLiteral("tst_nobody")), connection);
            QVERIFY2(db.ok(), qPrintable(db.errorMessage()));
            const auto denied = store::exec(db.value(), QStringLiteral("SELECT * FROM secret"), {},
                                            QStringLiteral("reading secrets"));
            QVERIFY(!denied.ok());
            QCOMPARE(denied.errorKind(), core::ErrorKind::PermissionDenied);
            QVERIFY2(denied.errorMessage().startsWith(
                         QLatin1String("reading secrets: permission denied")),
                     qPrintable(denied.errorMessage()));

            const auto bad = store::exec(db.value(), QStringLiteral("SELECT 1/0"), {},
                                         QStringLiteral("dividing"));
            QVERIFY(!bad.ok());
            QCOMPARE(bad.errorKind(), core::ErrorKind::Failed);
            QVERIFY2(bad.errorMessage().contains(QLatin1String("division by zero")),
                     qPrintable(bad.errorMessage()));

            auto bound =
                store::exec(db.value(), QStringLiteral("SELECT ?::integer + ?::integer"), {40, 2});
            QVERIFY2(bound.ok(), qPrintable(bound.errorMessage()));
            QSqlQuery q = std::move(bound).value();
            QVERIFY(q.next());
            QCOMPARE(q.value(0).toInt(), 42);
        }
        store::closeDatabase(connection);
        QVERIFY(sqlExec(admin, QStringLiteral("DROP OWNED BY tst_nobody")));
        QVERIFY(sqlExec(admin, QStringLiteral("DROP ROLE tst_nobody")));
    }

    void lostConnectionIsDetected() {
        const QString name = m_pg->freshDatabase();
        QSqlDatabase admin = m_pg->open(name);
        QSqlDatabase victim = m_pg->open(name);
        QVERIFY(victim.isOpen());
        const QString pid = sqlScalar(victim, QStringLiteral("SELECT pg_backend_pid()"));
        QVERIFY(!pid.isEmpty());

        QSqlQuery ok(victim);
        QVERIFY(ok.exec(QStringLiteral("SELECT 1")));
        QVERIFY(!store::isConnectionLost(ok.lastError()));

        QCOMPARE(sqlScalar(admin, QStringLiteral("SELECT pg_terminate_backend(?::integer)"), {pid}),
                 QStringLiteral("true"));
        QSqlQuery q(victim);
        // The first statement after the kill may still be written before
        // the client notices; the connection is gone by the second at most.
        QSqlError error;
        for (int i = 0; i < 2 && error.type() == QSqlError::NoError; ++i) {
            if (!q.exec(QStringLiteral("SELECT 1"))) {
                error = q.lastError();
            }
        }
        QVERIFY(error.type() != QSqlError::NoError);
        QVERIFY2(store::isConnectionLost(error), qPrintable(error.text()));
        const core::Error mapped = store::toError(error, QStringLiteral("polling"));
        QCOMPARE(mapped.kind, core::ErrorKind::Unavailable);
        QVERIFY2(mapped.message.startsWith(QLatin1String("polling: lost the connection")),
                 qPrintable(mapped.message));
    }

    void transactionHelper() {
        QSqlDatabase db = m_pg->open(m_pg->freshDatabase());
        QVERIFY(sqlExec(db, QStringLiteral("CREATE TABLE t (x integer)")));
        const auto failed =
            store::inTransaction(db, QStringLiteral("inserting"), [&]() -> core::Result<void> {
                const auto inserted = store::exec(db, QStringLiteral("INSERT INTO t VALUES (1)"));
                if (!inserted.ok()) {
                    return inserted.error();
                }
                return core::Error{core::ErrorKind::Failed, QStringLiteral("changed my mind")};
            });
        QVERIFY(!failed.ok());
        QCOMPARE(failed.errorMessage(), QStringLiteral("changed my mind"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM t")), QStringLiteral("0"));

        const auto committed =
            store::inTransaction(db, QStringLiteral("inserting"), [&]() -> core::Result<int> {
                const auto inserted =
                    store::exec(db, QStringLiteral("INSERT INTO t VALUES (?)"), {7});
                if (!inserted.ok()) {
                    return inserted.error();
                }
                return 7;
            });
        QVERIFY2(committed.ok(), qPrintable(committed.errorMessage()));
        QCOMPARE(committed.value(), 7);
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT sum(x) FROM t")), QStringLiteral("7"));
    }
};

QTEST_GUILESS_MAIN(TestMigrator)
#include "tst_migrator.moc"
