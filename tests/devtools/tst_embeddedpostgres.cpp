#include "support/pgtestcase.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <cerrno>
#include <csignal>
#include <memory>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using outbox::core::ErrorKind;
using outbox::devtools::EmbeddedPostgres;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

// Set in the environment of a child copy of this test that starts a cluster
// and waits to be killed (see strayServerDiesWithItsOwner).
const char kHolderVariable[] = "TST_EMBEDDEDPOSTGRES_HOLDER";

// The postmaster's pid, from the first line of postmaster.pid.
pid_t postmasterPid(const EmbeddedPostgres &pg) {
    QFile file(pg.dataDirectory() + QLatin1String("/postmaster.pid"));
    if (!file.open(QIODevice::ReadOnly))
        return -1;
    return pid_t(file.readLine().trimmed().toInt());
}

bool processExists(pid_t pid) {
    return pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH);
}

// Runs the cluster's own psql against `target` (a key=value string or a URI),
// so libpq itself parses what connInfo()/uri() produce.
QString psqlScalar(const EmbeddedPostgres &pg, const QString &target, const QString &sql) {
    QProcess psql;
    psql.start(pg.binDirectory() + QLatin1String("/psql"),
               {QStringLiteral("-X"), QStringLiteral("-A"), QStringLiteral("-t"),
                QStringLiteral("-v"), QStringLiteral("ON_ERROR_STOP=1"), QStringLiteral("-d"),
                target, QStringLiteral("-c"), sql});
    if (!psql.waitForFinished(30'000) || psql.exitCode() != 0) {
        qWarning().noquote() << "psql failed:" << psql.readAllStandardError();
        return {};
    }
    return QString::fromUtf8(psql.readAllStandardOutput()).trimmed();
}

QSqlDatabase openQpsql(const QString &connectionName, const QString &host, int port,
                       const QString &dbName, const QString &user, const QString &password = {}) {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), connectionName);
    db.setHostName(host);
    db.setPort(port);
    db.setDatabaseName(dbName);
    db.setUserName(user);
    db.setPassword(password);
    if (!db.open())
        qWarning().noquote() << "open failed:" << db.lastError().text();
    return db;
}

// One statement through a short-lived QPSQL connection; null when it fails.
QString queryOnce(const EmbeddedPostgres &pg, const QString &sql, bool viaTcp = false) {
    const QString name = QStringLiteral("tst-once");
    QString value;
    {
        QSqlDatabase db =
            openQpsql(name, viaTcp ? pg.host() : pg.socketDirectory(), pg.port(), pg.database(),
                      pg.superuser(), viaTcp ? pg.password() : QString());
        if (db.isOpen())
            value = sqlScalar(db, sql);
    }
    QSqlDatabase::removeDatabase(name);
    return value;
}

// The child side of strayServerDiesWithItsOwner: start, report, wait.
int holdCluster() {
    EmbeddedPostgres pg;
    const auto started = pg.start();
    if (!started) {
        qCritical().noquote() << started.errorMessage();
        return 1;
    }
    QFile out;
    if (!out.open(stdout, QIODevice::WriteOnly))
        return 1;
    out.write(QByteArray::number(postmasterPid(pg)) + ' ' +
              QFile::encodeName(QFileInfo(pg.dataDirectory()).path()) + '\n');
    out.flush();
    for (;;)
        QThread::sleep(1); // until SIGKILLed: the destructor never runs
}

} // namespace

class TestEmbeddedPostgres : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        const auto bin = EmbeddedPostgres::findBinDirectory();
        QVERIFY2(bin.ok(), qPrintable(bin.errorMessage()));
        startPg(); // shared by the tests that need "a" cluster
    }

    void cleanupTestCase() { stopPg(); }

    // One cluster through its whole life: start, stop, start, restart, kill, recover.
    void lifecycle() {
        EmbeddedPostgres pg;
        QVERIFY(!pg.isRunning());
        QElapsedTimer timer;
        timer.start();
        auto result = pg.start();
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        qInfo("cluster start (initdb + server + createdb): %lld ms", timer.restart());
        QVERIFY(pg.isRunning());
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT current_database()")), pg.database());

        result = pg.start();
        QVERIFY(!result.ok());
        QCOMPARE(result.errorKind(), ErrorKind::Conflict);

        const QString name = QStringLiteral("tst-lifecycle");
        {
            QSqlDatabase db =
                openQpsql(name, pg.socketDirectory(), pg.port(), pg.database(), pg.superuser());
            QVERIFY(db.isOpen());
            QVERIFY(sqlExec(db, QStringLiteral("CREATE TABLE kept (v text)")));
            QVERIFY(sqlExec(db, QStringLiteral("INSERT INTO kept VALUES ('before stop')")));
            db.close();
        }
        QSqlDatabase::removeDatabase(name);

        timer.restart();
        result = pg.stop();
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        qInfo("server stop: %lld ms", timer.restart());
        QVERIFY(!pg.isRunning());
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^open failed")));
        QVERIFY(queryOnce(pg, QStringLiteral("SELECT 1")).isNull());
        QVERIFY(pg.stop().ok()); // stopping a stopped cluster is a no-op

        timer.restart();
        result = pg.start();
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        qInfo("server start of an existing cluster: %lld ms", timer.restart());
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT v FROM kept")),
                 QStringLiteral("before stop"));

        result = pg.restart();
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        qInfo("restart: %lld ms", timer.restart());
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT v FROM kept")),
                 QStringLiteral("before stop"));

        {
            QSqlDatabase db =
                openQpsql(name, pg.socketDirectory(), pg.port(), pg.database(), pg.superuser());
            QVERIFY(db.isOpen());
            // A synchronous commit reaches the kernel before it returns, so it
            // survives a process crash even with fsync=off.
            QVERIFY(sqlExec(db, QStringLiteral("SET synchronous_commit = on")));
            QVERIFY(sqlExec(db, QStringLiteral("CREATE TABLE crash (n int)")));
            QVERIFY(
                sqlExec(db, QStringLiteral("INSERT INTO crash SELECT generate_series(1, 1000)")));
            const pid_t pid = postmasterPid(pg);
            QVERIFY(processExists(pid));
            pg.kill();
            QVERIFY(!pg.isRunning());
            QVERIFY(!processExists(pid));
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^SQL failed")));
            QVERIFY(!sqlExec(db, QStringLiteral("SELECT 1"))); // the session died with it
        }
        QSqlDatabase::removeDatabase(name);
        timer.restart();
        result = pg.restart();
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        qInfo("restart after kill (crash recovery): %lld ms", timer.restart());
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT sum(n) FROM crash")),
                 QStringLiteral("500500"));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT v FROM kept")),
                 QStringLiteral("before stop"));
    }

    void connInfoWorksWithLibpq_data() {
        QTest::addColumn<QString>("dbName");
        QTest::newRow("default database") << QString();
        QTest::newRow("plain name") << QStringLiteral("second");
        QTest::newRow("space and quote") << QStringLiteral("it's a \\db");
    }

    void connInfoWorksWithLibpq() {
        QFETCH(QString, dbName);
        const EmbeddedPostgres &pg = m_pg->cluster();
        if (!QFileInfo::exists(pg.binDirectory() + QLatin1String("/psql")))
            QSKIP("psql is not installed next to the server binaries");
        if (!dbName.isEmpty()) {
            QSqlDatabase admin = m_pg->open(QStringLiteral("postgres"));
            QVERIFY(admin.isOpen());
            QVERIFY(sqlExec(admin, QStringLiteral("CREATE DATABASE \"%1\"").arg(dbName)));
        }
        const QString expectedDb = dbName.isEmpty() ? pg.database() : dbName;
        const QString info = pg.connInfo(dbName);
        QVERIFY(info.startsWith(QLatin1String("host=")));
        QCOMPARE(psqlScalar(pg, info,
                            QStringLiteral("SELECT current_database() || '/' || current_user")),
                 expectedDb + QLatin1Char('/') + pg.superuser());
        QCOMPARE(m_pg->connInfo(dbName), info);
        QVERIFY(pg.uri().isEmpty()); // no TCP listener in this cluster
    }

    void serverSettings() {
        QSqlDatabase db = m_pg->open(m_pg->cluster().database());
        QVERIFY(db.isOpen());
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT 1")), QStringLiteral("1"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_setting('max_connections')")),
                 QStringLiteral("200"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_setting('fsync')")),
                 QStringLiteral("off"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_setting('full_page_writes')")),
                 QStringLiteral("off"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_setting('listen_addresses')")),
                 QLatin1String(""));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_setting('server_encoding')")),
                 QStringLiteral("UTF8"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT rolsuper::text FROM pg_roles "
                                              "WHERE rolname = current_user")),
                 QStringLiteral("true"));
    }

    void tcpMode() {
        EmbeddedPostgres pg;
        EmbeddedPostgres::Options options;
        options.tcp = true;
        options.database = QStringLiteral("tcpdb");
        options.fastAndUnsafe = false;
        options.serverSettings = {QStringLiteral("work_mem=8MB")};
        const auto started = pg.start(options);
        QVERIFY2(started.ok(), qPrintable(started.errorMessage()));
        QCOMPARE(pg.host(), QStringLiteral("127.0.0.1"));
        QVERIFY(pg.password().size() >= 32);
        QCOMPARE(pg.uri(), QStringLiteral("postgresql://outbox:%1@127.0.0.1:%2/tcpdb")
                               .arg(pg.password())
                               .arg(pg.port()));
        QCOMPARE(pg.uri(QStringLiteral("other db")),
                 QStringLiteral("postgresql://outbox:%1@127.0.0.1:%2/other%20db")
                     .arg(pg.password())
                     .arg(pg.port()));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT inet_server_port()::text"), true),
                 QString::number(pg.port()));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT current_setting('work_mem')"), true),
                 QStringLiteral("8MB"));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT current_setting('fsync')"), true),
                 QStringLiteral("on"));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT 1")), QStringLiteral("1")); // socket too
        if (QFileInfo::exists(pg.binDirectory() + QLatin1String("/psql")))
            QCOMPARE(psqlScalar(pg, pg.uri(), QStringLiteral("SELECT current_database()")),
                     QStringLiteral("tcpdb"));
    }

    // Two clusters side by side; then the destructor of each (one running,
    // one stopped) must remove its directory and leave no server behind.
    void twoClustersAndCleanup() {
        QString rootA, rootB;
        pid_t pidA = -1, pidB = -1;
        {
            EmbeddedPostgres a;
            EmbeddedPostgres b;
            QVERIFY2(a.start().ok(), "first start failed");
            QVERIFY2(b.start().ok(), "second start failed");
            QVERIFY(a.dataDirectory() != b.dataDirectory());
            QVERIFY(a.socketDirectory() != b.socketDirectory());
            QCOMPARE(queryOnce(a, QStringLiteral("SELECT current_setting('data_directory')")),
                     a.dataDirectory());
            QCOMPARE(queryOnce(b, QStringLiteral("SELECT current_setting('data_directory')")),
                     b.dataDirectory());
            rootA = QFileInfo(a.dataDirectory()).path();
            rootB = QFileInfo(b.dataDirectory()).path();
            pidA = postmasterPid(a);
            pidB = postmasterPid(b);
            QVERIFY(processExists(pidA));
            QVERIFY(processExists(pidB));
            QVERIFY(a.stop().ok());
            QVERIFY(!processExists(pidA));
            QVERIFY(b.isRunning()); // stopping one leaves the other alone
            QCOMPARE(queryOnce(b, QStringLiteral("SELECT 2")), QStringLiteral("2"));
            QVERIFY(QFileInfo::exists(rootA)); // a stopped cluster keeps its data
        }
        QVERIFY2(!QFileInfo::exists(rootA), qPrintable(rootA));
        QVERIFY2(!QFileInfo::exists(rootB), qPrintable(rootB));
        QVERIFY(!processExists(pidB));
    }

    // The owning process dies without running destructors (crash, SIGKILL,
    // test timeout): its server and directory must go away by themselves.
    void strayServerDiesWithItsOwner() {
        QProcess holder;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QLatin1String(kHolderVariable), QStringLiteral("1"));
        holder.setProcessEnvironment(env);
        holder.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        holder.start(QCoreApplication::applicationFilePath(), {});
        QVERIFY(holder.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(holder.canReadLine() || holder.state() == QProcess::NotRunning,
                                 120'000);
        const QList<QByteArray> words = holder.readLine().trimmed().split(' ');
        QCOMPARE(words.size(), 2);
        const pid_t pid = pid_t(words[0].toInt());
        const QString root = QFile::decodeName(words[1]);
        const auto removeLeftovers = qScopeGuard([&root] { QDir(root).removeRecursively(); });
        QVERIFY(processExists(pid));
        QVERIFY(QFileInfo::exists(root));
        holder.kill();
        QVERIFY(holder.waitForFinished());
        QTRY_VERIFY_WITH_TIMEOUT(!processExists(pid), 30'000);
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(root), 30'000);
    }

    // Another local account (nobody) must not reach the cluster: not through
    // the socket (its directory is private), not over TCP (a password it does
    // not know). The cluster's own account and root do.
    void otherLocalUsersCannotConnect() {
        if (::geteuid() != 0)
            QSKIP("needs root, to run psql as another account");
        const QString psqlPath = m_pg->cluster().binDirectory() + QLatin1String("/psql");
        const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
        const struct passwd *nobody = ::getpwnam("nobody");
        if (!QFileInfo::exists(psqlPath) || setpriv.isEmpty() || !nobody)
            QSKIP("needs psql, setpriv and the nobody account");
        EmbeddedPostgres pg;
        EmbeddedPostgres::Options options;
        options.tcp = true;
        QVERIFY(pg.start(options).ok());
        const auto asNobody = [&](const QString &target) {
            QProcess process;
            QProcessEnvironment env;
            env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
            process.setProcessEnvironment(env); // no PGPASSWORD, no PG* of ours
            process.setWorkingDirectory(QStringLiteral("/"));
            process.start(setpriv,
                          {QStringLiteral("--reuid=%1").arg(nobody->pw_uid),
                           QStringLiteral("--regid=%1").arg(nobody->pw_gid),
                           QStringLiteral("--clear-groups"), psqlPath, QStringLiteral("-X"),
                           QStringLiteral("-w"), QStringLiteral("-A"), QStringLiteral("-t"),
                           QStringLiteral("-d"), target, QStringLiteral("-c"),
                           QStringLiteral("SELECT 'in'")});
            process.waitForFinished(30000);
            return QString::fromUtf8(process.readAllStandardOutput() +
                                     process.readAllStandardError())
                .trimmed();
        };
        const QString socket = asNobody(pg.connInfo());
        qInfo().noquote() << "socket:" << socket;
        QVERIFY2(!socket.split(QLatin1Char('\n')).contains(QStringLiteral("in")),
                 qPrintable(socket));
        QVERIFY2(socket.contains(QLatin1String("Permission denied")), qPrintable(socket));
        const QString tcp = asNobody(QStringLiteral("host=127.0.0.1 port=%1 dbname=%2 user=%3")
                                         .arg(pg.port())
                                         .arg(pg.database(), pg.superuser()));
        qInfo().noquote() << "tcp:" << tcp;
        QVERIFY2(tcp.contains(QLatin1String("password")), qPrintable(tcp));
        QVERIFY2(!tcp.split(QLatin1Char('\n')).contains(QStringLiteral("in")), qPrintable(tcp));
        // This process gets in both ways.
        QCOMPARE(psqlScalar(pg, pg.connInfo(), QStringLiteral("SELECT 'in'")),
                 QStringLiteral("in"));
        QCOMPARE(psqlScalar(pg, pg.uri(), QStringLiteral("SELECT 'in'")), QStringLiteral("in"));
    }

    void runsAsPostgresUserWhenRoot() {
        if (::geteuid() != 0)
            QSKIP("only meaningful when the tests run as root");
        const struct passwd *account = ::getpwnam("postgres");
        QVERIFY(account);
        const pid_t pid = postmasterPid(m_pg->cluster());
        QVERIFY(pid > 0);
        struct stat st = {};
        QCOMPARE(::stat(QByteArray("/proc/" + QByteArray::number(pid)).constData(), &st), 0);
        QCOMPARE(st.st_uid, account->pw_uid);
    }

    void badServerSettingFailsCleanly() {
        EmbeddedPostgres pg;
        EmbeddedPostgres::Options options;
        options.serverSettings = {QStringLiteral("not a setting")};
        auto result = pg.start(options);
        QVERIFY(!result.ok());
        QCOMPARE(result.errorKind(), ErrorKind::Invalid);
        QVERIFY2(result.errorMessage().contains(QLatin1String("name=value")),
                 qPrintable(result.errorMessage()));

        options.serverSettings = {QStringLiteral("no_such_setting=1")};
        result = pg.start(options);
        QVERIFY(!result.ok());
        QVERIFY(!pg.isRunning());
        // The tail of the server log says why.
        QVERIFY2(result.errorMessage().contains(QLatin1String("no_such_setting")),
                 qPrintable(result.errorMessage()));

        options.serverSettings.clear();
        result = pg.start(options); // the same cluster starts once the setting is fixed
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(queryOnce(pg, QStringLiteral("SELECT 1")), QStringLiteral("1"));
    }

    void missingBinariesAreReported() {
        QTemporaryDir empty;
        QVERIFY(empty.isValid());
        const QByteArray saved = qgetenv("OUTBOX_PG_BINDIR");
        qputenv("OUTBOX_PG_BINDIR", QFile::encodeName(empty.path()));
        EmbeddedPostgres pg;
        const auto started = pg.start();
        const auto found = EmbeddedPostgres::findBinDirectory();
        if (saved.isNull())
            qunsetenv("OUTBOX_PG_BINDIR");
        else
            qputenv("OUTBOX_PG_BINDIR", saved);
        QVERIFY(!found.ok());
        QCOMPARE(found.errorKind(), ErrorKind::NotFound);
        QVERIFY(found.errorMessage().contains(empty.path()));
        QVERIFY(found.errorMessage().contains(QLatin1String("initdb")));
        QVERIFY(!started.ok());
        QCOMPARE(started.errorMessage(), found.errorMessage());
        QVERIFY(!pg.isRunning());
        QVERIFY(pg.dataDirectory().isEmpty()); // nothing was created
    }

    void fixtureDatabases() {
        const QString a = m_pg->freshDatabase();
        const QString b = m_pg->freshDatabase();
        QVERIFY(!a.isEmpty());
        QVERIFY(!b.isEmpty());
        QVERIFY(a != b);
        QSqlDatabase db = m_pg->open(a);
        QVERIFY(db.isOpen());
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT current_database()")), a);
        QCOMPARE(
            sqlScalar(db, QStringLiteral("SELECT count(*) FROM pg_class c JOIN pg_namespace n "
                                         "ON n.oid = c.relnamespace WHERE nspname = 'public'")),
            QStringLiteral("0"));
        QVERIFY(m_pg->dropDatabase(b));
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("could not open")));
        QVERIFY(!m_pg->open(b).isOpen());
    }

    void fixtureTemplate() {
        int calls = 0;
        const QString leaked = QStringLiteral("tst-preparer-leak");
        const EmbeddedPostgres &pg = m_pg->cluster();
        m_pg->setTemplatePreparer([&](const QString &connInfo) {
            ++calls;
            const auto dbname = QRegularExpression(QStringLiteral("dbname=(\\S+)")).match(connInfo);
            // Left open on purpose: the fixture must copy the template anyway.
            QSqlDatabase db = openQpsql(leaked, pg.socketDirectory(), pg.port(), dbname.captured(1),
                                        pg.superuser());
            const bool ok = db.isOpen() &&
                            sqlExec(db, QStringLiteral("CREATE TABLE seeded (v int)")) &&
                            sqlExec(db, QStringLiteral("INSERT INTO seeded VALUES (42)"));
            return ok ? outbox::core::Result<void>()
                      : outbox::core::Result<void>::failure(ErrorKind::Failed,
                                                            QStringLiteral("seeding failed"));
        });
        const QString first = m_pg->freshMigratedDatabase();
        const QString second = m_pg->freshMigratedDatabase();
        QSqlDatabase::removeDatabase(leaked);
        QVERIFY(!first.isEmpty());
        QVERIFY(!second.isEmpty());
        QVERIFY(first != second);
        QCOMPARE(calls, 1);
        for (const QString &name : {first, second}) {
            QSqlDatabase db = m_pg->open(name);
            QVERIFY(db.isOpen());
            QCOMPARE(sqlScalar(db, QStringLiteral("SELECT v FROM seeded")), QStringLiteral("42"));
        }
    }
};

int main(int argc, char *argv[]) {
    QCoreApplication app(argc, argv);
    if (qEnvironmentVariableIsSet(kHolderVariable))
        return holdCluster();
    TestEmbeddedPostgres test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}

#include "tst_embeddedpostgres.moc"
