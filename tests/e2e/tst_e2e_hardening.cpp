// What `outboxctl dispatch`, `runner` and `enqueue` do with input that
// retrying cannot fix: durations beyond what a timer or an interval can hold,
// a login without the dispatcher's privileges, text that is not UTF-8, a NUL
// in a payload file. Each ends at once with exit 2 and a message naming the
// problem, instead of looping on the same error. Also: --verbose adds lines.

#include "e2e/e2e.h"

#include <QElapsedTimer>
#include <QtTest>

using namespace outbox::testing;

namespace {

struct Finished {
    bool exited = false;
    int code = -1;
    QString output;
};

Finished runToEnd(const QStringList &arguments, int timeoutMs = 30000) {
    CtlProcess process(arguments);
    Finished result;
    if (!process.start())
        return result;
    result.exited = process.waitForExit(timeoutMs) && process.exitedNormally();
    result.code = process.exitCode();
    result.output = process.output();
    return result;
}

QStringList dispatchArguments(const QString &connInfo, const QStringList &extra) {
    return dispatchCommand(connInfo, QStringLiteral("http://127.0.0.1:%1/events").arg(freePort()),
                           extra);
}

// One POST to the runner whose "url=http://127.0.0.1:<port>/events" line is
// in `output`.
void postOneEvent(const QString &output) {
    const QRegularExpression pattern(QStringLiteral("url=http://127.0.0.1:(\\d+)/"));
    const auto match = pattern.match(output);
    if (!match.hasMatch())
        return;
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(match.captured(1).toUInt()));
    if (!socket.waitForConnected(5000))
        return;
    socket.write("POST /events HTTP/1.1\r\nHost: x\r\nwebhook-id: one\r\n"
                 "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
    socket.waitForBytesWritten(5000);
    while (socket.waitForReadyRead(5000))
        socket.readAll();
}

// Lines of output a process wrote before it exited (after SIGTERM).
int linesUntilStopped(CtlProcess &process, const QString &readyMarker) {
    if (!process.start())
        return -1;
    QElapsedTimer clock;
    clock.start();
    while (!process.output().contains(readyMarker) && process.running() && clock.elapsed() < 20000)
        QTest::qWait(50);
    postOneEvent(process.output());
    QTest::qWait(500);
    process.terminate();
    if (!process.waitForExit(30000))
        return -1;
    return int(process.output().count(QLatin1Char('\n')));
}

} // namespace

class TestE2eHardening final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestE2eHardening()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private Q_SLOTS:
    void durationsBeyondWhatTheCodeHolds_data() {
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("named");
        QTest::newRow("lease 999999999999h")
            << QStringList{QStringLiteral("--lease"), QStringLiteral("999999999999h")}
            << QStringLiteral("--lease");
        QTest::newRow("lease 100d, poll 30d")
            << QStringList{QStringLiteral("--lease"), QStringLiteral("100d"),
                           QStringLiteral("--poll-interval"), QStringLiteral("30d")}
            << QStringLiteral("--lease");
        QTest::newRow("shutdown grace 25d")
            << QStringList{QStringLiteral("--shutdown-grace"), QStringLiteral("25d")}
            << QStringLiteral("--shutdown-grace");
        QTest::newRow("stats interval 30d")
            << QStringList{QStringLiteral("--stats-interval"), QStringLiteral("30d")}
            << QStringLiteral("--stats-interval");
    }

    void durationsBeyondWhatTheCodeHolds() {
        QFETCH(QStringList, options);
        QFETCH(QString, named);
        const Finished result = runToEnd(dispatchArguments(m_pg->connInfo(m_dbName), options));
        QVERIFY2(result.exited, qPrintable(result.output));
        QCOMPARE(result.code, 2);
        QVERIFY2(result.output.contains(named + QStringLiteral(" (")) &&
                     result.output.contains(QLatin1String("longest supported duration (24d)")),
                 qPrintable(result.output));
    }

    void runnerLatencyBeyondATimer() {
        const Finished result = runToEnd({QStringLiteral("runner"), QStringLiteral("--listen"),
                                          QStringLiteral("127.0.0.1:0"),
                                          QStringLiteral("--latency"), QStringLiteral("30d")});
        QVERIFY2(result.exited, qPrintable(result.output));
        QCOMPARE(result.code, 2);
        QVERIFY2(result.output.contains(QLatin1String("--latency (30d)")),
                 qPrintable(result.output));
    }

    void loginWithoutPrivileges_data() {
        QTest::addColumn<QString>("grant");
        QTest::addColumn<QString>("message");
        QTest::newRow("no role") << QString()
                                 << QStringLiteral("this database login may not dispatch");
        QTest::newRow("viewer") << QStringLiteral("outbox_viewer")
                                << QStringLiteral("this database login may not dispatch");
    }

    void loginWithoutPrivileges() {
        QFETCH(QString, grant);
        QFETCH(QString, message);
        const QString login =
            grant.isEmpty() ? QStringLiteral("hardening_none") : QStringLiteral("hardening_viewer");
        QVERIFY(sqlExec(m_db, QStringLiteral("DROP ROLE IF EXISTS ") + login));
        QVERIFY(sqlExec(m_db, QStringLiteral("CREATE ROLE ") + login + QStringLiteral(" LOGIN")));
        if (!grant.isEmpty())
            QVERIFY(
                sqlExec(m_db, QStringLiteral("GRANT ") + grant + QStringLiteral(" TO ") + login));
        QVERIFY(insertEvents(m_db, 3));

        const QString connInfo = m_pg->connInfo(m_dbName) + QStringLiteral(" user=") + login;
        const Finished result = runToEnd(dispatchArguments(connInfo, {}));
        QVERIFY2(result.exited, qPrintable(result.output));
        QCOMPARE(result.code, 2);
        QVERIFY2(result.output.contains(message), qPrintable(result.output));
        QVERIFY2(result.output.contains(QLatin1String("outbox_dispatcher")),
                 qPrintable(result.output));
        // Refused before anything was claimed.
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'pending'")), qint64(3));
    }

    void verboseAddsLines() {
        QVERIFY(insertEvents(m_db, 5));
        CtlProcess quiet(dispatchArguments(m_pg->connInfo(m_dbName), {}));
        const int quietLines = linesUntilStopped(quiet, QStringLiteral("event=connected"));
        QVERIFY(insertEvents(m_db, 5));
        CtlProcess verbose(
            dispatchArguments(m_pg->connInfo(m_dbName), {QStringLiteral("--verbose")}));
        const int verboseLines = linesUntilStopped(verbose, QStringLiteral("event=connected"));
        qInfo("dispatch: %d lines, with --verbose %d", quietLines, verboseLines);
        QVERIFY2(quietLines > 0, qPrintable(quiet.output()));
        QVERIFY2(verboseLines > quietLines, qPrintable(verbose.output()));
        QVERIFY(verbose.output().contains(QLatin1String("level=debug")));
        // The global form, before the command, does the same.
        QVERIFY(insertEvents(m_db, 5));
        CtlProcess global(QStringList{QStringLiteral("--verbose")} +
                          dispatchArguments(m_pg->connInfo(m_dbName), {}));
        const int globalLines = linesUntilStopped(global, QStringLiteral("event=connected"));
        QVERIFY2(globalLines > quietLines, qPrintable(global.output()));
        QVERIFY(global.output().contains(QLatin1String("level=debug")));

        CtlProcess runnerQuiet(
            {QStringLiteral("runner"), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0")});
        const int runnerQuietLines = linesUntilStopped(runnerQuiet, QStringLiteral("url="));
        CtlProcess runnerVerbose({QStringLiteral("runner"), QStringLiteral("--listen"),
                                  QStringLiteral("127.0.0.1:0"), QStringLiteral("--verbose")});
        const int runnerVerboseLines = linesUntilStopped(runnerVerbose, QStringLiteral("url="));
        qInfo("runner: %d lines, with --verbose %d", runnerQuietLines, runnerVerboseLines);
        QVERIFY2(runnerQuietLines > 0, qPrintable(runnerQuiet.output()));
        QVERIFY2(runnerVerboseLines > runnerQuietLines, qPrintable(runnerVerbose.output()));
    }

    void textThatIsNotUtf8() {
        // Raw bytes on the command line need a shell: QProcess encodes text.
        QProcess shell;
        shell.setProcessEnvironment(e2eEnvironment());
        shell.start(QStringLiteral("/bin/sh"),
                    {QStringLiteral("-c"),
                     QStringLiteral("exec \"$0\" --db \"$1\" enqueue --namespace billing "
                                    "--topic \"$(printf 'invoice\\377paid')\" --payload '{}'"),
                     QStringLiteral(OUTBOXCTL_PATH), m_pg->connInfo(m_dbName)});
        QVERIFY(shell.waitForFinished(30000));
        const QString output = QString::fromUtf8(shell.readAllStandardError());
        QCOMPARE(shell.exitCode(), 2);
        QVERIFY2(output.contains(QLatin1String("the value of --topic is not valid UTF-8")),
                 qPrintable(output));
        QCOMPARE(countWhere(m_db, QStringLiteral("true")), qint64(0));
    }

    void payloadFileWithNul() {
        for (const QByteArray &content :
             {QByteArray("{\"a\": \"x\0y\"}", 12), QByteArray("{\"a\": 1}\0", 9),
              QByteArray("{\"a\": \"\xff\"}")}) {
            TextFile file(content);
            const Finished result = runToEnd(
                {QStringLiteral("--db"), m_pg->connInfo(m_dbName), QStringLiteral("enqueue"),
                 QStringLiteral("--namespace"), QStringLiteral("billing"),
                 QStringLiteral("--topic"), QStringLiteral("invoice.paid"),
                 QStringLiteral("--payload-file"), file.path()});
            QVERIFY2(result.exited, qPrintable(result.output));
            QCOMPARE(result.code, 2);
            QVERIFY2(result.output.contains(QLatin1String("NUL byte")) ||
                         result.output.contains(QLatin1String("not valid UTF-8")),
                     qPrintable(result.output));
            QVERIFY2(!result.output.contains(QLatin1String("qpsqlpstmt")),
                     qPrintable(result.output));
        }
        QCOMPARE(countWhere(m_db, QStringLiteral("true")), qint64(0));
    }

    // A payload jsonb cannot hold (\u0000): refused before connecting, by
    // its offset, without the payload (and no statement is involved at all).
    void serverErrorsDoNotEchoTheStatement() {
        const Finished result = runToEnd(
            {QStringLiteral("--db"), m_pg->connInfo(m_dbName), QStringLiteral("enqueue"),
             QStringLiteral("--namespace"), QStringLiteral("billing"), QStringLiteral("--topic"),
             QStringLiteral("invoice.paid"), QStringLiteral("--payload"),
             QStringLiteral("{\"card\": \"4111-secret-fragment\\u0000\"}")});
        QVERIFY2(result.exited, qPrintable(result.output));
        QVERIFY(result.code != 0);
        QVERIFY2(!result.output.contains(QLatin1String("qpsqlpstmt")), qPrintable(result.output));
        QVERIFY2(!result.output.contains(QLatin1String("EXECUTE")), qPrintable(result.output));
        QVERIFY2(!result.output.contains(QLatin1String("secret-fragment")),
                 qPrintable(result.output));
    }
};

QTEST_MAIN(TestE2eHardening)
#include "tst_e2e_hardening.moc"
