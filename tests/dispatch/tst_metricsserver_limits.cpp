// The /metrics endpoint runs inside the dispatcher: whoever reaches its port
// must not make it hold memory. A request body is refused without being read,
// a request head is capped, only GET is served.

#include "dispatch/metricsserver.h"

#include <QTcpSocket>
#include <QtTest>

using outbox::dispatch::MetricsServer;

namespace {

// The status of the answer in `bytes`, or 0 while there is none.
int statusOf(const QByteArray &bytes) {
    if (!bytes.startsWith("HTTP/1.1 ") || bytes.size() < 12)
        return 0;
    return bytes.mid(9, 3).toInt();
}

struct Sent {
    qint64 written = 0; // bytes the kernel accepted before the answer came
    QByteArray answer;
};

// Sends `head`, then up to `bodyBytes` of body in 64 KiB pieces, stopping as
// soon as an answer arrives or the server closes the connection.
Sent sendUntilAnswered(quint16 port, const QByteArray &head, qint64 bodyBytes) {
    Sent sent;
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(10000))
        return sent;
    socket.write(head);
    const QByteArray piece(64 * 1024, 'x');
    qint64 queued = 0;
    while (queued < bodyBytes && socket.state() == QAbstractSocket::ConnectedState) {
        const qint64 n =
            socket.write(piece.constData(), std::min<qint64>(piece.size(), bodyBytes - queued));
        if (n <= 0)
            break;
        queued += n;
        socket.waitForBytesWritten(2000);
        socket.waitForReadyRead(1);
        sent.answer += socket.readAll();
        if (statusOf(sent.answer) != 0)
            break;
    }
    sent.written = queued - socket.bytesToWrite();
    // The rest of the answer (or the whole of it after the last piece).
    while (socket.state() == QAbstractSocket::ConnectedState && socket.waitForReadyRead(10000))
        sent.answer += socket.readAll();
    sent.answer += socket.readAll();
    return sent;
}

} // namespace

class TestMetricsServerLimits final : public QObject {
    Q_OBJECT

private:
    MetricsServer m_server;

    // A client that sends `head` and then up to 64 MiB (of body, or of the
    // head itself when it is not finished), in a thread of its own: the
    // server lives in this one.
    static constexpr qint64 kFlood = 64LL * 1024 * 1024;
    Sent flood(const QByteArray &head) {
        Sent sent;
        QThread *client =
            QThread::create([&] { sent = sendUntilAnswered(m_server.port(), head, kFlood); });
        client->start();
        [&] { QTRY_VERIFY_WITH_TIMEOUT(client->isFinished(), 120000); }();
        client->wait();
        delete client;
        qInfo("answered %d after %lld of %lld bytes", statusOf(sent.answer), sent.written, kFlood);
        return sent;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_server.listen(QHostAddress::LocalHost, 0).ok()); }

    void largeBodyIsNotRead() {
        const Sent sent = flood("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                QByteArray::number(kFlood) + "\r\n\r\n");
        QCOMPARE(statusOf(sent.answer), 413);
        QVERIFY(sent.answer.contains("request bodies are not accepted"));
        QVERIFY2(sent.written < kFlood, "the server took the whole body before answering");
    }

    void chunkedBodyIsNotRead() {
        const Sent sent = flood("GET /metrics HTTP/1.1\r\nHost: x\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n");
        QCOMPARE(statusOf(sent.answer), 413);
        QVERIFY(sent.written < kFlood);
    }

    void longHeadIsCut() {
        const Sent sent = flood("GET /metrics HTTP/1.1\r\nX-Filler: ");
        QCOMPARE(statusOf(sent.answer), 431);
        QVERIFY(sent.written < kFlood);
    }

    void onlyGetIsServed_data() {
        QTest::addColumn<QByteArray>("request");
        QTest::addColumn<int>("status");
        QTest::newRow("get") << QByteArray("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n") << 200;
        QTest::newRow("get, empty body")
            << QByteArray("GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n") << 200;
        QTest::newRow("query") << QByteArray("GET /metrics?x=1 HTTP/1.0\r\n\r\n") << 200;
        QTest::newRow("other path") << QByteArray("GET /admin HTTP/1.1\r\n\r\n") << 404;
        QTest::newRow("delete") << QByteArray("DELETE /metrics HTTP/1.1\r\n\r\n") << 405;
        QTest::newRow("post, no body")
            << QByteArray("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n") << 405;
        QTest::newRow("post, small body")
            << QByteArray("POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}") << 413;
        QTest::newRow("not http") << QByteArray("hello\r\n\r\n") << 400;
    }
    void onlyGetIsServed() {
        QFETCH(QByteArray, request);
        QFETCH(int, status);
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_server.port());
        QTRY_COMPARE(socket.state(), QAbstractSocket::ConnectedState);
        socket.write(request);
        QByteArray answer;
        QTRY_VERIFY_WITH_TIMEOUT(
            (answer += socket.readAll(),
             socket.state() == QAbstractSocket::UnconnectedState || answer.contains("\r\n\r\n")),
            15000);
        QCOMPARE(statusOf(answer), status);
        QVERIFY(answer.contains("Connection: close"));
        if (status == 405)
            QVERIFY(answer.contains("Allow: GET"));
        if (status == 200)
            QTRY_VERIFY((answer += socket.readAll(), answer.contains("outbox_dispatch_")));
    }
};

QTEST_GUILESS_MAIN(TestMetricsServerLimits)
#include "tst_metricsserver_limits.moc"
