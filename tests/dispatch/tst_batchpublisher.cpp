// Batch delivery without a database: the batch format and its bounds, and
// BatchPublisher against a DevRunner (or a raw server) on real sockets:
// signatures, partial and permanent failures, statuses that apply to every
// event, splitting, and answers that are too long or unreadable.

#include "core/webhooksigner.h"
#include "devtools/devrunner.h"
#include "dispatch/batchformat.h"
#include "dispatch/batchpublisher.h"
#include "dispatchtesting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;
using devtools::DevRunner;
using dispatch::BatchPublisher;
using dispatch::PublishOutcome;

namespace {

core::DispatcherConfig configFor(const QUrl &url) {
    core::DispatcherConfig config = testing::publisherConfig(url);
    config.delivery = core::Delivery::Batch;
    config.concurrency = 64;
    return config;
}

// Publishes `events` through a BatchPublisher configured with `config` and
// returns their outcomes by id; fewer (and a warning) when the publisher
// refuses the configuration, or when they do not all arrive, or arrive twice.
QHash<QUuid, PublishOutcome> publishAll(const core::DispatcherConfig &config,
                                        const QList<store::ClaimedEvent> &events) {
    BatchPublisher publisher;
    if (const auto configured = publisher.configure(config); !configured.ok()) {
        qWarning().noquote() << "configure:" << configured.errorMessage();
        return {};
    }
    QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
    publisher.publishBatch(events);
    if (spy.size() != 0 || publisher.inFlight() != events.size())
        return {}; // never synchronously, every event counted in flight
    if (!QTest::qWaitFor([&] { return spy.size() >= events.size(); }, 20000))
        return {};
    QTest::qWait(20); // nothing more may follow
    QHash<QUuid, PublishOutcome> outcomes;
    for (const QList<QVariant> &signal : std::as_const(spy))
        outcomes.insert(signal.first().value<PublishOutcome>().id,
                        signal.first().value<PublishOutcome>());
    if (spy.size() != events.size() || outcomes.size() != events.size() ||
        publisher.inFlight() != 0)
        return {};
    return outcomes;
}

// A server that answers every request with `response`, as is.
class FixedServer final : public QObject {
public:
    explicit FixedServer(QByteArray response)
        : m_response(std::move(response)) {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            QTcpSocket *socket = m_server.nextPendingConnection();
            connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
                m_received += socket->readAll();
                if (m_received.contains("\r\n\r\n"))
                    socket->write(m_response);
            });
        });
    }
    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    QUrl url() const {
        return QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(m_server.serverPort()));
    }

private:
    QTcpServer m_server;
    QByteArray m_response;
    QByteArray m_received;
};

QByteArray okResponse(const QByteArray &body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

} // namespace

class TestBatchPublisher : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }
    void elementCarriesTheEventAndItsPayloadAsIs();
    void packHonoursCountAndByteBounds();
    void oversizedEventTravelsAlone();
    void replyParsing_data();
    void replyParsing();
    void signedBatchIsDeliveredAndVerified();
    void partialFailuresAreRetried();
    void permanentFailuresAreDead();
    void otherStatusesApplyToEveryEvent_data();
    void otherStatusesApplyToEveryEvent();
    void connectionRefusedRetriesEveryEvent();
    void largeClaimIsSplitIntoRequests();
    void tooLongAnswerIsCutOffAndRetried();
    void unreadableAnswerRetriesEveryEvent();
};

void TestBatchPublisher::elementCarriesTheEventAndItsPayloadAsIs() {
    store::ClaimedEvent event = claimedEvent(R"({"amount": 12345678901234567890, "x": "é\"q"})", 2);
    event.nameSpace = QStringLiteral("line\nbreak \"quoted\" \\ é");
    event.tenantId = QUuid::createUuid();
    event.aggregateType = QStringLiteral("invoice");
    event.aggregateId = QStringLiteral("42");
    event.dedupeKey = QStringLiteral("key-1");
    event.createdAt = QDateTime(QDate(2026, 1, 2), QTime(3, 4, 5, 678), Qt::UTC);

    const QByteArray element = dispatch::batchElement(event);
    QJsonParseError error;
    const QJsonObject object = QJsonDocument::fromJson(element, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(object.value(QLatin1String("id")).toString(), event.id.toString(QUuid::WithoutBraces));
    QCOMPARE(object.value(QLatin1String("namespace")).toString(), event.nameSpace);
    QCOMPARE(object.value(QLatin1String("topic")).toString(), event.topic);
    QCOMPARE(object.value(QLatin1String("tenant_id")).toString(),
             event.tenantId->toString(QUuid::WithoutBraces));
    QCOMPARE(object.value(QLatin1String("aggregate_type")).toString(), QStringLiteral("invoice"));
    QCOMPARE(object.value(QLatin1String("aggregate_id")).toString(), QStringLiteral("42"));
    QCOMPARE(object.value(QLatin1String("idempotency_key")).toString(), QStringLiteral("key-1"));
    QCOMPARE(object.value(QLatin1String("attempt")).toInt(), event.attempts);
    QCOMPARE(object.value(QLatin1String("created_at")).toString(),
             QStringLiteral("2026-01-02T03:04:05.678Z"));
    // The payload's bytes as stored: a large integer keeps its digits.
    QVERIFY2(element.endsWith(QByteArray(",\"payload\":" + event.payload + '}')),
             element.constData());

    // Absent values are null; the idempotency key falls back to the id.
    const store::ClaimedEvent bare = numberedEvent(2);
    const QJsonObject plain = QJsonDocument::fromJson(dispatch::batchElement(bare)).object();
    QVERIFY(plain.value(QLatin1String("tenant_id")).isNull());
    QVERIFY(plain.value(QLatin1String("aggregate_type")).isNull());
    QVERIFY(plain.value(QLatin1String("aggregate_id")).isNull());
    QCOMPARE(plain.value(QLatin1String("idempotency_key")).toString(),
             bare.id.toString(QUuid::WithoutBraces));
}

void TestBatchPublisher::packHonoursCountAndByteBounds() {
    const QList<store::ClaimedEvent> events = numberedEvents(250);
    const auto byCount = dispatch::packBatches(events, 100, 1 << 20);
    QCOMPARE(byCount.size(), 3);
    QCOMPARE(byCount.at(0).events.size(), 100);
    QCOMPARE(byCount.at(2).events.size(), 50);

    const qint64 maxBytes = 2000;
    const auto byBytes = dispatch::packBatches(events, 1000, maxBytes);
    QVERIFY(byBytes.size() > 1);
    QList<QUuid> order;
    for (qsizetype b = 0; b < byBytes.size(); ++b) {
        const dispatch::Batch &batch = byBytes.at(b);
        QVERIFY2(batch.body.size() <= maxBytes, qPrintable(QString::number(batch.body.size())));
        const QJsonArray list =
            QJsonDocument::fromJson(batch.body).object().value(QLatin1String("events")).toArray();
        QCOMPARE(list.size(), batch.events.size());
        for (qsizetype i = 0; i < list.size(); ++i) {
            QCOMPARE(QUuid::fromString(list.at(i).toObject().value(QLatin1String("id")).toString()),
                     batch.events.at(i).id);
            order << batch.events.at(i).id;
        }
        // Full: the next batch's first event would not have fitted.
        if (b + 1 < byBytes.size()) {
            const qsizetype next = dispatch::batchElement(byBytes.at(b + 1).events.first()).size();
            QVERIFY(batch.body.size() + 1 + next > maxBytes);
        }
    }
    QCOMPARE(order.size(), events.size()); // every event once, in order
    for (qsizetype i = 0; i < events.size(); ++i)
        QCOMPARE(order.at(i), events.at(i).id);
}

void TestBatchPublisher::oversizedEventTravelsAlone() {
    QList<store::ClaimedEvent> events = numberedEvents(4);
    const QByteArray big = R"({"blob": ")" + QByteArray(5000, 'x') + "\"}";
    events.insert(2, claimedEvent(big, 1));
    const auto batches = dispatch::packBatches(events, 100, 1000);
    QCOMPARE(batches.size(), 3);
    QCOMPARE(batches.at(0).events.size(), 2);
    QCOMPARE(batches.at(1).events.size(), 1);
    QCOMPARE(batches.at(1).events.first().id, events.at(2).id);
    QVERIFY(batches.at(1).body.size() > 1000);
    QCOMPARE(batches.at(2).events.size(), 2);
}

void TestBatchPublisher::replyParsing_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("valid");
    QTest::addColumn<int>("failures");
    const QByteArray id = "0190b8a8-0000-7000-8000-000000000001";
    QTest::newRow("empty") << QByteArray() << true << 0;
    QTest::newRow("plain text") << QByteArray("ok\n") << true << 0;
    QTest::newRow("object without failed") << QByteArray(R"({"status": "ok"})") << true << 0;
    QTest::newRow("empty list") << QByteArray(R"( {"failed": []} )") << true << 0;
    QTest::newRow("one failure") << QByteArray(R"({"failed": [{"id": ")" + id +
                                               R"(", "error": "x"}]})")
                                 << true << 1;
    QTest::newRow("truncated JSON") << QByteArray(R"({"failed": [{"id": )") << false << 0;
    QTest::newRow("failed not a list") << QByteArray(R"({"failed": "all"})") << false << 0;
    QTest::newRow("failure without id")
        << QByteArray(R"({"failed": [{"error": "x"}]})") << false << 0;
}

void TestBatchPublisher::replyParsing() {
    QFETCH(QByteArray, body);
    QFETCH(bool, valid);
    QFETCH(int, failures);
    const auto parsed = dispatch::parseBatchReply(body);
    QCOMPARE(parsed.ok(), valid);
    if (valid)
        QCOMPARE(parsed->size(), failures);
    else
        QVERIFY2(parsed.errorMessage().contains(QLatin1String("expected {\"failed\"")),
                 qPrintable(parsed.errorMessage()));

    const auto detailed = dispatch::parseBatchReply(
        R"({"failed": [{"id": "0190b8a8-0000-7000-8000-000000000001", "error": "busy",
            "retry_after": 7, "permanent": false},
           {"id": "0190b8a8-0000-7000-8000-000000000002", "permanent": true}]})");
    QVERIFY(detailed.ok());
    QCOMPARE(detailed->size(), 2);
    QCOMPARE(detailed->at(0).error, QStringLiteral("busy"));
    QCOMPARE(detailed->at(0).retryAfter.value_or(core::Millis(0)), core::Millis(7000));
    QVERIFY(!detailed->at(0).permanent);
    QVERIFY(detailed->at(1).permanent);
    QVERIFY(!detailed->at(1).retryAfter);
}

void TestBatchPublisher::signedBatchIsDeliveredAndVerified() {
    DevRunner runner;
    QVERIFY(runner.setSecrets({kWebhookSecret}).ok()); // 401 unless signed right
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());

    core::DispatcherConfig config = configFor(runner.url());
    config.secrets = {kWebhookSecret};
    const QList<store::ClaimedEvent> events = numberedEvents(30);
    const auto outcomes = publishAll(config, events);
    QCOMPARE(outcomes.size(), events.size());
    for (const store::ClaimedEvent &event : events) {
        QCOMPARE(outcomes.value(event.id).kind, PublishOutcome::Kind::Delivered);
        QCOMPARE(outcomes.value(event.id).attempts, event.attempts);
        QCOMPARE(outcomes.value(event.id).httpStatus.value_or(0), 200);
        QCOMPARE(runner.deliveredCount(event.id), 1);
    }
    QCOMPARE(runner.stats().badSignatures, 0);
    QCOMPARE(runner.stats().batches, 1);

    const auto requests = runner.recordedRequests();
    QCOMPARE(requests.size(), 1);
    const devtools::DevRunnerRequest &request = requests.first();
    QCOMPARE(request.header("content-type"), QByteArray("application/json"));
    QCOMPARE(request.header("outbox-batch"), QByteArray("30"));
    // One message: its own id (not an event's), signed over the whole body.
    const QByteArray webhookId = request.header("webhook-id");
    QVERIFY(!QUuid::fromString(QLatin1String(webhookId)).isNull());
    for (const store::ClaimedEvent &event : events)
        QVERIFY(QUuid::fromString(QLatin1String(webhookId)) != event.id);
    const auto signer = core::WebhookSigner::fromSecrets({kWebhookSecret});
    QVERIFY(signer.ok());
    QVERIFY(signer->verify(webhookId, request.header("webhook-timestamp").toLongLong(),
                           request.body, request.header("webhook-signature")));
    QVERIFY(!signer->verify(webhookId, request.header("webhook-timestamp").toLongLong(),
                            QByteArray(request.body + ' '), request.header("webhook-signature")));
    const QJsonArray list =
        QJsonDocument::fromJson(request.body).object().value(QLatin1String("events")).toArray();
    QCOMPARE(list.size(), 30);
}

void TestBatchPublisher::partialFailuresAreRetried() {
    DevRunner runner;
    runner.setFailRate(0.5);
    runner.setRetryAfter("9");
    QVERIFY(runner.listen().ok());

    const QList<store::ClaimedEvent> events = numberedEvents(60);
    const auto outcomes = publishAll(configFor(runner.url()), events);
    QCOMPARE(outcomes.size(), events.size());
    int delivered = 0;
    int retried = 0;
    for (const store::ClaimedEvent &event : events) {
        const PublishOutcome &outcome = outcomes.value(event.id);
        if (outcome.kind == PublishOutcome::Kind::Delivered) {
            ++delivered;
            QCOMPARE(runner.deliveredCount(event.id), 1);
            continue;
        }
        ++retried;
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QCOMPARE(runner.deliveredCount(event.id), 0);
        QCOMPARE(outcome.retryAfter.value_or(core::Millis(0)), core::Millis(9000));
        QVERIFY2(outcome.error.contains(QLatin1String("failed in a batch (HTTP 200): simulated "
                                                      "failure")),
                 qPrintable(outcome.error));
    }
    QCOMPARE(delivered + retried, 60);
    QCOMPARE(retried, runner.stats().failed);
    QVERIFY(delivered > 0 && retried > 0); // 2^-60 each to be otherwise
}

void TestBatchPublisher::permanentFailuresAreDead() {
    DevRunner runner;
    devtools::DevRunnerSettings settings;
    settings.failRate = 1.0;
    settings.failPermanent = true;
    QVERIFY(runner.setSettings(settings).ok());
    QVERIFY(runner.listen().ok());

    const QList<store::ClaimedEvent> events = numberedEvents(5);
    const auto outcomes = publishAll(configFor(runner.url()), events);
    QCOMPARE(outcomes.size(), events.size());
    for (const PublishOutcome &outcome : outcomes)
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Permanent);
}

void TestBatchPublisher::otherStatusesApplyToEveryEvent_data() {
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("kind");
    QTest::newRow("503 retried") << 503 << int(PublishOutcome::Kind::Retry);
    QTest::newRow("400 retried") << 400 << int(PublishOutcome::Kind::Retry);
    QTest::newRow("410 permanent") << 410 << int(PublishOutcome::Kind::Permanent);
}

void TestBatchPublisher::otherStatusesApplyToEveryEvent() {
    QFETCH(int, status);
    QFETCH(int, kind);
    DevRunner runner;
    runner.setFixedStatus(status);
    runner.setRetryAfter("4");
    QVERIFY(runner.listen().ok());

    const QList<store::ClaimedEvent> events = numberedEvents(12);
    const auto outcomes = publishAll(configFor(runner.url()), events);
    QCOMPARE(outcomes.size(), events.size());
    for (const PublishOutcome &outcome : outcomes) {
        QCOMPARE(int(outcome.kind), kind);
        QCOMPARE(outcome.httpStatus.value_or(0), status);
        QVERIFY2(outcome.error.contains(QStringLiteral("batch of 12 events: HTTP %1").arg(status)),
                 qPrintable(outcome.error));
        if (outcome.kind == PublishOutcome::Kind::Retry)
            QCOMPARE(outcome.retryAfter.value_or(core::Millis(0)), core::Millis(4000));
    }
    QCOMPARE(runner.stats().delivered, 0);
}

void TestBatchPublisher::connectionRefusedRetriesEveryEvent() {
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
    const quint16 port = probe.serverPort();
    probe.close();

    const QList<store::ClaimedEvent> events = numberedEvents(7);
    const auto outcomes =
        publishAll(configFor(QUrl(QStringLiteral("http://127.0.0.1:%1/e").arg(port))), events);
    QCOMPARE(outcomes.size(), events.size());
    for (const PublishOutcome &outcome : outcomes) {
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QVERIFY(!outcome.httpStatus);
        QVERIFY2(outcome.error.contains(QLatin1String("connection error")),
                 qPrintable(outcome.error));
    }
}

void TestBatchPublisher::largeClaimIsSplitIntoRequests() {
    DevRunner runner;
    runner.setRecording(true);
    QVERIFY(runner.listen().ok());

    core::DispatcherConfig config = configFor(runner.url());
    config.batchMaxEvents = 40;
    config.batchMaxBytes = 3000;
    QList<store::ClaimedEvent> events = numberedEvents(100);
    events[50] = claimedEvent(R"({"blob": ")" + QByteArray(8000, 'y') + "\"}", 3);
    const auto outcomes = publishAll(config, events);
    QCOMPARE(outcomes.size(), events.size());
    for (const PublishOutcome &outcome : outcomes)
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);

    const auto requests = runner.recordedRequests();
    QVERIFY(requests.size() > 3);
    qsizetype total = 0;
    for (const devtools::DevRunnerRequest &request : requests) {
        const qsizetype count = request.header("outbox-batch").toLongLong();
        QVERIFY(count >= 1 && count <= 40);
        QVERIFY2(request.body.size() <= 3000 || count == 1,
                 qPrintable(QString::number(request.body.size())));
        total += count;
    }
    QCOMPARE(total, 100);
    QCOMPARE(runner.stats().uniqueIds, 100);
}

void TestBatchPublisher::tooLongAnswerIsCutOffAndRetried() {
    // A 2xx whose body never ends within the bound: the failed list cannot
    // be known, so nothing may count as delivered.
    const QByteArray huge = R"({"failed": [], "padding": ")" + QByteArray(4 << 20, 'p') + "\"}";
    FixedServer server(okResponse(huge));
    QVERIFY(server.listen());
    const QList<store::ClaimedEvent> events = numberedEvents(3);
    const auto outcomes = publishAll(configFor(server.url()), events);
    QCOMPARE(outcomes.size(), events.size());
    const qint64 limit = BatchPublisher::ReplyBaseBytes + 3 * BatchPublisher::ReplyBytesPerEvent;
    for (const PublishOutcome &outcome : outcomes) {
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QVERIFY2(outcome.error.contains(QStringLiteral("longer than %1 bytes").arg(limit)),
                 qPrintable(outcome.error));
    }
}

void TestBatchPublisher::unreadableAnswerRetriesEveryEvent() {
    FixedServer server(okResponse(R"({"failed": [{"id": )"));
    QVERIFY(server.listen());
    const QList<store::ClaimedEvent> events = numberedEvents(4);
    const auto outcomes = publishAll(configFor(server.url()), events);
    QCOMPARE(outcomes.size(), events.size());
    for (const PublishOutcome &outcome : outcomes) {
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
        QCOMPARE(outcome.httpStatus.value_or(0), 200);
        QVERIFY2(outcome.error.contains(QLatin1String("is not valid JSON")),
                 qPrintable(outcome.error));
    }
}

QTEST_GUILESS_MAIN(TestBatchPublisher)
#include "tst_batchpublisher.moc"
