// The second hardening pass, as users meet it through the real outboxctl:
// exports that do not follow links or replace devices, text from producers
// and runners that cannot drive the operator's terminal, a dispatcher that
// keeps its secrets out of logs and warns about unsafe settings, and the
// rough edges of a few messages.

#include "ctl.h"
#include "support/serverlogin.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace outbox::testing;

namespace {

// Text a producer or a runner could write: a window-title sequence, a
// screen clear, a colour, and the one-byte CSI of the C1 set.
const QString kTitle = QStringLiteral("invoice\x1b]0;pwned\x07.paid");
const QString kNamespace = QStringLiteral("billing\x1b[2J\x1b[H");
const QString kError = QStringLiteral("HTTP 500: \x1b[31mred") + QChar(0x9b) + QStringLiteral("0m");

mode_t modeOf(const QString &path) {
    struct stat st {};
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 ? st.st_mode : 0;
}

QByteArray contentOf(const QString &path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &content, QFile::Permissions permissions) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size() &&
           file.setPermissions(permissions);
}

// No byte of the output can start a terminal control sequence.
bool hasRawControls(const QString &text) {
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        if ((u < 0x20 && u != '\n') || u == 0x7f || (u >= 0x80 && u <= 0x9f))
            return true;
    }
    return false;
}

// A long-running outboxctl (dispatch) read until a line shows up.
class Service final {
public:
    Service(const QStringList &arguments, const QProcessEnvironment &env) {
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        m_process.start(QStringLiteral(OUTBOXCTL_PATH), arguments);
    }
    ~Service() {
        m_process.terminate();
        if (!m_process.waitForFinished(30000))
            m_process.kill();
        m_process.waitForFinished(5000);
    }
    Q_DISABLE_COPY_MOVE(Service)

    // Everything printed until `marker` (or the end, or 60 s).
    QString waitFor(const QString &marker) {
        QElapsedTimer clock;
        clock.start();
        while (!m_output.contains(marker) && clock.elapsed() < 60000 &&
               m_process.state() != QProcess::NotRunning) {
            m_process.waitForReadyRead(200);
            m_output += QString::fromUtf8(m_process.readAll());
        }
        m_output += QString::fromUtf8(m_process.readAll());
        return m_output;
    }

private:
    QProcess m_process;
    QString m_output;
};

} // namespace

class TestOutboxctlHardening2 final : public PgTestSuite {
    Q_OBJECT

private:
    QStringList db() const { return {QStringLiteral("--db"), m_pg->connInfo(m_dbName)}; }

    CtlResult exportTo(const QString &path, const QStringList &more = {}) {
        return runCtl(QStringList{QStringLiteral("export")} + db() +
                      QStringList{QStringLiteral("--output"), path} + more);
    }

private Q_SLOTS:
    // Also over TCP, where a login may have to give its password.
    void initTestCase() {
        outbox::devtools::EmbeddedPostgres::Options options;
        options.tcp = true;
        startPg(migrateSchema, options);
    }

    // --- export -------------------------------------------------------------

    void exportDoesNotFollowLinks() {
        QVERIFY(!seedEvent(m_db, {}).isEmpty());
        QTemporaryDir dir;
        const QString victim = dir.filePath(QStringLiteral("victim.txt"));
        QVERIFY(writeFile(victim, "precious\n", QFile::ReadOwner | QFile::WriteOwner));
        const QString planted = dir.filePath(QStringLiteral("export.jsonl"));
        QVERIFY(QFile::link(victim, planted));
        for (const QStringList &more :
             {QStringList(), QStringList{QStringLiteral("--overwrite")}}) {
            const CtlResult result = exportTo(planted, more);
            CTL_VERIFY_EXIT(result, 2);
            QVERIFY2(result.err.contains(QLatin1String("is a symbolic link")),
                     qPrintable(result.err));
            QCOMPARE(contentOf(victim), QByteArray("precious\n"));
            QVERIFY(QFileInfo(planted).isSymLink());
        }
    }

    void exportDoesNotReplaceDevices() {
        QVERIFY(!seedEvent(m_db, {}).isEmpty());
        QTemporaryDir dir;
        const QString device = dir.filePath(QStringLiteral("null"));
        // A device node like /dev/null where root may create one, a pipe otherwise.
        if (::mknod(QFile::encodeName(device).constData(), S_IFCHR | 0666, makedev(1, 3)) != 0)
            QCOMPARE(::mkfifo(QFile::encodeName(device).constData(), 0666), 0);
        const mode_t before = modeOf(device);
        const CtlResult result = exportTo(device, {QStringLiteral("--overwrite")});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(QLatin1String("is not a regular file")),
                 qPrintable(result.err));
        QCOMPARE(modeOf(device), before);
    }

    void exportReplacesOnlyWhenAskedAndOwnerOnly() {
        const QString id = seedEvent(m_db, {});
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("events.jsonl"));
        QVERIFY(writeFile(path, "old\n", QFile::ReadOwner | QFile::WriteOwner | QFile::ReadOther));
        const CtlResult refused = exportTo(path);
        CTL_VERIFY_EXIT(refused, 2);
        QVERIFY2(refused.err.contains(QLatin1String("already exists; add --overwrite")),
                 qPrintable(refused.err));
        QCOMPARE(contentOf(path), QByteArray("old\n"));

        const CtlResult replaced = exportTo(path, {QStringLiteral("--overwrite")});
        CTL_VERIFY_EXIT(replaced, 0);
        QVERIFY(contentOf(path).contains(id.toLatin1()));
        QCOMPARE(modeOf(path) & 0777, mode_t(0600));

        const QString fresh = dir.filePath(QStringLiteral("new.jsonl"));
        CTL_VERIFY_EXIT(exportTo(fresh), 0);
        QCOMPARE(modeOf(fresh) & 0777, mode_t(0600)); // whatever the umask
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);
    }

    // --- terminal escapes ----------------------------------------------------

    void producerTextCannotDriveTheTerminal() {
        Seed seed;
        seed.nameSpace = kNamespace;
        seed.topic = kTitle;
        seed.status = QStringLiteral("dead");
        seed.attempts = 3;
        seed.lastError = kError;
        seed.payload = QStringLiteral("{\"note\": \"\\u001b[5mblink") + QChar(0x9b) +
                       QStringLiteral("\", \"del\": \"x") + QChar(0x7f) + QStringLiteral("\"}");
        const QString id = seedEvent(m_db, seed);
        QVERIFY(!id.isEmpty());
        Seed pending = seed;
        pending.status = QStringLiteral("pending");
        pending.attempts = 0;
        QVERIFY(!seedEvent(m_db, pending).isEmpty()); // counted by stats per topic
        // A pause reason with controls is refused by the database since
        // version 12 (tst_hardening2); dispatchers shows the paused scope.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("INSERT INTO outbox_pauses (namespace, reason,"
                                       " paused_by, os_user) VALUES (?, 'down', 'x', 'x')"),
                        {kNamespace}));

        const QList<QStringList> commands{
            {QStringLiteral("list")},
            {QStringLiteral("show"), id},
            {QStringLiteral("stats")},
            {QStringLiteral("dispatchers")},
        };
        for (const QStringList &command : commands) {
            const CtlResult text = runCtl(command + db());
            CTL_VERIFY_EXIT(text, 0);
            QVERIFY2(!hasRawControls(text.out), qPrintable(command.first() + text.out));
            QVERIFY2(text.out.contains(QLatin1String("\\x1b")), qPrintable(text.out));

            const bool jsonLines = command.first() == QLatin1String("list");
            const CtlResult json = runCtl(
                command + db() +
                QStringList{jsonLines ? QStringLiteral("--jsonl") : QStringLiteral("--json")});
            CTL_VERIFY_EXIT(json, 0);
            QVERIFY2(!hasRawControls(json.out), qPrintable(command.first() + json.out));
            // Still JSON, and the same text once parsed.
            const QString first = json.out.section(QLatin1Char('\n'), 0, 0);
            QJsonParseError error;
            QJsonDocument::fromJson(first.toUtf8(), &error);
            QCOMPARE(error.error, QJsonParseError::NoError);
            if (jsonLines) {
                const QJsonObject event = parseObject(first);
                QCOMPARE(event.value(QLatin1String("topic")).toString(), kTitle);
                QCOMPARE(event.value(QLatin1String("namespace")).toString(), kNamespace);
                QCOMPARE(event.value(QLatin1String("last_error")).toString(), kError);
                QCOMPARE(event.value(QLatin1String("payload"))
                             .toObject()
                             .value(QLatin1String("note"))
                             .toString(),
                         QStringLiteral("\x1b[5mblink") + QChar(0x9b));
            }
        }
    }

    // --- rough edges -----------------------------------------------------------

    void unstorablePayloadEscapesAreUsageErrors_data() {
        QTest::addColumn<QString>("payload");
        QTest::addColumn<QString>("message");
        QTest::newRow("nul") << QStringLiteral("{\"a\": \"x\\u0000y\"}")
                             << QStringLiteral("\\u0000 escape");
        QTest::newRow("lone high") << QStringLiteral("{\"a\": \"\\ud800\"}")
                                   << QStringLiteral("without the low surrogate");
        QTest::newRow("lone low") << QStringLiteral("{\"a\": \"\\udc00\"}")
                                  << QStringLiteral("without the high surrogate");
    }
    void unstorablePayloadEscapesAreUsageErrors() {
        QFETCH(QString, payload);
        QFETCH(QString, message);
        const CtlResult result =
            runCtl(QStringList{QStringLiteral("enqueue")} + db() +
                   QStringList{QStringLiteral("--namespace"), QStringLiteral("ns"),
                               QStringLiteral("--topic"), QStringLiteral("t"),
                               QStringLiteral("--payload"), payload});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(message), qPrintable(result.err));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("0"));
        // A whole pair is a character, and fine.
        CTL_VERIFY_EXIT(runCtl(QStringList{QStringLiteral("enqueue")} + db() +
                               QStringList{QStringLiteral("--namespace"), QStringLiteral("ns"),
                                           QStringLiteral("--topic"), QStringLiteral("t"),
                                           QStringLiteral("--payload"),
                                           QStringLiteral("{\"a\": \"\\ud83d\\ude00\\\\u0000\"}")}),
                        0);
    }

    void rangeErrorNamesTheRange() {
        const CtlResult result =
            runCtl({QStringLiteral("dispatch"), QStringLiteral("--runner-url"),
                    QStringLiteral("http://127.0.0.1:1/events"), QStringLiteral("--concurrency"),
                    QStringLiteral("99999999")});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(QLatin1String("--concurrency must be at most 1000000 (got "
                                                   "99999999)")),
                 qPrintable(result.err));
        QVERIFY(!result.err.contains(QLatin1String("-2147483648")));
    }

    void runnerUrlWithLineBreakIsShownEscaped() {
        const CtlResult result =
            runCtl({QStringLiteral("dispatch"), QStringLiteral("--runner-url"),
                    QStringLiteral("http://u:secret@127.0.0.1/e\r\nX-Injected: 1")});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(
                     QLatin1String("\"http://***@127.0.0.1/e\\x0d\\x0aX-Injected: 1\" contains "
                                   "control characters")),
                 qPrintable(result.err));
        QVERIFY(!result.err.contains(QLatin1String("secret")));

        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("OUTBOX_RUNNER_URL"), QStringLiteral("http://h/e\nX: y"));
        const CtlResult fromEnvironment = runCtl({QStringLiteral("dispatch")}, {}, env);
        CTL_VERIFY_EXIT(fromEnvironment, 2);
        QVERIFY2(
            fromEnvironment.err.contains(QLatin1String("$OUTBOX_RUNNER_URL \"http://h/e\\x0aX: "
                                                       "y\" contains control characters")),
            qPrintable(fromEnvironment.err));
    }

    // --- the dispatcher's secrets and warnings --------------------------------

    // The URL from the environment (as the systemd unit passes it), secrets
    // from credential files: the logs name neither user, password nor query,
    // loose permissions and a token over plain http are warned about, and
    // ":PORT" serves metrics on loopback only.
    void dispatcherKeepsSecretsOutOfItsLogs() {
        QTemporaryDir credentials;
        // As systemd leaves a credential: 0400 and an ACL entry, whose mask
        // shows as group bits. Not warned about.
        QVERIFY(writeFile(credentials.filePath(QStringLiteral("webhook-secret")),
                          "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n",
                          QFile::ReadOwner | QFile::ReadGroup));
        QTemporaryDir files;
        const QString token = files.filePath(QStringLiteral("token"));
        QVERIFY(writeFile(token, "TOKEN-VALUE-77\n",
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup));
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("CREDENTIALS_DIRECTORY"), credentials.path());
        env.insert(
            QStringLiteral("OUTBOX_RUNNER_URL"),
            QStringLiteral("http://USERNAME1:PASSW0RD@192.0.2.1:9/events?api_key=SEKRET123"));
        Service dispatch(QStringList{QStringLiteral("dispatch")} + db() +
                             QStringList{QStringLiteral("--bearer-token-file"), token,
                                         QStringLiteral("--metrics-addr"), QStringLiteral(":0"),
                                         QStringLiteral("--stats-interval"), QStringLiteral("0s")},
                         env);
        const QString log = dispatch.waitFor(QStringLiteral("event=connected"));
        QVERIFY2(log.contains(QLatin1String("event=metrics_listen addr=127.0.0.1:")),
                 qPrintable(log));
        for (const char *secret : {"USERNAME1", "PASSW0RD", "SEKRET123", "TOKEN-VALUE-77",
                                   "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
            QVERIFY2(!log.contains(QLatin1String(secret)), qPrintable(log));
        QVERIFY2(log.contains(QLatin1String("runner-url=http://***@192.0.2.1:9/events?***")),
                 qPrintable(log));
        QVERIFY2(log.contains(QLatin1String("signing=\"on(1 secret)\"")), qPrintable(log));
        QCOMPARE(log.count(QLatin1String("event=secret_file_permissions")), 1);
        QVERIFY2(log.contains(QLatin1String("chmod 600 ") + token), qPrintable(log));
        QVERIFY2(log.contains(QLatin1String("the bearer token goes to http://***@192.0.2.1:9/"
                                            "events?*** over plain http")),
                 qPrintable(log));
        QVERIFY2(log.contains(QLatin1String("the credentials in the runner URL go to")),
                 qPrintable(log));
        QVERIFY2(!log.contains(QLatin1String("not signed")), qPrintable(log));
        QTRY_COMPARE_WITH_TIMEOUT(
            sqlScalar(m_db, QStringLiteral("SELECT coalesce(max(runner_url), '') FROM "
                                           "outbox_dispatchers")),
            QStringLiteral("http://192.0.2.1:9/events"), 30000);
    }

    // The unit's throwaway user has no ~/.pgpass: the database password comes
    // from the credential db-password when the connection string has none.
    void databasePasswordFromCredential() {
        const QString role = QStringLiteral("tst_credential_login");
        QVERIFY(requirePassword(*m_pg, role, QStringLiteral("pw from the credential")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ALTER ROLE %1 SUPERUSER").arg(role)));
        const QStringList arguments{
            QStringLiteral("dispatch"),
            QStringLiteral("--db"),
            QStringLiteral("host=127.0.0.1 port=%1 dbname=%2 user=%3 passfile=/nonexistent")
                .arg(m_pg->cluster().port())
                .arg(m_dbName, role),
            QStringLiteral("--runner-url"),
            QStringLiteral("http://127.0.0.1:1/events"),
            QStringLiteral("--unsigned"),
            QStringLiteral("--stats-interval"),
            QStringLiteral("0s")};
        QTemporaryDir credentials;
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("CREDENTIALS_DIRECTORY"), credentials.path());
        const CtlResult without = runCtl(arguments, {}, env);
        CTL_VERIFY_EXIT(without, 2);
        QVERIFY2(without.err.contains(QLatin1String("rejected the login")),
                 qPrintable(without.err));

        QVERIFY(writeFile(credentials.filePath(QStringLiteral("db-password")),
                          "pw from the credential\n", QFile::ReadOwner));
        Service dispatch(arguments, env);
        const QString log = dispatch.waitFor(QStringLiteral("event=connected"));
        QVERIFY2(log.contains(QLatin1String("event=connected")), qPrintable(log));
        QVERIFY(!log.contains(QLatin1String("pw from the credential")));
    }

    void unsignedDeliveryIsWarnedAbout() {
        const QStringList base =
            QStringList{QStringLiteral("dispatch")} + db() +
            QStringList{QStringLiteral("--runner-url"), QStringLiteral("http://127.0.0.1:1/events"),
                        QStringLiteral("--stats-interval"), QStringLiteral("0s")};
        {
            Service quiet(base, cleanEnvironment());
            const QString log = quiet.waitFor(QStringLiteral("event=connected"));
            QVERIFY2(log.contains(QLatin1String("level=warning")) &&
                         log.contains(QLatin1String("deliveries are not signed")),
                     qPrintable(log));
        }
        {
            Service intended(base + QStringList{QStringLiteral("--unsigned")}, cleanEnvironment());
            const QString log = intended.waitFor(QStringLiteral("event=connected"));
            QVERIFY2(log.contains(QLatin1String("event=connected")), qPrintable(log));
            QVERIFY2(!log.contains(QLatin1String("not signed")), qPrintable(log));
        }
        QProcessEnvironment env = cleanEnvironment();
        env.insert(QStringLiteral("OUTBOX_RUNNER_SECRET"),
                   QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
        const CtlResult both = runCtl(base + QStringList{QStringLiteral("--unsigned")}, {}, env);
        CTL_VERIFY_EXIT(both, 2);
        QVERIFY2(both.err.contains(QLatin1String("--unsigned, yet a signing secret is given")),
                 qPrintable(both.err));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlHardening2)
#include "tst_outboxctl_hardening2.moc"
