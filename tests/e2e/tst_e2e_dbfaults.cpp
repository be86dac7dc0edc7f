// The database misbehaving under a running `outboxctl dispatch` process:
//  - its server process frozen (SIGSTOP): SIGTERM still ends the dispatcher
//    within the shutdown grace plus the stop budget, and the acks it had
//    already written stay written;
//  - an ambiguous commit: a TCP proxy between the dispatcher and PostgreSQL
//    forwards an ack statement (which commits on its own), waits for the
//    server to finish it, and then drops the connection instead of passing
//    the reply on. The dispatcher cannot know the ack was written; it must
//    reconnect, try again, and at-least-once must hold: every event
//    delivered, none acknowledged twice (the retried ack is fenced out).

#include "e2e/e2e.h"

#include <QElapsedTimer>
#include <QLocalSocket>
#include <QPointer>
#include <QtTest>

#include <csignal>
#include <sys/types.h>

using namespace outbox::testing;

namespace {

// Resumes a stopped process when the test ends, whatever happened.
class ContinueOnExit final {
public:
    explicit ContinueOnExit(pid_t pid)
        : m_pid(pid) {}
    ~ContinueOnExit() {
        if (m_pid > 0)
            ::kill(m_pid, SIGCONT);
    }
    Q_DISABLE_COPY_MOVE(ContinueOnExit)

private:
    pid_t m_pid;
};

// Accepts TCP connections on 127.0.0.1 and forwards each to the cluster's
// unix socket. Once armed, the first ack statement (found by its PREPARE
// text, then its EXECUTE) is forwarded, the server's complete reply
// (through ReadyForQuery, so the statement has committed) is swallowed and
// both sides are closed.
class AckDroppingProxy final : public QObject {
public:
    explicit AckDroppingProxy(QString socketPath)
        : m_socketPath(std::move(socketPath)) {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *client = m_server.nextPendingConnection())
                bridge(client);
        });
    }

    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    quint16 port() const { return m_server.serverPort(); }
    int drops() const { return m_drops; }

private:
    struct Link {
        QPointer<QTcpSocket> client;
        QPointer<QLocalSocket> server;
        QByteArray clientText; // what the client sent, to find the ack's statement
        QByteArray ackStatement;
        bool ackSent = false;
        QByteArray swallowed;
    };

    void bridge(QTcpSocket *client) {
        auto *server = new QLocalSocket(this);
        auto link = std::make_shared<Link>();
        link->client = client;
        link->server = server;
        connect(client, &QTcpSocket::readyRead, this, [this, link] { fromClient(*link); });
        connect(server, &QLocalSocket::readyRead, this, [this, link] { fromServer(*link); });
        connect(server, &QLocalSocket::connected, this, [this, link] { fromClient(*link); });
        connect(client, &QTcpSocket::disconnected, this, [link] {
            if (link->server)
                link->server->disconnectFromServer();
        });
        connect(server, &QLocalSocket::disconnected, this, [link] {
            if (link->client)
                link->client->disconnectFromHost();
        });
        connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
        connect(server, &QLocalSocket::disconnected, server, &QObject::deleteLater);
        server->connectToServer(m_socketPath);
    }

    void fromClient(Link &link) {
        if (!link.client || !link.server || link.server->state() != QLocalSocket::ConnectedState)
            return;
        const QByteArray data = link.client->readAll();
        if (data.isEmpty())
            return;
        if (m_drops == 0 && !link.ackSent) {
            link.clientText += data;
            // QPSQL prepares each statement once ("PREPARE qpsqlpstmt_N AS
            // ...") and runs it with "EXECUTE qpsqlpstmt_N (...)".
            static const QRegularExpression prepare(QStringLiteral(
                "PREPARE (qpsqlpstmt_\\w+) AS WITH x AS [^\\x00]*SET status = 'delivered'"));
            if (link.ackStatement.isEmpty()) {
                const auto match = prepare.match(QString::fromLatin1(link.clientText));
                if (match.hasMatch())
                    link.ackStatement = match.captured(1).toLatin1();
            }
            if (!link.ackStatement.isEmpty() &&
                link.clientText.contains(QByteArray("EXECUTE " + link.ackStatement + " (")))
                link.ackSent = true;
            if (!link.ackSent && link.clientText.size() > 1024 * 1024)
                link.clientText = link.clientText.right(64 * 1024);
        }
        link.server->write(data);
    }

    void fromServer(Link &link) {
        if (!link.client || !link.server)
            return;
        const QByteArray data = link.server->readAll();
        if (!link.ackSent || m_drops > 0) {
            link.client->write(data);
            return;
        }
        // ReadyForQuery ('Z', length 5, status 'I'): the statement is done
        // and committed; the dispatcher never hears about it.
        link.swallowed += data;
        if (!link.swallowed.contains(QByteArray("Z\0\0\0\x05I", 6)))
            return;
        ++m_drops;
        link.client->abort();
        link.server->abort();
    }

    QTcpServer m_server;
    QString m_socketPath;
    int m_drops = 0;
};

QStringList dispatchArguments(const QString &connInfo, const QString &url,
                              const QStringList &extra) {
    return dispatchCommand(connInfo, url,
                           QStringList{QStringLiteral("--stats-interval"), QStringLiteral("1s"),
                                       QStringLiteral("--poll-interval"), QStringLiteral("300ms"),
                                       QStringLiteral("--lease"), QStringLiteral("5s"),
                                       QStringLiteral("--request-timeout"), QStringLiteral("2s")} +
                               extra);
}

} // namespace

class TestE2eDbFaults final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void sigtermWhileTheServerIsFrozen() {
        constexpr int events = 50;
        QVERIFY(insertEvents(m_db, events));
        RunnerProcess runner;
        QVERIFY(runner.start(0));
        CtlProcess dispatch(
            dispatchArguments(m_pg->connInfo(m_dbName), runner.url().toString(),
                              {QStringLiteral("--shutdown-grace"), QStringLiteral("2s"),
                               QStringLiteral("--no-listen")}));
        QVERIFY(dispatch.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 60000);

        const qint64 backend =
            scalar(m_db, QStringLiteral("SELECT pid FROM pg_stat_activity"
                                        " WHERE application_name = 'outboxctl-dispatch'"));
        QVERIFY2(backend > 0, qPrintable(dispatch.output()));
        QCOMPARE(::kill(pid_t(backend), SIGSTOP), 0);
        ContinueOnExit resume{pid_t(backend)};
        // The next watchdog claim (every 300 ms) now waits on the frozen
        // server: keepalives and tcp_user_timeout see a healthy peer.
        QTest::qWait(1500);
        QVERIFY(dispatch.running());

        QElapsedTimer clock;
        clock.start();
        dispatch.terminate();
        // Without a bound on the stop the process would wait for the server
        // for as long as it is stopped.
        QVERIFY2(dispatch.waitForExit(30000), qPrintable(dispatch.output()));
        qInfo("SIGTERM to exit with the server frozen: %lld ms (shutdown grace 2s)",
              clock.elapsed());
        QVERIFY(dispatch.exitedNormally());
        QCOMPARE(dispatch.exitCode(), 3);
        QVERIFY2(dispatch.output().contains(QLatin1String("event=stop_timeout")),
                 qPrintable(dispatch.output()));

        ::kill(pid_t(backend), SIGCONT);
        // The acks written before the stall are still there.
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'delivered'")), qint64(events));
    }

    void ambiguousCommitOfAnAck() {
        constexpr int events = 200;
        QVERIFY(insertEvents(m_db, events));
        RunnerProcess runner;
        QVERIFY(runner.start(0));

        const auto &cluster = m_pg->cluster();
        AckDroppingProxy proxy(
            QStringLiteral("%1/.s.PGSQL.%2").arg(cluster.socketDirectory()).arg(cluster.port()));
        QVERIFY(proxy.listen());
        const QString viaProxy =
            QStringLiteral("host=127.0.0.1 port=%1 dbname=%2 user=%3 sslmode=disable "
                           "gssencmode=disable")
                .arg(proxy.port())
                .arg(m_dbName, cluster.superuser());
        CtlProcess dispatch(dispatchArguments(
            viaProxy, runner.url().toString(),
            {QStringLiteral("--no-listen"), QStringLiteral("--concurrency"), QStringLiteral("8")}));
        QVERIFY(dispatch.start());

        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 60000);
        QCOMPARE(proxy.drops(), 1);
        // The driver's own complaints about the statements of the lost
        // connection are shown only with --verbose.
        QVERIFY2(!dispatch.output().contains(QLatin1String("Unable to free statement")),
                 qPrintable(dispatch.output()));
        QVERIFY2(dispatch.output().contains(
                     QLatin1String("event=connection_lost what=\"writing acks and nacks\"")),
                 qPrintable(dispatch.output()));

        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);
        QVERIFY(dispatch.lastValue(QStringLiteral("event=exit"), QStringLiteral("reconnects")) >=
                1);
        // Nothing lost, nothing dead, no failed attempt recorded.
        QCOMPARE(countWhere(m_db, QStringLiteral("status <> 'delivered'")), qint64(0));
        QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts")), qint64(0));
        // Each event reached the runner at least once; the acks whose reply
        // was lost were written once: the retry was fenced out.
        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(events));
        QVERIFY2(dispatch.lastValue(QStringLiteral("event=exit"), QStringLiteral("fenced_out")) >=
                     1,
                 qPrintable(dispatch.output()));
        qInfo("ambiguous commit: %lld deliveries for %d events, fenced_out=%lld", counts.received,
              events,
              dispatch.lastValue(QStringLiteral("event=exit"), QStringLiteral("fenced_out")));
    }
};

QTEST_MAIN(TestE2eDbFaults)
#include "tst_e2e_dbfaults.moc"
