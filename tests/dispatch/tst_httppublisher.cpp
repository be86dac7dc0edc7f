// HttpPublisher against real sockets: the outcome of every kind of answer
// (the delivery contract, docs/RUNNER-CONTRACT.md), the headers and signature
// a runner receives, error excerpts without secrets, and the manager pool.

#include "core/webhooksigner.h"
#include "devtools/devrunner.h"
#include "dispatch/httppublisher.h"
#include "dispatchtesting.h"
#include "support/localport.h"

#include <QSignalSpy>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryFile>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;
using devtools::DevRunner;
using devtools::DevRunnerSettings;
using dispatch::HttpPublisher;
using dispatch::PublishOutcome;

namespace {

// Publishes one event and waits for its outcome (fails the test on timeout).
void publishOne(HttpPublisher &publisher, const store::ClaimedEvent &event, PublishOutcome &out) {
    QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
    publisher.publish(event);
    QCOMPARE(spy.size(), 0); // never synchronously
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 20000);
    out = spy.first().first().value<PublishOutcome>();
    QCOMPARE(out.id, event.id);
    QCOMPARE(out.attempts, event.attempts);
    QCOMPARE(publisher.inFlight(), 0);
}

} // namespace

class TestHttpPublisher : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }

    void outcomes_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("fixedStatus");
        QTest::addColumn<QByteArray>("retryAfter");
        QTest::addColumn<QList<int>>("permanent");
        QTest::addColumn<int>("expectedKind");
        QTest::addColumn<int>("expectedStatus");   // 0 = no HTTP status
        QTest::addColumn<qint64>("retryAfterMin"); // -1 = none expected
        QTest::addColumn<qint64>("retryAfterMax");
        QTest::addColumn<QString>("errorContains");

        const int normal = int(DevRunnerSettings::Mode::Normal);
        const int delivered = int(PublishOutcome::Kind::Delivered);
        const int retry = int(PublishOutcome::Kind::Retry);
        const int permanent = int(PublishOutcome::Kind::Permanent);
        const QList<int> defaults{410};

        QTest::newRow("200") << normal << 0 << QByteArray() << defaults << delivered << 200 << -1LL
                             << -1LL << QString();
        QTest::newRow("204") << normal << 204 << QByteArray() << defaults << delivered << 204
                             << -1LL << -1LL << QString();
        QTest::newRow("302 not followed")
            << int(DevRunnerSettings::Mode::Redirect) << 0 << QByteArray() << defaults << retry
            << 302 << -1LL << -1LL << QStringLiteral("redirect not followed");
        QTest::newRow("400") << normal << 400 << QByteArray() << defaults << retry << 400 << -1LL
                             << -1LL << QStringLiteral("HTTP 400 Bad Request");
        QTest::newRow("404") << normal << 404 << QByteArray() << defaults << retry << 404 << -1LL
                             << -1LL << QStringLiteral("HTTP 404");
        QTest::newRow("408") << normal << 408 << QByteArray() << defaults << retry << 408 << -1LL
                             << -1LL << QStringLiteral("HTTP 408");
        QTest::newRow("410 permanent") << normal << 410 << QByteArray() << defaults << permanent
                                       << 410 << -1LL << -1LL << QStringLiteral("HTTP 410 Gone");
        QTest::newRow("400 configured permanent")
            << normal << 400 << QByteArray() << QList<int>{400, 410} << permanent << 400 << -1LL
            << -1LL << QStringLiteral("HTTP 400");
        QTest::newRow("410 not configured permanent")
            << normal << 410 << QByteArray() << QList<int>{} << retry << 410 << -1LL << -1LL
            << QStringLiteral("HTTP 410");
        QTest::newRow("429 Retry-After seconds")
            << normal << 429 << QByteArray("7") << defaults << retry << 429 << 7000LL << 7000LL
            << QStringLiteral("HTTP 429 Too Many Requests");
        QTest::newRow("500") << normal << 500 << QByteArray() << defaults << retry << 500 << -1LL
                             << -1LL << QStringLiteral("HTTP 500");
        const QByteArray inTwoMinutes =
            QLocale::c()
                .toString(QDateTime::currentDateTimeUtc().addSecs(120),
                          QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'"))
                .toLatin1();
        QTest::newRow("503 Retry-After date")
            << normal << 503 << inTwoMinutes << defaults << retry << 503 << 60000LL << 121000LL
            << QStringLiteral("HTTP 503 Service Unavailable");
        QTest::newRow("timeout") << int(DevRunnerSettings::Mode::NeverRespond) << 0 << QByteArray()
                                 << defaults << retry << 0 << -1LL << -1LL
                                 << QStringLiteral("timeout");
        QTest::newRow("reset mid-response")
            << int(DevRunnerSettings::Mode::ResetMidResponse) << 0 << QByteArray() << defaults
            << retry << -2 << -1LL << -1LL << QString();
        QTest::newRow("closed without response")
            << int(DevRunnerSettings::Mode::CloseWithoutResponse) << 0 << QByteArray() << defaults
            << retry << 0 << -1LL << -1LL << QStringLiteral("connection error");
    }

    void outcomes() {
        QFETCH(int, mode);
        QFETCH(int, fixedStatus);
        QFETCH(QByteArray, retryAfter);
        QFETCH(QList<int>, permanent);
        QFETCH(int, expectedKind);
        QFETCH(int, expectedStatus);
        QFETCH(qint64, retryAfterMin);
        QFETCH(qint64, retryAfterMax);
        QFETCH(QString, errorContains);

        DevRunner runner;
        DevRunnerSettings settings;
        settings.mode = DevRunnerSettings::Mode(mode);
        settings.fixedStatus = fixedStatus;
        settings.retryAfter = retryAfter;
        QVERIFY(runner.setSettings(settings).ok());
        QVERIFY(runner.listen().ok());

        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(runner.url());
        config.permanentStatuses = permanent;
        config.requestTimeout = core::Millis(400);
        QVERIFY(publisher.configure(config).ok());

        PublishOutcome outcome;
        publishOne(publisher, invoiceEvent(), outcome);
        if (QTest::currentTestFailed())
            return;

        QCOMPARE(int(outcome.kind), expectedKind);
        if (expectedStatus == 0)
            QVERIFY2(!outcome.httpStatus, qPrintable(outcome.error));
        else if (expectedStatus > 0)
            QCOMPARE(outcome.httpStatus.value_or(0), expectedStatus);
        if (retryAfterMin < 0) {
            QVERIFY(!outcome.retryAfter);
        } else {
            QVERIFY(outcome.retryAfter);
            QVERIFY2(outcome.retryAfter->count() >= retryAfterMin &&
                         outcome.retryAfter->count() <= retryAfterMax,
                     qPrintable(QString::number(outcome.retryAfter->count())));
        }
        if (outcome.kind == PublishOutcome::Kind::Delivered) {
            QVERIFY(outcome.error.isEmpty());
        } else {
            QVERIFY(!outcome.error.isEmpty());
            QVERIFY2(outcome.error.contains(errorContains), qPrintable(outcome.error));
            QVERIFY(outcome.error.size() <= PublishOutcome::MaxErrorLength);
        }
        if (settings.mode == DevRunnerSettings::Mode::Redirect) {
            // Not followed: the runner saw exactly one request, to the original path.
            QTest::qWait(100);
            QCOMPARE(runner.stats().received, 1);
        }
    }

    void connectionRefused() {
        const auto port = quint16(testing::closedPort());
        QVERIFY(port != 0);
        HttpPublisher publisher;
        QVERIFY(publisher
                    .configure(publisherConfig(
                        QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(port))))
                    .ok());
        PublishOutcome outcome;
        publishOne(publisher, invoiceEvent(), outcome);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QVERIFY(!outcome.httpStatus);
        QVERIFY2(outcome.error.contains(QLatin1String("connection error")),
                 qPrintable(outcome.error));
        QVERIFY2(outcome.error.contains(QLatin1String("refused"), Qt::CaseInsensitive),
                 qPrintable(outcome.error));
    }

    void headersAndSignature() {
        DevRunner runner;
        runner.setRecording(true);
        QVERIFY(runner.listen().ok());

        const QString second =
            QStringLiteral("whsec_") + QString::fromLatin1(QByteArray("rotated key").toBase64());
        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(runner.url());
        config.secrets = {kWebhookSecret, second};
        config.bearerToken = QStringLiteral("token-123");
        QVERIFY(publisher.configure(config).ok());

        store::ClaimedEvent event = invoiceEvent(3);
        event.tenantId = QUuid::createUuid();
        event.dedupeKey =
            event.tenantId->toString(QUuid::WithoutBraces) + QStringLiteral("/invoice-42");
        event.topic = QStringLiteral("odd\ntopic é");
        PublishOutcome outcome;
        publishOne(publisher, event, outcome);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);

        const auto requests = runner.recordedRequests();
        QCOMPARE(requests.size(), 1);
        const auto &request = requests.first();
        const QByteArray id = event.id.toByteArray(QUuid::WithoutBraces);
        QCOMPARE(request.method, QByteArray("POST"));
        QCOMPARE(request.path, QByteArray("/events"));
        QCOMPARE(request.body, event.payload);
        QCOMPARE(request.header("content-type"), QByteArray("application/json"));
        QCOMPARE(request.header("webhook-id"), id);
        const qint64 timestamp = request.header("webhook-timestamp").toLongLong();
        QVERIFY(qAbs(timestamp - QDateTime::currentSecsSinceEpoch()) < 60);

        const QByteArray signature = request.header("webhook-signature");
        QCOMPARE(signature.split(' ').size(), 2); // one per secret while rotating
        for (const QString &secret : {kWebhookSecret, second}) {
            const auto verifier = core::WebhookSigner::fromSecrets({secret});
            QVERIFY(verifier.ok());
            QVERIFY(verifier->verify(id, timestamp, event.payload, signature));
        }
        QCOMPARE(request.header("idempotency-key"), event.dedupeKey->toUtf8());
        QCOMPARE(request.header("outbox-namespace"), QByteArray("billing"));
        QCOMPARE(request.header("outbox-topic"), QByteArray("odd%0Atopic %C3%A9"));
        QCOMPARE(request.header("outbox-tenant"),
                 event.tenantId->toByteArray(QUuid::WithoutBraces));
        QCOMPARE(request.header("outbox-attempt"), QByteArray("3"));
        QCOMPARE(request.header("authorization"), QByteArray("Bearer token-123"));
    }

    void idempotencyKeyFallsBackToId() {
        DevRunner runner;
        runner.setRecording(true);
        QVERIFY(runner.listen().ok());
        HttpPublisher publisher;
        QVERIFY(publisher.configure(publisherConfig(runner.url())).ok());
        const store::ClaimedEvent event = invoiceEvent();
        PublishOutcome outcome;
        publishOne(publisher, event, outcome);
        if (QTest::currentTestFailed())
            return;
        const auto request = runner.recordedRequests().value(0);
        const QByteArray id = event.id.toByteArray(QUuid::WithoutBraces);
        QCOMPARE(request.header("idempotency-key"), id);
        QVERIFY(request.header("outbox-tenant").isNull());
        QVERIFY(request.header("authorization").isNull());
        QVERIFY(request.header("webhook-signature").isNull()); // no secret, no signature
    }

    void signatureCheckedByRunner_data() {
        const QString other =
            QStringLiteral("whsec_") + QString::fromLatin1(QByteArray("other").toBase64());
        QTest::addColumn<QStringList>("publisherSecrets");
        QTest::addColumn<QStringList>("runnerSecrets");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("same secret")
            << QStringList{kWebhookSecret} << QStringList{kWebhookSecret} << true;
        QTest::newRow("rotation: sender has old and new")
            << QStringList{other, kWebhookSecret} << QStringList{kWebhookSecret} << true;
        QTest::newRow("wrong secret") << QStringList{other} << QStringList{kWebhookSecret} << false;
        QTest::newRow("no signature") << QStringList{} << QStringList{kWebhookSecret} << false;
    }

    void signatureCheckedByRunner() {
        QFETCH(QStringList, publisherSecrets);
        QFETCH(QStringList, runnerSecrets);
        QFETCH(bool, accepted);

        DevRunner runner;
        QVERIFY(runner.setSecrets(runnerSecrets).ok());
        QVERIFY(runner.listen().ok());
        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(runner.url());
        config.secrets = publisherSecrets;
        QVERIFY(publisher.configure(config).ok());

        PublishOutcome outcome;
        publishOne(publisher, invoiceEvent(), outcome);
        if (QTest::currentTestFailed())
            return;
        if (accepted) {
            QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);
            QCOMPARE(runner.stats().badSignatures, 0);
        } else {
            QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
            QCOMPARE(outcome.httpStatus.value_or(0), 401);
            QCOMPARE(runner.stats().badSignatures, 1);
        }
    }

    void errorExcerptIsShortAndHasNoSecrets() {
        // A runner that echoes the token back in a huge error page.
        const QByteArray token = "very-secret-token";
        QTcpServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        connect(&server, &QTcpServer::newConnection, this, [&] {
            QTcpSocket *socket = server.nextPendingConnection();
            connect(socket, &QTcpSocket::readyRead, socket, [socket, token] {
                if (!socket->readAll().contains("\r\n\r\n"))
                    return;
                const QByteArray body = "denied for Bearer " + token + ' ' + QByteArray(5000, 'x');
                socket->write("HTTP/1.1 500 Internal Server Error\r\nContent-Length: " +
                              QByteArray::number(body.size()) + "\r\n\r\n" + body);
            });
        });

        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(
            QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(server.serverPort())));
        config.bearerToken = QString::fromLatin1(token);
        QVERIFY(publisher.configure(config).ok());
        PublishOutcome outcome;
        publishOne(publisher, invoiceEvent(), outcome);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QCOMPARE(outcome.httpStatus.value_or(0), 500);
        QVERIFY(outcome.error.size() <= PublishOutcome::MaxErrorLength);
        QVERIFY2(outcome.error.contains(QLatin1String("denied for Bearer")),
                 qPrintable(outcome.error));
        QVERIFY2(!outcome.error.contains(QLatin1String(token)), qPrintable(outcome.error));
    }

    void poolKeepsConcurrencyInFlight() {
        DevRunner runner;
        runner.setLatency(core::Millis(200));
        QVERIFY(runner.listen().ok());

        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(runner.url());
        config.concurrency = 20;
        QVERIFY(publisher.configure(config).ok());

        QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
        for (int i = 0; i < 21; ++i)
            publisher.publish(invoiceEvent());
        QCOMPARE(publisher.inFlight(), 21);
        // One connection per request in flight, up to the concurrency: the
        // 21st waits for a free one.
        QTRY_COMPARE_WITH_TIMEOUT(runner.stats().received, 20, 5000);
        QCOMPARE(publisher.connections(), 20);
        QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 21, 20000);
        for (const auto &arguments : spy)
            QCOMPARE(arguments.first().value<PublishOutcome>().kind,
                     PublishOutcome::Kind::Delivered);
        QCOMPARE(runner.stats().connections, 20);
        QCOMPARE(runner.stats().uniqueIds, 21);
        QCOMPARE(publisher.connections(), 20); // kept open for the next requests
    }

    void abortAllEmitsNothing() {
        DevRunner runner;
        runner.setMode(DevRunnerSettings::Mode::NeverRespond);
        QVERIFY(runner.listen().ok());
        HttpPublisher publisher;
        QVERIFY(publisher.configure(publisherConfig(runner.url())).ok());
        QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
        for (int i = 0; i < 3; ++i)
            publisher.publish(invoiceEvent());
        QTRY_COMPARE(runner.stats().received, 3);
        publisher.abortAll();
        QCOMPARE(publisher.inFlight(), 0);
        QTest::qWait(200);
        QCOMPARE(spy.size(), 0);
    }

    void badCaFileIsRefused() {
        QTemporaryFile file;
        QVERIFY(file.open());
        file.write("not a certificate\n");
        file.close();
        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(QUrl(QStringLiteral("https://localhost/")));
        config.caFile = file.fileName();
        const auto result = publisher.configure(config);
        QVERIFY(!result.ok());
        QVERIFY2(result.errorMessage().contains(QLatin1String("PEM")),
                 qPrintable(result.errorMessage()));
    }

    void httpsWithCaFile_data() {
        QTest::addColumn<bool>("withCaFile");
        QTest::newRow("runner's CA given") << true;
        QTest::newRow("unknown CA") << false;
    }

    void httpsWithCaFile() {
        QFETCH(bool, withCaFile);
        if (!QSslSocket::supportsSsl())
            QFAIL("Qt has no TLS backend here; install the OpenSSL TLS plugin");
        const QString certPath = QFINDTESTDATA("data/localhost.crt");
        const QString keyPath = QFINDTESTDATA("data/localhost.key");
        QVERIFY(!certPath.isEmpty() && !keyPath.isEmpty());
        const auto certificates = QSslCertificate::fromPath(certPath);
        QCOMPARE(certificates.size(), 1);
        QFile keyFile(keyPath);
        QVERIFY(keyFile.open(QIODevice::ReadOnly));
        const QSslKey key(&keyFile, QSsl::Rsa);
        QVERIFY(!key.isNull());

        // A minimal TLS runner: answers 200 once the request head has arrived.
        QSslServer server;
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setLocalCertificate(certificates.first());
        tls.setPrivateKey(key);
        server.setSslConfiguration(tls);
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        connect(&server, &QTcpServer::pendingConnectionAvailable, this, [&server] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                    if (socket->readAll().contains("\r\n\r\n"))
                        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                });
            }
        });

        HttpPublisher publisher;
        core::DispatcherConfig config = publisherConfig(
            QUrl(QStringLiteral("https://127.0.0.1:%1/events").arg(server.serverPort())));
        if (withCaFile)
            config.caFile = certPath;
        QVERIFY(publisher.configure(config).ok());
        PublishOutcome outcome;
        publishOne(publisher, invoiceEvent(), outcome);
        if (QTest::currentTestFailed())
            return;
        if (withCaFile) {
            QVERIFY2(outcome.kind == PublishOutcome::Kind::Delivered, qPrintable(outcome.error));
            QCOMPARE(outcome.httpStatus.value_or(0), 200);
        } else {
            QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
            QVERIFY(!outcome.httpStatus);
            QVERIFY2(outcome.error.startsWith(QLatin1String("TLS error")),
                     qPrintable(outcome.error));
        }
    }

    void classifyStatus_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("kind");
        const int delivered = int(PublishOutcome::Kind::Delivered);
        const int retry = int(PublishOutcome::Kind::Retry);
        const int permanent = int(PublishOutcome::Kind::Permanent);
        for (int status : {200, 201, 202, 204, 299})
            QTest::addRow("%d", status) << status << delivered;
        for (int status : {100, 301, 302, 304, 307, 308, 400, 401, 403, 404, 408, 409, 422, 429,
                           500, 502, 503, 504})
            QTest::addRow("%d", status) << status << retry;
        QTest::newRow("410") << 410 << permanent;
    }

    void classifyStatus() {
        QFETCH(int, status);
        QFETCH(int, kind);
        QCOMPARE(int(HttpPublisher::classifyStatus(status, {410})), kind);
    }
};

QTEST_GUILESS_MAIN(TestHttpPublisher)
#include "tst_httppublisher.moc"
