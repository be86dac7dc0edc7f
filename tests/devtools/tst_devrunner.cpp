// The development runner on real sockets: Standard Webhooks verification
// (the specification's own test vector), keep-alive and pipelining, partial
// reads, failure modes, counters, and live settings from another thread.

#include "devtools/devrunner.h"
#include "dispatch/httpclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QThread>
#include <QtTest>

using outbox::devtools::DevRunner;
using outbox::devtools::DevRunnerSettings;
using outbox::testing::RawHttpClient;

namespace {

// The Standard Webhooks reference test vector.
const QString kSecret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray kId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const QByteArray kTimestamp = "1614265330";
const QByteArray kBody = R"({"test": 2432232314})";
const QByteArray kSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

QByteArray vectorRequest(const QByteArray &signature, const QByteArray &body = kBody) {
    QList<QPair<QByteArray, QByteArray>> headers{{"webhook-id", kId},
                                                 {"webhook-timestamp", kTimestamp}};
    if (!signature.isNull())
        headers.append({"webhook-signature", signature});
    return RawHttpClient::post("/events", headers, body);
}

QByteArray plainPost(const QByteArray &id, const QByteArray &body = "{}") {
    return RawHttpClient::post("/events", {{"webhook-id", id}}, body);
}

} // namespace

class TestDevRunner : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void signatureVector_data();
    void signatureVector();
    void runnerWithRotatedSecrets();
    void timestampToleranceRejectsOldSignatures();
    void malformedSecretsAreRefused();
    void keepAliveAndPipelining();
    void requestArrivingByteByByte();
    void countsDeliveriesAndDuplicates();
    void failRateAndFixedStatus();
    void batchesAreAnsweredPerEvent();
    void latencyDelaysWithoutBlocking();
    void closeWithoutResponseAndNeverRespond();
    void malformedRequestGets400();
    void settingsChangeFromAnotherThread();
};

void TestDevRunner::signatureVector_data() {
    QTest::addColumn<QByteArray>("signature");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("expectedStatus");

    QTest::newRow("reference vector") << kSignature << kBody << 200;
    QTest::newRow("rotation list, valid one last")
        << QByteArray("v1,Zm9vYmFy v1a,whatever " + kSignature) << kBody << 200;
    QTest::newRow("tampered body") << kSignature << QByteArray(R"({"test": 2432232315})") << 401;
    QTest::newRow("wrong signature")
        << QByteArray("v1,g1hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") << kBody << 401;
    QTest::newRow("missing signature") << QByteArray() << kBody << 401;
    QTest::newRow("wrong version prefix")
        << QByteArray("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") << kBody << 401;
}

void TestDevRunner::signatureVector() {
    QFETCH(QByteArray, signature);
    QFETCH(QByteArray, body);
    QFETCH(int, expectedStatus);

    DevRunner runner;
    DevRunnerSettings settings;
    settings.secrets = {kSecret};
    settings.timestampTolerance = outbox::core::Millis(0); // the vector is from 2021
    QVERIFY(runner.setSettings(settings).ok());
    QVERIFY(runner.listen().ok());

    RawHttpClient client(runner.port());
    client.send(vectorRequest(signature, body));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().first().status, expectedStatus);

    const auto stats = runner.stats();
    QCOMPARE(stats.received, 1);
    QCOMPARE(stats.badSignatures, expectedStatus == 401 ? 1 : 0);
    QCOMPARE(stats.delivered, expectedStatus == 200 ? 1 : 0);
    QCOMPARE(runner.deliveredCount(kId), expectedStatus == 200 ? 1 : 0);
}

void TestDevRunner::runnerWithRotatedSecrets() {
    // The runner knows the old and the new secret while rotating: a sender
    // still using the old one is accepted.
    DevRunner runner;
    DevRunnerSettings settings;
    settings.secrets = {
        QStringLiteral("whsec_") + QString::fromLatin1(QByteArray("new key").toBase64()), kSecret};
    settings.timestampTolerance = outbox::core::Millis(0);
    QVERIFY(runner.setSettings(settings).ok());
    QVERIFY(runner.listen().ok());

    RawHttpClient client(runner.port());
    client.send(vectorRequest(kSignature));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().first().status, 200);
}

void TestDevRunner::timestampToleranceRejectsOldSignatures() {
    DevRunner runner;
    QVERIFY(runner.setSecrets({kSecret}).ok()); // default tolerance: 5 minutes
    QVERIFY(runner.listen().ok());

    RawHttpClient client(runner.port());
    client.send(vectorRequest(kSignature));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().first().status, 401);
    QCOMPARE(runner.stats().badSignatures, 1);
}

void TestDevRunner::malformedSecretsAreRefused() {
    DevRunner runner;
    const auto result = runner.setSecrets({QStringLiteral("whsec_not*base64!")});
    QVERIFY(!result.ok());
    QVERIFY(!result.errorMessage().contains(QLatin1String("not*base64")));
    QVERIFY(runner.settings().secrets.isEmpty()); // nothing changed
}

void TestDevRunner::keepAliveAndPipelining() {
    DevRunner runner;
    runner.setFixedStatus(202);
    QVERIFY(runner.listen().ok());

    RawHttpClient client(runner.port());
    // Three requests in one write: answered in order on one connection.
    client.send(plainPost("a", "1") + plainPost("b", "22") + plainPost("c", "333"));
    QTRY_COMPARE(client.responses().size(), 3);
    for (const auto &response : client.responses())
        QCOMPARE(response.status, 202);
    QVERIFY(!client.isClosed());

    client.send(plainPost("d"));
    QTRY_COMPARE(client.responses().size(), 4);
    QCOMPARE(runner.stats().connections, 1);
    QCOMPARE(runner.stats().received, 4);
}

void TestDevRunner::requestArrivingByteByByte() {
    DevRunner runner;
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());

    RawHttpClient client(runner.port());
    const QByteArray request = plainPost("slow", R"({"k":"v"})");
    for (char c : request) {
        client.send(QByteArray(1, c));
        QTest::qWait(1);
    }
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().first().status, 200);
    const auto recorded = runner.recordedRequests();
    QCOMPARE(recorded.size(), 1);
    QCOMPARE(recorded.first().body, QByteArray(R"({"k":"v"})"));
    QCOMPARE(recorded.first().header("WEBHOOK-ID"), QByteArray("slow"));
}

void TestDevRunner::countsDeliveriesAndDuplicates() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    const QUuid id = QUuid::createUuid();
    const QByteArray idText = id.toByteArray(QUuid::WithoutBraces);

    RawHttpClient client(runner.port());
    client.send(plainPost(idText) + plainPost(idText) + plainPost("other"));
    QTRY_COMPARE(client.responses().size(), 3);

    const auto stats = runner.stats();
    QCOMPARE(stats.delivered, 3);
    QCOMPARE(stats.uniqueIds, 2);
    QCOMPARE(stats.duplicates, 1);
    QCOMPARE(runner.deliveredCount(id), 2);
    QCOMPARE(runner.deliveredCount(QByteArray("other")), 1);

    runner.resetStats();
    QCOMPARE(runner.stats().delivered, 0);
    QCOMPARE(runner.deliveredCount(id), 0);
}

void TestDevRunner::failRateAndFixedStatus() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    RawHttpClient client(runner.port());

    runner.setFailRate(1.0);
    runner.setFailStatus(502);
    runner.setRetryAfter("3");
    client.send(plainPost("x"));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().at(0).status, 502);
    QCOMPARE(client.responses().at(0).header("retry-after"), QByteArray("3"));

    runner.setFailRate(0.0);
    runner.setFixedStatus(410);
    client.send(plainPost("y"));
    QTRY_COMPARE(client.responses().size(), 2);
    QCOMPARE(client.responses().at(1).status, 410);

    runner.setFixedStatus(0);
    runner.setMode(DevRunnerSettings::Mode::Redirect);
    client.send(plainPost("z"));
    QTRY_COMPARE(client.responses().size(), 3);
    QCOMPARE(client.responses().at(2).status, 302);
    QVERIFY(!client.responses().at(2).header("location").isEmpty());

    const auto stats = runner.stats();
    QCOMPARE(stats.failed, 3);
    QCOMPARE(stats.delivered, 0);
}

void TestDevRunner::batchesAreAnsweredPerEvent() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    RawHttpClient client(runner.port());
    const QList<QUuid> ids{QUuid::createUuid(), QUuid::createUuid(), QUuid::createUuid()};
    QByteArray body = R"({"events": [)";
    for (const QUuid &id : ids) {
        if (id != ids.first())
            body += ',';
        // Ids inside a payload are the payload's, not events.
        body += R"({"id": ")" + id.toByteArray(QUuid::WithoutBraces) +
                R"(", "topic": "a \"quoted\" }", "payload": {"id": "x", "l": [{"id": 2}]}})";
    }
    body += "]}";
    const auto batchPost = [](const QByteArray &content) {
        return RawHttpClient::post("/events", {{"webhook-id", "batch"}, {"Outbox-Batch", "3"}},
                                   content);
    };

    // All delivered: counted per event, answered with an empty failed list.
    client.send(batchPost(body));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().at(0).status, 200);
    QCOMPARE(client.responses().at(0).header("content-type"), QByteArray("application/json"));
    QCOMPARE(QJsonDocument::fromJson(client.responses().at(0).body)
                 .object()
                 .value(QLatin1String("failed"))
                 .toArray()
                 .size(),
             0);
    for (const QUuid &id : ids)
        QCOMPARE(runner.deliveredCount(id), 1);
    QCOMPARE(runner.stats().delivered, 3);
    QCOMPARE(runner.stats().batches, 1);

    // The fail rate applies to each event and the answer lists them.
    DevRunnerSettings settings;
    settings.failRate = 1.0;
    settings.failPermanent = true;
    settings.retryAfter = "7";
    QVERIFY(runner.setSettings(settings).ok());
    client.send(batchPost(body));
    QTRY_COMPARE(client.responses().size(), 2);
    QCOMPARE(client.responses().at(1).status, 200);
    const QJsonArray failed = QJsonDocument::fromJson(client.responses().at(1).body)
                                  .object()
                                  .value(QLatin1String("failed"))
                                  .toArray();
    QCOMPARE(failed.size(), 3);
    for (qsizetype i = 0; i < failed.size(); ++i) {
        const QJsonObject item = failed.at(i).toObject();
        QCOMPARE(QUuid::fromString(item.value(QLatin1String("id")).toString()), ids.at(i));
        QVERIFY(item.value(QLatin1String("permanent")).toBool());
        QCOMPARE(item.value(QLatin1String("retry_after")).toInt(), 7);
    }
    QCOMPARE(runner.stats().failed, 3);
    QCOMPARE(runner.stats().delivered, 3);

    // Not a batch body: 400, naming what is wrong.
    const QList<QPair<QByteArray, QByteArray>> malformed{
        {R"({"items": []})", R"(no "events" array)"},
        {R"({"events": [{"topic": "t"}]})", R"(an event without an "id")"},
        {R"({"events": [{"id": "a"}])", "unbalanced brackets"},
        {R"({"events": [{"id": "a}]})", "an unterminated string"},
    };
    for (const auto &[content, problem] : malformed) {
        const qsizetype before = client.responses().size();
        client.send(batchPost(content));
        QTRY_COMPARE(client.responses().size(), before + 1);
        QCOMPARE(client.responses().last().status, 400);
        QVERIFY2(client.responses().last().body.contains(problem),
                 client.responses().last().body.constData());
    }
    QCOMPARE(runner.stats().batches, 2 + malformed.size()); // answered 2xx or not
}

void TestDevRunner::latencyDelaysWithoutBlocking() {
    DevRunner runner;
    runner.setLatency(outbox::core::Millis(300));
    QVERIFY(runner.listen().ok());

    RawHttpClient slow(runner.port());
    slow.send(plainPost("slow"));
    // A second connection is served while the first waits: the runner's
    // thread is not blocked by the delay.
    QTRY_COMPARE(runner.stats().received, 1);
    runner.setLatency(outbox::core::Millis(0));
    RawHttpClient fast(runner.port());
    fast.send(plainPost("fast"));
    QTRY_COMPARE(fast.responses().size(), 1);
    QCOMPARE(slow.responses().size(), 0);
    QTRY_COMPARE(slow.responses().size(), 1);
    QCOMPARE(slow.responses().first().status, 200);
}

void TestDevRunner::closeWithoutResponseAndNeverRespond() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());

    runner.setMode(DevRunnerSettings::Mode::CloseWithoutResponse);
    RawHttpClient closed(runner.port());
    closed.send(plainPost("a"));
    QTRY_VERIFY(closed.isClosed());
    QCOMPARE(closed.responses().size(), 0);

    runner.setMode(DevRunnerSettings::Mode::NeverRespond);
    RawHttpClient silent(runner.port());
    silent.send(plainPost("b"));
    QTRY_COMPARE(runner.stats().received, 2);
    QTest::qWait(200);
    QCOMPARE(silent.responses().size(), 0);
    QVERIFY(!silent.isClosed());
    QCOMPARE(runner.stats().failed, 2);
}

void TestDevRunner::malformedRequestGets400() {
    DevRunner runner;
    QVERIFY(runner.listen().ok());
    RawHttpClient client(runner.port());
    client.send("THIS IS NOT HTTP\r\n\r\n");
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().first().status, 400);
    QTRY_VERIFY(client.isClosed());
}

void TestDevRunner::settingsChangeFromAnotherThread() {
    // The runner serves in its own thread; the test thread changes its
    // failure rate while clients keep posting.
    QThread thread;
    auto *runner = new DevRunner;
    runner->moveToThread(&thread);
    QObject::connect(&thread, &QThread::finished, runner, &QObject::deleteLater);
    thread.start();
    quint16 port = 0;
    QMetaObject::invokeMethod(
        runner, [&] { port = runner->listen().ok() ? runner->port() : 0; },
        Qt::BlockingQueuedConnection);
    QVERIFY(port != 0);

    RawHttpClient client(port);
    client.send(plainPost("one"));
    QTRY_COMPARE(client.responses().size(), 1);
    QCOMPARE(client.responses().at(0).status, 200);

    runner->setFailRate(1.0); // from this thread, while the runner runs
    client.send(plainPost("two"));
    QTRY_COMPARE(client.responses().size(), 2);
    QCOMPARE(client.responses().at(1).status, 503);

    runner->setFailRate(0.0);
    client.send(plainPost("three"));
    QTRY_COMPARE(client.responses().size(), 3);
    QCOMPARE(client.responses().at(2).status, 200);

    const auto stats = runner->stats();
    QCOMPARE(stats.delivered, 2);
    QCOMPARE(stats.failed, 1);
    thread.quit();
    thread.wait();
}

QTEST_GUILESS_MAIN(TestDevRunner)
#include "tst_devrunner.moc"
