// outboxctl as a user meets it: help, errors, exit codes, connection
// handling, migrate and enqueue. Runs the real binary against a throwaway
// cluster.

#include "ctl.h"
#include "store/migrator.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTemporaryFile>
#include <QtTest>

#include <array>

using namespace outbox::testing;

class TestOutboxctl final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctl()
        : PgTestSuite(outbox::testing::migrateSchema, PerTest::Nothing) {}

private:
    QString migratedDb() {
        const QString name = m_pg->freshMigratedDatabase();
        if (name.isEmpty())
            qWarning("no migrated database");
        return name;
    }

    static QStringList commands() {
        return {QStringLiteral("migrate"), QStringLiteral("enqueue"),     QStringLiteral("stats"),
                QStringLiteral("list"),    QStringLiteral("show"),        QStringLiteral("requeue"),
                QStringLiteral("retry"),   QStringLiteral("cancel"),      QStringLiteral("purge"),
                QStringLiteral("replay"),  QStringLiteral("dispatch"),    QStringLiteral("runner"),
                QStringLiteral("bench"),   QStringLiteral("dispatchers"), QStringLiteral("pause"),
                QStringLiteral("resume")};
    }

private Q_SLOTS:
    void generalHelp_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::newRow("--help") << QStringList{QStringLiteral("--help")};
        QTest::newRow("-h") << QStringList{QStringLiteral("-h")};
        QTest::newRow("help") << QStringList{QStringLiteral("help")};
    }

    void generalHelp() {
        QFETCH(QStringList, arguments);
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY(result.out.startsWith(QLatin1String("Usage: outboxctl")));
        for (const QString &command : commands()) {
            QVERIFY2(result.out.contains(QRegularExpression(QStringLiteral("\\n  ") + command +
                                                            QStringLiteral("\\s"))),
                     qPrintable(command));
        }
        QVERIFY(result.out.contains(QLatin1String("OUTBOX_DB")));
        QVERIFY(result.out.contains(QLatin1String("Exit codes")));
    }

    void commandHelp_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("command");
        for (const QString &command : commands()) {
            QTest::addRow("%s --help", qPrintable(command))
                << QStringList{command, QStringLiteral("--help")} << command;
            QTest::addRow("%s -h", qPrintable(command))
                << QStringList{command, QStringLiteral("-h")} << command;
            QTest::addRow("help %s", qPrintable(command))
                << QStringList{QStringLiteral("help"), command} << command;
        }
        // --help wins even over other mistakes on the same line.
        QTest::newRow("list --bogus --help")
            << QStringList{QStringLiteral("list"), QStringLiteral("--bogus"),
                           QStringLiteral("--help")}
            << QStringLiteral("list");
    }

    void commandHelp() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, command);
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QStringLiteral("Usage: outboxctl ") + command),
                 qPrintable(result.out));
        QVERIFY(result.out.contains(QLatin1String("--help")));
        // The executable's path never leaks into the usage line.
        QVERIFY(!result.out.contains(QLatin1String(OUTBOXCTL_PATH)));
        QVERIFY(result.err.isEmpty());
    }

    void version() {
        const CtlResult result = runCtl({QStringLiteral("--version")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY(result.out.startsWith(QLatin1String("outboxctl ")));
    }

    void noCommand() {
        const CtlResult result = runCtl({});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY(result.err.contains(QLatin1String("no command")));
        QVERIFY(result.err.contains(QLatin1String("Commands:")));
    }

    void unknownCommand_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("named");
        QTest::addColumn<QString>("suggested");
        QTest::newRow("frobnicate") << QStringList{QStringLiteral("frobnicate")}
                                    << QStringLiteral("'frobnicate'") << QString();
        QTest::newRow("typo") << QStringList{QStringLiteral("lsit")} << QStringLiteral("'lsit'")
                              << QStringLiteral("'list'");
        QTest::newRow("help typo") << QStringList{QStringLiteral("help"), QStringLiteral("stat")}
                                   << QStringLiteral("'stat'") << QStringLiteral("'stats'");
        QTest::newRow("global option")
            << QStringList{QStringLiteral("--bogus"), QStringLiteral("stats")}
            << QStringLiteral("'--bogus'") << QString();
        QTest::newRow("--db without value")
            << QStringList{QStringLiteral("--db")} << QStringLiteral("'--db'") << QString();
    }

    void unknownCommand() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, named);
        QFETCH(QString, suggested);
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(named), qPrintable(result.err));
        QVERIFY2(result.err.contains(QLatin1String("--help")), qPrintable(result.err));
        if (!suggested.isEmpty())
            QVERIFY2(result.err.contains(suggested), qPrintable(result.err));
        QVERIFY(result.out.isEmpty());
    }

    void usageErrors_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        for (const QString &command : commands()) {
            if (command == QLatin1String("dispatch") || command == QLatin1String("runner") ||
                command == QLatin1String("bench"))
                continue; // other builds own these
            QTest::addRow("%s --bogus", qPrintable(command))
                << QStringList{command, QStringLiteral("--bogus")}
                << QStringLiteral("Unknown option 'bogus'");
        }
        QTest::newRow("missing value")
            << QStringList{QStringLiteral("list"), QStringLiteral("--limit")}
            << QStringLiteral("Missing value after '--limit'");
        QTest::newRow("bad limit")
            << QStringList{QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("ten")}
            << QStringLiteral("--limit: 'ten' is not a whole number");
        QTest::newRow("limit range")
            << QStringList{QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("0")}
            << QStringLiteral("--limit must be between 1 and 10000");
        QTest::newRow("bad status")
            << QStringList{QStringLiteral("list"), QStringLiteral("--status"),
                           QStringLiteral("stuck")}
            << QStringLiteral("unknown status 'stuck'");
        QTest::newRow("bad time") << QStringList{QStringLiteral("list"),
                                                 QStringLiteral("--created-after"),
                                                 QStringLiteral("yesterday")}
                                  << QStringLiteral(
                                         "--created-after: 'yesterday' is not an ISO 8601");
        QTest::newRow("bad cursor")
            << QStringList{QStringLiteral("list"), QStringLiteral("--after"), QStringLiteral("xyz")}
            << QStringLiteral("--after: 'xyz' is not a cursor");
        QTest::newRow("show without id")
            << QStringList{QStringLiteral("show")} << QStringLiteral("missing the event id");
        QTest::newRow("show bad id") << QStringList{QStringLiteral("show"), QStringLiteral("42")}
                                     << QStringLiteral("'42' is not an event id");
        QTest::newRow("stray argument")
            << QStringList{QStringLiteral("stats"), QStringLiteral("now")}
            << QStringLiteral("unexpected argument 'now'");
        QTest::newRow("bad id filter")
            << QStringList{QStringLiteral("requeue"), QStringLiteral("--id"),
                           QStringLiteral("nope"), QStringLiteral("--yes")}
            << QStringLiteral("--id: 'nope' is not an event id");
    }

    void usageErrors() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        // No database anywhere: usage errors are found before connecting.
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(message), qPrintable(result.err));
        QVERIFY2(result.err.contains(QStringLiteral("outboxctl ") + arguments.first() +
                                     QStringLiteral(" --help")),
                 qPrintable(result.err));
    }

    void badDuration_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("flag");
        QTest::newRow("purge --older-than 5x")
            << QStringList{QStringLiteral("purge"), QStringLiteral("--status"),
                           QStringLiteral("dead"),  QStringLiteral("--older-than"),
                           QStringLiteral("5x"),    QStringLiteral("--yes")}
            << QStringLiteral("--older-than");
        QTest::newRow("list --older-than 10")
            << QStringList{QStringLiteral("list"), QStringLiteral("--older-than"),
                           QStringLiteral("10")}
            << QStringLiteral("--older-than");
        QTest::newRow("stats --watch 1parsec")
            << QStringList{QStringLiteral("stats"), QStringLiteral("--watch"),
                           QStringLiteral("1parsec")}
            << QStringLiteral("--watch");
        QTest::newRow("stats --watch=-3s")
            << QStringList{QStringLiteral("stats"), QStringLiteral("--watch=-3s")}
            << QStringLiteral("--watch");
    }

    void badDuration() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, flag);
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(flag + QLatin1Char(':')), qPrintable(result.err));
    }

    // Every housekeeping flag dispatch shows in --help is read: a value
    // below its floor is refused before anything connects.
    void housekeepingFlagsAreRead() {
        // flag, value, the error after the flag's name
        const std::array<std::array<const char *, 3>, 5> cases{{
            {"--retain-delivered", "30s", "must be at least 1m (got 30s)"},
            {"--retain-dead", "59s", "must be at least 1m (got 59s)"},
            {"--heartbeat-interval", "10ms", "must be at least 100ms (got 10ms)"},
            {"--gauges-interval", "10ms", "must be at least 100ms (got 10ms)"},
            {"--retention-batch", "0", "must be between 1 and 10000 (got 0)"},
        }};
        for (const auto &[flag, value, message] : cases) {
            const CtlResult result =
                runCtl({QStringLiteral("dispatch"), QStringLiteral("--runner-url"),
                        QStringLiteral("http://127.0.0.1:9/events"), QLatin1String(flag),
                        QLatin1String(value)});
            CTL_VERIFY_EXIT(result, 2);
            const QString expected =
                QLatin1String(flag) + QLatin1Char(' ') + QLatin1String(message);
            QVERIFY2(result.err.contains(expected), qPrintable(result.err));
        }
    }

    void badConnInfo_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("environment");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("unknown keyword")
            << QStringList{QStringLiteral("--db"), QStringLiteral("hots=localhost"),
                           QStringLiteral("stats")}
            << QString() << QStringLiteral("hots");
        QTest::newRow("bad port") << QStringList{QStringLiteral("stats"), QStringLiteral("--db"),
                                                 QStringLiteral(
                                                     "host=127.0.0.1 port=fivefourthreetwo")}
                                  << QString() << QStringLiteral("port");
        QTest::newRow("bad uri") << QStringList{QStringLiteral("list"), QStringLiteral("--db"),
                                                QStringLiteral("postgresql://h:99999999/x")}
                                 << QString() << QStringLiteral("port");
        QTest::newRow("bad OUTBOX_DB")
            << QStringList{QStringLiteral("stats")} << QStringLiteral("nonsense_key=1")
            << QStringLiteral("OUTBOX_DB");
    }

    void badConnInfo() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, environment);
        QFETCH(QString, mentions);
        QProcessEnvironment env = cleanEnvironment();
        if (!environment.isEmpty())
            env.insert(QStringLiteral("OUTBOX_DB"), environment);
        const CtlResult result = runCtl(arguments, {}, env);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(mentions), qPrintable(result.err));
    }

    void unreachable_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<bool>("tcp");
        for (const char *command : {"stats", "list", "migrate", "show", "enqueue", "requeue"}) {
            QTest::addRow("%s tcp", command) << QString::fromLatin1(command) << true;
            QTest::addRow("%s socket", command) << QString::fromLatin1(command) << false;
        }
    }

    void unreachable() {
        QFETCH(QString, command);
        QFETCH(bool, tcp);
        const QString password = QStringLiteral("Sup3rS3cretPw");
        QTemporaryDir emptySocketDir;
        QVERIFY(emptySocketDir.isValid());
        const QString conninfo =
            tcp ? QStringLiteral("host=127.0.0.1 port=%1 user=ops password=%2 connect_timeout=2")
                      .arg(closedPort())
                      .arg(password)
                : QStringLiteral("host=%1 port=5432 user=ops password=%2")
                      .arg(emptySocketDir.path(), password);
        QStringList arguments{command, QStringLiteral("--db"), conninfo};
        if (command == QLatin1String("show"))
            arguments << QStringLiteral("0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57");
        if (command == QLatin1String("enqueue"))
            arguments << QStringLiteral("--namespace") << QStringLiteral("n")
                      << QStringLiteral("--topic") << QStringLiteral("t")
                      << QStringLiteral("--payload") << QStringLiteral("{}");
        if (command == QLatin1String("requeue"))
            arguments << QStringLiteral("--status") << QStringLiteral("dead")
                      << QStringLiteral("--yes");
        const CtlResult result = runCtl(arguments);
        CTL_VERIFY_EXIT(result, 3);
        QVERIFY2(result.err.contains(QLatin1String("cannot connect")), qPrintable(result.err));
        QVERIFY2(!result.all().contains(password), qPrintable(result.all()));
    }

    void unreachableViaEnvironment() {
        const QString password = QStringLiteral("AnotherS3cret");
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("OUTBOX_DB"),
                   QStringLiteral("postgresql://ops:%1@127.0.0.1:%2/app?connect_timeout=2")
                       .arg(password)
                       .arg(closedPort()));
        const CtlResult result = runCtl({QStringLiteral("stats")}, {}, env);
        CTL_VERIFY_EXIT(result, 3);
        QVERIFY2(result.err.contains(QLatin1String("cannot connect")), qPrintable(result.err));
        QVERIFY(!result.all().contains(password));
    }

    void migrate() {
        const QString name = m_pg->freshDatabase();
        QVERIFY(!name.isEmpty());
        const QString db = m_pg->connInfo(name);
        QSqlDatabase check = m_pg->open(name);
        QVERIFY(check.isOpen());
        const QString tableExists =
            QStringLiteral("SELECT to_regclass('outbox_events') IS NOT NULL");

        // Before migrating, other commands say what to do.
        CtlResult result = runCtl({QStringLiteral("stats"), QStringLiteral("--db"), db});
        QVERIFY(result.finished);
        QVERIFY(result.exitCode != 0);
        QVERIFY2(result.err.contains(QLatin1String("outboxctl migrate")), qPrintable(result.err));

        result = runCtl(
            {QStringLiteral("migrate"), QStringLiteral("--dry-run"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("Would migrate")), qPrintable(result.out));
        QCOMPARE(sqlScalar(check, tableExists), QStringLiteral("false"));

        result = runCtl({QStringLiteral("migrate"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QStringLiteral("from version 0 to %1")
                                         .arg(outbox::store::Migrator::latestVersion())),
                 qPrintable(result.out));
        QVERIFY2(result.out.contains(QLatin1String("applied 001_init.sql")),
                 qPrintable(result.out));
        // The scripts' IF EXISTS notices are not the user's business.
        QVERIFY2(!result.err.contains(QLatin1String("NOTICE")), qPrintable(result.err));
        QCOMPARE(sqlScalar(check, tableExists), QStringLiteral("true"));

        result = runCtl({QStringLiteral("migrate"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("up to date")), qPrintable(result.out));
        QVERIFY(!result.out.contains(QLatin1String("applied")));

        result = runCtl(
            {QStringLiteral("migrate"), QStringLiteral("--json"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("from_version")).toInt(),
                 outbox::store::Migrator::latestVersion());
        QCOMPARE(json.value(QLatin1String("applied")).toArray().size(), 0);

        // Now the other commands work.
        result = runCtl({QStringLiteral("stats"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
    }

    // Off after a migration; `migrate --aggregate-order` turns it on, and a
    // dispatcher asked for aggregate order refuses to start before that.
    void migrateAggregateOrder() {
        const QString name = m_pg->freshDatabase();
        QVERIFY(!name.isEmpty());
        const QString db = m_pg->connInfo(name);
        CtlResult result = runCtl({QStringLiteral("migrate"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("delivery in aggregate order is off")),
                 qPrintable(result.out));

        result = runCtl({QStringLiteral("dispatch"), QStringLiteral("--ordering"),
                         QStringLiteral("aggregate"), QStringLiteral("--runner-url"),
                         QStringLiteral("http://127.0.0.1:9/events"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(QLatin1String("`outboxctl migrate --aggregate-order`")),
                 qPrintable(result.err));

        result = runCtl({QStringLiteral("migrate"), QStringLiteral("--aggregate-order"),
                         QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("built outbox_events_aggregate_idx")),
                 qPrintable(result.out));
        QSqlDatabase check = m_pg->open(name);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT outbox_aggregate_order_on()")),
                 QStringLiteral("true"));

        result = runCtl({QStringLiteral("migrate"), QStringLiteral("--aggregate-order"),
                         QStringLiteral("--json"), QStringLiteral("--db"), db});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("aggregate_order")).toBool(false), true);
        QCOMPARE(json.value(QLatin1String("aggregate_order_built")).toBool(true), false);
    }

    void migrateWithRoles() {
        const QString name = m_pg->freshDatabase();
        QVERIFY(!name.isEmpty());
        const CtlResult result = runCtl({QStringLiteral("migrate"), QStringLiteral("--with-roles"),
                                         QStringLiteral("--db"), m_pg->connInfo(name)});
        CTL_VERIFY_EXIT(result, 0);
        QSqlDatabase check = m_pg->open(name);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM pg_roles WHERE rolname IN "
                                                 "('outbox_producer', 'outbox_dispatcher', "
                                                 "'outbox_operator', 'outbox_viewer')")),
                 QStringLiteral("4"));
        QVERIFY2(result.out.contains(QLatin1String("roles")), qPrintable(result.out));
    }

    void enqueue() {
        const QString name = migratedDb();
        QVERIFY(!name.isEmpty());
        const QString db = m_pg->connInfo(name);
        QSqlDatabase check = m_pg->open(name);
        const QStringList base{
            QStringLiteral("enqueue"),     QStringLiteral("--db"),    db,
            QStringLiteral("--namespace"), QStringLiteral("billing"), QStringLiteral("--topic"),
            QStringLiteral("invoice.paid")};

        CtlResult result =
            runCtl(base + QStringList{QStringLiteral("--payload"),
                                      QStringLiteral("{\"invoice_id\": 42, \"big\": "
                                                     "12345678901234567890}"),
                                      QStringLiteral("--dedupe-key"), QStringLiteral("inv-42"),
                                      QStringLiteral("--aggregate-type"), QStringLiteral("invoice"),
                                      QStringLiteral("--aggregate-id"), QStringLiteral("42")});
        CTL_VERIFY_EXIT(result, 0);
        const QRegularExpression inserted(QStringLiteral("^([0-9a-f-]{36}) inserted\\n$"));
        const auto match = inserted.match(result.out);
        QVERIFY2(match.hasMatch(), qPrintable(result.out));
        const QString id = match.captured(1);
        QCOMPARE(sqlScalar(check,
                           QStringLiteral("SELECT payload->>'big' || ' ' || namespace || ' ' || "
                                          "topic || ' ' || aggregate_type || ' ' || aggregate_id "
                                          "|| ' ' || status FROM outbox_events WHERE id = ?"),
                           {id}),
                 QStringLiteral("12345678901234567890 billing invoice.paid invoice 42 pending"));

        // Same dedupe key: the first event is kept.
        result =
            runCtl(base + QStringList{QStringLiteral("--payload"), QStringLiteral("{}"),
                                      QStringLiteral("--dedupe-key"), QStringLiteral("inv-42")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(id + QStringLiteral(" already enqueued")),
                 qPrintable(result.out));
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("1"));

        result = runCtl(base + QStringList{QStringLiteral("--payload"), QStringLiteral("{}"),
                                           QStringLiteral("--dedupe-key"), QStringLiteral("inv-42"),
                                           QStringLiteral("--json")});
        CTL_VERIFY_EXIT(result, 0);
        QJsonObject json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("id")).toString(), id);
        QCOMPARE(json.value(QLatin1String("inserted")).toBool(true), false);

        // Payload from stdin, from a file, and scalars.
        result = runCtl(base + QStringList{QStringLiteral("--payload"), QStringLiteral("-"),
                                           QStringLiteral("--json")},
                        QByteArray("{\"from\": \"stdin\"}\n"));
        CTL_VERIFY_EXIT(result, 0);
        json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("inserted")).toBool(), true);
        QCOMPARE(sqlScalar(check,
                           QStringLiteral("SELECT payload->>'from' FROM outbox_events "
                                          "WHERE id = ?"),
                           {json.value(QLatin1String("id")).toString()}),
                 QStringLiteral("stdin"));

        QTemporaryFile file;
        QVERIFY(file.open());
        file.write("[1, 2, 3]");
        file.close();
        result = runCtl(base + QStringList{QStringLiteral("--payload-file"), file.fileName()});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events WHERE "
                                                 "payload = '[1, 2, 3]'::jsonb")),
                 QStringLiteral("1"));

        result = runCtl(base + QStringList{QStringLiteral("--payload"), QStringLiteral("\"x\"")});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("4"));
    }

    void enqueueRejected_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("message");
        QTest::newRow("truncated")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("{\"a\": ")}
            << QStringLiteral("--payload is not valid JSON");
        QTest::newRow("unquoted key")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("{a: 1}")}
            << QStringLiteral("at line 1, column");
        QTest::newRow("two values")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("1, 2")}
            << QStringLiteral("more than one JSON value");
        QTest::newRow("null") << QStringList{QStringLiteral("--payload"), QStringLiteral("null")}
                              << QStringLiteral("JSON null");
        QTest::newRow("empty") << QStringList{QStringLiteral("--payload"), QStringLiteral(" ")}
                               << QStringLiteral("empty input");
        QTest::newRow("no payload") << QStringList{} << QStringLiteral("no payload");
        QTest::newRow("both payloads")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("{}"),
                           QStringLiteral("--payload-file"), QStringLiteral("x.json")}
            << QStringLiteral("not both");
        QTest::newRow("missing file")
            << QStringList{QStringLiteral("--payload-file"),
                           QStringLiteral("/nonexistent/outbox/payload.json")}
            << QStringLiteral("cannot read");
        QTest::newRow("bad tenant")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("{}"),
                           QStringLiteral("--tenant"), QStringLiteral("acme")}
            << QStringLiteral("--tenant: 'acme' is not a UUID");
        QTest::newRow("half aggregate")
            << QStringList{QStringLiteral("--payload"), QStringLiteral("{}"),
                           QStringLiteral("--aggregate-id"), QStringLiteral("7")}
            << QStringLiteral("--aggregate-type and --aggregate-id together");
    }

    void enqueueRejected() {
        QFETCH(QStringList, extra);
        QFETCH(QString, message);
        const QString name = migratedDb();
        QVERIFY(!name.isEmpty());
        const CtlResult result = runCtl(
            QStringList{QStringLiteral("enqueue"), QStringLiteral("--db"), m_pg->connInfo(name),
                        QStringLiteral("--namespace"), QStringLiteral("n"),
                        QStringLiteral("--topic"), QStringLiteral("t")} +
            extra);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(message), qPrintable(result.err));
        QVERIFY(result.out.isEmpty());
        QSqlDatabase check = m_pg->open(name);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("0"));
    }

    void enqueueMissingNamespace() {
        const CtlResult result =
            runCtl({QStringLiteral("enqueue"), QStringLiteral("--topic"), QStringLiteral("t"),
                    QStringLiteral("--payload"), QStringLiteral("{}")});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(QLatin1String("--namespace is required")),
                 qPrintable(result.err));
    }

    void enqueueTenantMismatch() {
        const QString name = migratedDb();
        QVERIFY(!name.isEmpty());
        const QString tenant = QStringLiteral("0b7c5e1a-3f2d-4c6b-9a8e-1d2c3b4a5f60");
        const CtlResult result =
            runCtl({QStringLiteral("enqueue"), QStringLiteral("--db"), m_pg->connInfo(name),
                    QStringLiteral("--namespace"), QStringLiteral("n"), QStringLiteral("--topic"),
                    QStringLiteral("t"), QStringLiteral("--payload"), QStringLiteral("{}"),
                    QStringLiteral("--tenant"), tenant, QStringLiteral("--dedupe-key"),
                    QStringLiteral("other-tenant/k1")});
        QVERIFY(result.finished);
        QVERIFY2(result.exitCode != 0, qPrintable(result.all()));
        QVERIFY2(result.err.contains(QLatin1String("does not belong to tenant")),
                 qPrintable(result.err));
        QSqlDatabase check = m_pg->open(name);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("0"));

        // The matching prefix is accepted.
        const CtlResult ok =
            runCtl({QStringLiteral("enqueue"), QStringLiteral("--db"), m_pg->connInfo(name),
                    QStringLiteral("--namespace"), QStringLiteral("n"), QStringLiteral("--topic"),
                    QStringLiteral("t"), QStringLiteral("--payload"), QStringLiteral("{}"),
                    QStringLiteral("--tenant"), tenant, QStringLiteral("--dedupe-key"),
                    tenant + QStringLiteral("/k1")});
        CTL_VERIFY_EXIT(ok, 0);
    }

    void environmentDatabase() {
        const QString name = migratedDb();
        QVERIFY(!name.isEmpty());
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("OUTBOX_DB"), m_pg->connInfo(name));
        CtlResult result =
            runCtl({QStringLiteral("enqueue"), QStringLiteral("--namespace"), QStringLiteral("env"),
                    QStringLiteral("--topic"), QStringLiteral("t"), QStringLiteral("--payload"),
                    QStringLiteral("{}")},
                   {}, env);
        CTL_VERIFY_EXIT(result, 0);
        QSqlDatabase check = m_pg->open(name);
        QCOMPARE(sqlScalar(check, QStringLiteral("SELECT count(*) FROM outbox_events WHERE "
                                                 "namespace = 'env'")),
                 QStringLiteral("1"));

        // --db wins over OUTBOX_DB, before or after the command.
        const QString other = migratedDb();
        QVERIFY(!other.isEmpty());
        result = runCtl({QStringLiteral("--db"), m_pg->connInfo(other), QStringLiteral("stats"),
                         QStringLiteral("--json")},
                        {}, env);
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(parseObject(result.out).value(QLatin1String("pending")).toInt(-1), 0);
        result = runCtl({QStringLiteral("stats"), QStringLiteral("--json")}, {}, env);
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(parseObject(result.out).value(QLatin1String("pending")).toInt(-1), 1);
    }
};

QTEST_GUILESS_MAIN(TestOutboxctl)
#include "tst_outboxctl.moc"
