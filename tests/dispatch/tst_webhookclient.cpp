// The delivery client against real sockets: the socket a publisher delivers
// on has TCP_NODELAY set (without it a request whose body is written after
// an unacknowledged segment waits for the runner's delayed ACK), answers in
// every framing HTTP/1.1 allows, and a keep-alive connection the runner
// closed under a request.

#include "dispatch/batchpublisher.h"
#include "dispatch/httppublisher.h"
#include "dispatch/webhookclient.h"
#include "dispatch/webhookrequest.h"

#include <QDir>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <functional>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <sys/socket.h>

using namespace outbox;
using dispatch::HttpAnswer;
using dispatch::PublishOutcome;

namespace {

// A server that reads whole requests (Content-Length) and answers each with
// what `answer(connection, request)` returns, as is (closing after an answer
// that says so); an empty answer drops the connection. Remembers the client
// port of every connection.
class ScriptedServer final : public QObject {
public:
    using Answer = std::function<QByteArray(int connection, int request)>;

    explicit ScriptedServer(Answer answer)
        : m_answer(std::move(answer)) {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                const int index = int(m_clientPorts.size());
                m_clientPorts.append(socket->peerPort());
                auto buffer = std::make_shared<QByteArray>();
                auto requests = std::make_shared<int>(0);
                connect(socket, &QTcpSocket::readyRead, socket,
                        [this, socket, index, buffer, requests] {
                            *buffer += socket->readAll();
                            for (;;) {
                                const qsizetype end = buffer->indexOf("\r\n\r\n");
                                if (end < 0)
                                    return;
                                const QByteArray head = buffer->left(end).toLower();
                                const qsizetype at = head.indexOf("content-length:");
                                const qsizetype length =
                                    at < 0 ? 0
                                           : head.mid(at + 15, head.indexOf('\r', at) - at - 15)
                                                 .trimmed()
                                                 .toLongLong();
                                if (buffer->size() < end + 4 + length)
                                    return;
                                buffer->remove(0, end + 4 + length);
                                ++received;
                                const QByteArray response = m_answer(index, (*requests)++);
                                if (response.isEmpty()) {
                                    socket->abort();
                                    return;
                                }
                                socket->write(response);
                                if (response.contains("close") || response.startsWith("HTTP/1.0"))
                                    socket->disconnectFromHost();
                            }
                        });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }

    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    quint16 port() const { return m_server.serverPort(); }
    QUrl url() const { return QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(port())); }
    const QList<quint16> &clientPorts() const { return m_clientPorts; }
    int received = 0;

private:
    QTcpServer m_server;
    Answer m_answer;
    QList<quint16> m_clientPorts;
};

quint16 portOf(const sockaddr_storage &address) {
    if (address.ss_family == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in *>(&address)->sin_port);
    if (address.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6 *>(&address)->sin6_port);
    return 0;
}

// TCP_NODELAY of this process's socket from local port `local` to `remote`:
// 1 or 0, -1 when there is no such socket.
int noDelayOf(quint16 local, quint16 remote) {
    const QStringList fds = QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::Files);
    for (const QString &name : fds) {
        const int fd = name.toInt();
        sockaddr_storage self{}, peer{};
        socklen_t selfLength = sizeof self, peerLength = sizeof peer;
        if (getsockname(fd, reinterpret_cast<sockaddr *>(&self), &selfLength) != 0 ||
            getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &peerLength) != 0 ||
            portOf(self) != local || portOf(peer) != remote)
            continue;
        int on = 0;
        socklen_t size = sizeof on;
        if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &size) != 0)
            return -1;
        return on != 0 ? 1 : 0;
    }
    return -1;
}

store::ClaimedEvent makeEvent(qsizetype payloadBytes = 20) {
    store::ClaimedEvent event;
    event.id = QUuid::createUuid();
    event.nameSpace = QStringLiteral("billing");
    event.topic = QStringLiteral("invoice.paid");
    event.payload =
        "{\"pad\": \"" + QByteArray(std::max<qsizetype>(payloadBytes - 11, 0), 'x') + "\"}";
    event.attempts = 1;
    event.createdAt = QDateTime::currentDateTimeUtc();
    return event;
}

dispatch::HttpEndpoint localEndpoint(quint16 port) {
    dispatch::HttpEndpoint endpoint;
    endpoint.host = QStringLiteral("127.0.0.1");
    endpoint.port = port;
    return endpoint;
}

const QByteArray kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

// Posts one request with a client configured for `url` and returns its answer.
HttpAnswer postOne(dispatch::WebhookClient &client, const QUrl &url) {
    dispatch::WebhookTarget target;
    target.url = url;
    const QByteArray body = "{}";
    std::optional<HttpAnswer> answer;
    client.post(dispatch::httpRequest(target, {}, body), 1024,
                [&answer](HttpAnswer &got) { answer = got; });
    HttpAnswer wrong;
    wrong.failure = HttpAnswer::Failure::Timeout;
    wrong.error = QStringLiteral("answered from inside post(), or not within 10 s");
    if (answer || !QTest::qWaitFor([&answer] { return answer.has_value(); }, 10000))
        return wrong;
    return *answer;
}

// Posts two requests one after the other; each must be answered `status` and `body`.
void expectTwice(dispatch::WebhookClient &client, const QUrl &url, int status,
                 const QByteArray &body) {
    for (int i = 0; i < 2; ++i) {
        const HttpAnswer answer = postOne(client, url);
        QVERIFY2(answer.failure == HttpAnswer::Failure::None, qPrintable(answer.error));
        QCOMPARE(answer.status, status);
        QCOMPARE(answer.body, body);
    }
}

} // namespace

class TestWebhookClient : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }
    void deliverySocketHasNoDelay_data();
    void deliverySocketHasNoDelay();
    void answerFraming_data();
    void answerFraming();
    void closedKeepAliveConnectionIsRetriedOnce();
};

void TestWebhookClient::deliverySocketHasNoDelay_data() {
    QTest::addColumn<bool>("batch");
    QTest::addColumn<int>("payloadBytes");
    QTest::newRow("per event, small") << false << 300;
    QTest::newRow("per event, 30 KB") << false << 30000;
    QTest::newRow("batch") << true << 300;
}

void TestWebhookClient::deliverySocketHasNoDelay() {
    QFETCH(bool, batch);
    QFETCH(int, payloadBytes);
    ScriptedServer server([](int, int) { return kOk; });
    QVERIFY(server.listen());

    core::DispatcherConfig config;
    config.runnerUrl = server.url();
    config.delivery = batch ? core::Delivery::Batch : core::Delivery::PerEvent;
    std::unique_ptr<dispatch::Publisher> publisher;
    if (batch)
        publisher = std::make_unique<dispatch::BatchPublisher>();
    else
        publisher = std::make_unique<dispatch::HttpPublisher>();
    QVERIFY(publisher->configure(config).ok());
    QSignalSpy spy(publisher.get(), &dispatch::Publisher::finished);
    publisher->publishBatch({makeEvent(payloadBytes), makeEvent(payloadBytes)});
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 2, 10000);
    for (const auto &arguments : spy) {
        const auto outcome = arguments.first().value<PublishOutcome>();
        QVERIFY2(outcome.kind == PublishOutcome::Kind::Delivered, qPrintable(outcome.error));
    }

    // The connections stay open (keep-alive): look at the client's end of each.
    QVERIFY(!server.clientPorts().isEmpty());
    for (const quint16 clientPort : server.clientPorts())
        QCOMPARE(noDelayOf(clientPort, server.port()), 1);
}

void TestWebhookClient::answerFraming_data() {
    QTest::addColumn<QByteArray>("response");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::newRow("Content-Length") << kOk << 200 << QByteArray("ok");
    QTest::newRow("chunked, extension and trailer")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
        << 200 << QByteArray("hello world");
    QTest::newRow("up to the close")
        << QByteArray("HTTP/1.1 503 Busy\r\nConnection: close\r\n\r\ntry later") // no length
        << 503 << QByteArray("try later");
    QTest::newRow("HTTP/1.0") << QByteArray("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nyes")
                              << 200 << QByteArray("yes");
    QTest::newRow("100 Continue first")
        << QByteArray("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\n"
                      "Content-Length: 0\r\n\r\n")
        << 202 << QByteArray();
    QTest::newRow("204 without length")
        << QByteArray("HTTP/1.1 204 No Content\r\n\r\n") << 204 << QByteArray();
}

void TestWebhookClient::answerFraming() {
    QFETCH(QByteArray, response);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    ScriptedServer server([&response](int, int) { return response; });
    QVERIFY(server.listen());
    dispatch::WebhookClient client;
    client.configure(localEndpoint(server.port()), core::Millis(5000), 4);
    // Twice: the second request goes over the same connection when the
    // answer allowed keep-alive, over a new one otherwise.
    expectTwice(client, server.url(), status, body);
    if (QTest::currentTestFailed())
        return;
    const bool keepAlive = !response.contains("close") && !response.startsWith("HTTP/1.0");
    QCOMPARE(server.clientPorts().size(), keepAlive ? 1 : 2);
}

void TestWebhookClient::closedKeepAliveConnectionIsRetriedOnce() {
    // The first connection answers its first request and drops the
    // connection under the second, as a runner closing an idle connection
    // while a request is on its way.
    ScriptedServer server([](int connection, int request) {
        return connection == 0 && request == 1 ? QByteArray() : kOk;
    });
    QVERIFY(server.listen());
    dispatch::WebhookClient client;
    client.configure(localEndpoint(server.port()), core::Millis(5000), 4);
    expectTwice(client, server.url(), 200, "ok");
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(server.clientPorts().size(), 2); // sent again on a new connection
    QCOMPARE(server.received, 3);

    // A new connection closed without an answer is not retried: the error.
    ScriptedServer silent([](int, int) { return QByteArray(); });
    QVERIFY(silent.listen());
    client.configure(localEndpoint(silent.port()), core::Millis(5000), 4);
    const HttpAnswer answer = postOne(client, silent.url());
    QCOMPARE(answer.failure, HttpAnswer::Failure::Connection);
    QCOMPARE(silent.received, 1);
}

QTEST_GUILESS_MAIN(TestWebhookClient)
#include "tst_webhookclient.moc"
