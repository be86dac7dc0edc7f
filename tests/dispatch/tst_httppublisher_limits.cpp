// HttpPublisher against runners that answer with more than it reads: a real
// local HTTP server streams a huge body (with or without Content-Length);
// the publisher must stop at --max-response-bytes, abort, and quote only the
// first bytes in its error.

#include "dispatch/httppublisher.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

using namespace outbox;
using dispatch::HttpPublisher;
using dispatch::PublishOutcome;

namespace {

constexpr qint64 kHugeBody = 50LL * 1024 * 1024;

// Answers every request with `status` and a body of kHugeBody bytes, written
// in chunks as the socket drains (so the server itself holds little), and
// counts what the client let it write before closing.
class HugeReplyServer final : public QObject {
public:
    HugeReplyServer(int status, bool withLength)
        : m_status(status)
        , m_withLength(withLength) {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            QTcpSocket *socket = m_server.nextPendingConnection();
            connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                m_request += socket->readAll();
                if (!m_request.contains("\r\n\r\n") || m_answering)
                    return;
                m_answering = true;
                QByteArray head = "HTTP/1.1 " + QByteArray::number(m_status) + " Status\r\n";
                head += m_withLength ? "Content-Length: " + QByteArray::number(kHugeBody) + "\r\n"
                                     : QByteArray("Connection: close\r\n");
                socket->write(head + "\r\n");
                writeMore(socket);
            });
            connect(socket, &QTcpSocket::bytesWritten, socket,
                    [this, socket] { writeMore(socket); });
            connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        });
    }

    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    QUrl url() const {
        return QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(m_server.serverPort()));
    }
    qint64 written() const { return m_written; }

private:
    void writeMore(QTcpSocket *socket) {
        if (!m_answering || socket->bytesToWrite() > 256 * 1024 || m_written >= kHugeBody)
            return;
        // The first bytes say what the runner meant; the rest is filler.
        const QByteArray chunk =
            m_written == 0 ? QByteArray("runner says: queue full ") + QByteArray(65536, 'x')
                           : QByteArray(65536, 'y');
        m_written += socket->write(chunk.left(kHugeBody - m_written));
        if (m_written >= kHugeBody && !m_withLength)
            socket->disconnectFromHost();
    }

    QTcpServer m_server;
    int m_status;
    bool m_withLength;
    QByteArray m_request;
    bool m_answering = false;
    qint64 m_written = 0;
};

} // namespace

class TestHttpPublisherLimits : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }

    void hugeReplyIsCut_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<bool>("withLength");
        QTest::addColumn<int>("kind");
        QTest::newRow("200 streamed") << 200 << false << int(PublishOutcome::Kind::Retry);
        QTest::newRow("200 with length") << 200 << true << int(PublishOutcome::Kind::Retry);
        QTest::newRow("503 streamed") << 503 << false << int(PublishOutcome::Kind::Retry);
        QTest::newRow("410 streamed") << 410 << false << int(PublishOutcome::Kind::Permanent);
    }

    void hugeReplyIsCut() {
        QFETCH(int, status);
        QFETCH(bool, withLength);
        QFETCH(int, kind);

        HugeReplyServer server(status, withLength);
        QVERIFY(server.listen());
        HttpPublisher publisher;
        core::DispatcherConfig config;
        config.runnerUrl = server.url();
        config.requestTimeout = core::Millis(20000);
        QCOMPARE(config.maxResponseBytes, 64 * 1024); // the default
        QVERIFY(publisher.configure(config).ok());

        QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
        publisher.publish(testing::invoiceEvent());
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 30000);
        const auto outcome = spy.first().first().value<PublishOutcome>();
        QCOMPARE(int(outcome.kind), kind);
        QCOMPARE(outcome.httpStatus.value_or(0), status);
        QVERIFY2(outcome.error.contains(QLatin1String("--max-response-bytes (64 KiB)")),
                 qPrintable(outcome.error));
        QVERIFY2(outcome.error.contains(QLatin1String("runner says: queue full")),
                 qPrintable(outcome.error));
        QVERIFY(outcome.error.size() <= PublishOutcome::MaxErrorLength);
        // The connection was dropped long before the server could write the
        // whole body: the socket buffers between the two hold a few MiB at most.
        QVERIFY2(server.written() < kHugeBody, qPrintable(QString::number(server.written())));
        QCOMPARE(publisher.inFlight(), 0);
    }

    void capIsValidated() {
        core::DispatcherConfig config;
        config.runnerUrl = QUrl(QStringLiteral("http://127.0.0.1:1/events"));
        QVERIFY(config.validate().ok());
        config.maxResponseBytes = 0;
        QVERIFY(!config.validate().ok());
        QVERIFY(config.validate().errorMessage().contains(QLatin1String("--max-response-bytes")));
        config.maxResponseBytes = core::DispatcherConfig::MaxResponseBytesLimit + 1;
        QVERIFY(!config.validate().ok());
        QVERIFY(config.describe().contains(QLatin1String("max-response-bytes=")));
    }
};

QTEST_MAIN(TestHttpPublisherLimits)
#include "tst_httppublisher_limits.moc"
