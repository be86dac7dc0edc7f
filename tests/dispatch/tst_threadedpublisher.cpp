// ThreadedPublisher: the wrapped publisher runs in its own thread while the
// caller sees the Publisher contract in its own (outcomes in the caller's
// thread, one per event, none after abortAll), over real sockets for HTTP.

#include "devtools/devrunner.h"
#include "devtools/inprocesspublisher.h"
#include "dispatch/httppublisher.h"
#include "dispatch/threadedpublisher.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QtTest>

#include <atomic>

using namespace outbox;
using namespace outbox::testing;
using devtools::InProcessPublisher;
using dispatch::PublishOutcome;
using dispatch::ThreadedPublisher;

namespace {

// Records where the wrapped publisher's handler ran and how often.
struct HandlerProbe {
    std::atomic<int> calls{0};
    std::atomic<QThread *> thread{nullptr};
};

dispatch::PublisherFactory probedInProcess(HandlerProbe &probe) {
    return [&probe]() -> std::unique_ptr<dispatch::Publisher> {
        return std::make_unique<InProcessPublisher>([&probe](const store::ClaimedEvent &event) {
            probe.thread = QThread::currentThread();
            ++probe.calls;
            // Every third event fails, so that retries cross threads intact.
            if (event.payload.endsWith("2}") || event.payload.endsWith("5}"))
                return PublishOutcome::retry(event, QStringLiteral("HTTP 503: busy"), 503,
                                             core::Millis(1500));
            return PublishOutcome::delivered(event, 204);
        });
    };
}

core::DispatcherConfig httpConfig(const QUrl &runnerUrl, int concurrency) {
    core::DispatcherConfig config;
    config.runnerUrl = runnerUrl;
    config.requestTimeout = core::Millis(120'000);
    config.concurrency = concurrency;
    return config;
}

std::unique_ptr<ThreadedPublisher> threadedHttpPublisher() {
    return std::make_unique<ThreadedPublisher>(
        [] { return std::make_unique<dispatch::HttpPublisher>(); }, QStringLiteral("test-http"));
}

// Waits without running this thread's event loop (so nothing is delivered
// meanwhile); false after 10 s.
bool waitWithoutEvents(const std::function<bool()> &condition) {
    QElapsedTimer clock;
    clock.start();
    while (!condition()) {
        if (clock.elapsed() > 10000)
            return false;
        QThread::msleep(1);
    }
    return true;
}

} // namespace

class TestThreadedPublisher : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<PublishOutcome>(); }
    void everyEventFinishesOnceInTheCallersThread();
    void abortAllDropsOutcomesNotYetDelivered();
    void abortAllFromAFinishedHandlerStopsTheDelivery();
    void configureErrorsComeBack();
    void aFactoryWithoutAPublisherFailsClearly();
    void destroyedWithRequestsInFlight();
    void deliversOverHttp();
};

void TestThreadedPublisher::everyEventFinishesOnceInTheCallersThread() {
    HandlerProbe probe;
    ThreadedPublisher publisher(probedInProcess(probe), QStringLiteral("test-publisher"));
    QVERIFY(publisher.configure(core::DispatcherConfig{}).ok());

    QHash<QUuid, int> seen;
    QHash<QUuid, store::ClaimedEvent> sent;
    bool allInCallerThread = true;
    connect(&publisher, &dispatch::Publisher::finished, this, [&](const PublishOutcome &outcome) {
        allInCallerThread = allInCallerThread && QThread::currentThread() == thread();
        ++seen[outcome.id];
        const store::ClaimedEvent &event = sent.value(outcome.id);
        QCOMPARE(outcome.attempts, event.attempts);
        if (event.payload.endsWith("2}") || event.payload.endsWith("5}")) {
            QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
            QCOMPARE(outcome.httpStatus, std::optional<int>(503));
            QCOMPARE(outcome.retryAfter, std::optional<core::Millis>(core::Millis(1500)));
            QCOMPARE(outcome.error, QStringLiteral("HTTP 503: busy"));
        } else {
            QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);
            QCOMPARE(outcome.httpStatus, std::optional<int>(204));
        }
    });

    const QList<store::ClaimedEvent> batch = numberedEvents(500);
    const store::ClaimedEvent single = numberedEvent(1000);
    for (const store::ClaimedEvent &event : batch)
        sent.insert(event.id, event);
    sent.insert(single.id, single);
    publisher.publishBatch(batch);
    publisher.publish(single);
    publisher.publishBatch({}); // nothing to do, nothing counted
    QCOMPARE(publisher.inFlight(), 501);
    QCOMPARE(seen.size(), 0); // never from inside publish()

    QTRY_COMPARE_WITH_TIMEOUT(seen.size(), 501, 20000);
    QTest::qWait(50); // nothing more may arrive
    for (auto it = seen.cbegin(); it != seen.cend(); ++it)
        QCOMPARE(it.value(), 1);
    for (auto it = sent.cbegin(); it != sent.cend(); ++it)
        QVERIFY(seen.contains(it.key()));
    QVERIFY(allInCallerThread);
    QCOMPARE(publisher.inFlight(), 0);
    QCOMPARE(probe.calls.load(), 501);
    QCOMPARE(probe.thread.load(), publisher.publisherThread());
    QVERIFY(publisher.publisherThread() != thread());
    QCOMPARE(publisher.publisherThread()->objectName(), QStringLiteral("test-publisher"));
}

void TestThreadedPublisher::abortAllDropsOutcomesNotYetDelivered() {
    HandlerProbe probe;
    ThreadedPublisher publisher(probedInProcess(probe), QStringLiteral("test-publisher"));
    QVERIFY(publisher.configure(core::DispatcherConfig{}).ok());
    QSignalSpy spy(&publisher, &dispatch::Publisher::finished);

    // The wrapped publisher finishes all of them while this thread does not
    // run its event loop: the outcomes wait to be delivered when abortAll()
    // comes, and must not be delivered after it.
    publisher.publishBatch(numberedEvents(50));
    QVERIFY(waitWithoutEvents([&] { return probe.calls.load() == 50; }));
    publisher.abortAll();
    QCOMPARE(publisher.inFlight(), 0);
    QTest::qWait(200);
    QCOMPARE(spy.size(), 0);

    // Still usable afterwards.
    const store::ClaimedEvent event = numberedEvent(1);
    publisher.publish(event);
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 10000);
    QCOMPARE(spy.first().first().value<PublishOutcome>().id, event.id);
    QCOMPARE(publisher.inFlight(), 0);
}

void TestThreadedPublisher::abortAllFromAFinishedHandlerStopsTheDelivery() {
    HandlerProbe probe;
    ThreadedPublisher publisher(probedInProcess(probe), QStringLiteral("test-publisher"));
    QVERIFY(publisher.configure(core::DispatcherConfig{}).ok());
    int finished = 0;
    connect(&publisher, &dispatch::Publisher::finished, this, [&] {
        if (++finished == 1)
            publisher.abortAll(); // e.g. the dispatcher's grace period ends here
    });
    publisher.publishBatch(numberedEvents(20));
    // All twenty finish before this thread looks, so they arrive together.
    QVERIFY(waitWithoutEvents([&] { return probe.calls.load() == 20; }));
    QTRY_COMPARE_WITH_TIMEOUT(finished, 1, 10000);
    QTest::qWait(200);
    QCOMPARE(finished, 1);
    QCOMPARE(publisher.inFlight(), 0);
}

void TestThreadedPublisher::configureErrorsComeBack() {
    const auto publisher = threadedHttpPublisher();
    core::DispatcherConfig config =
        httpConfig(QUrl(QStringLiteral("https://127.0.0.1:9/events")), 1);
    config.caFile = QStringLiteral("/nonexistent/outbox-test-ca.pem");
    const auto configured = publisher->configure(config);
    QVERIFY(!configured.ok());
    QVERIFY2(configured.error().message.contains(QStringLiteral("outbox-test-ca.pem")),
             qPrintable(configured.error().message));
}

void TestThreadedPublisher::aFactoryWithoutAPublisherFailsClearly() {
    ThreadedPublisher publisher([] { return std::unique_ptr<dispatch::Publisher>(); },
                                QStringLiteral("test-publisher"));
    const auto configured = publisher.configure(core::DispatcherConfig{});
    QVERIFY(!configured.ok());
    QVERIFY(configured.error().message.contains(QStringLiteral("no publisher")));

    // Events published anyway come back as retries, not lost.
    QSignalSpy spy(&publisher, &dispatch::Publisher::finished);
    const store::ClaimedEvent event = numberedEvent(1);
    publisher.publish(event);
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 10000);
    const auto outcome = spy.first().first().value<PublishOutcome>();
    QCOMPARE(outcome.id, event.id);
    QCOMPARE(outcome.kind, PublishOutcome::Kind::Retry);
}

void TestThreadedPublisher::destroyedWithRequestsInFlight() {
    // The runner holds every answer for a minute: the requests are still
    // running when the publisher goes. The destructor must not wait for
    // them, and nothing may be delivered to the dead object.
    constexpr qint64 answerAfterMs = 60'000;
    devtools::DevRunner runner;
    QVERIFY(runner.listen().ok());
    runner.setLatency(core::Millis(answerAfterMs));
    QElapsedTimer clock;
    clock.start();
    int finished = 0;
    {
        const auto publisher = threadedHttpPublisher();
        QVERIFY(publisher->configure(httpConfig(runner.url(), 8)).ok());
        connect(publisher.get(), &dispatch::Publisher::finished, this, [&] { ++finished; });
        publisher->publishBatch(numberedEvents(8));
        QTRY_COMPARE_WITH_TIMEOUT(runner.stats().received, 8, 20000);
    }
    QVERIFY2(clock.elapsed() < answerAfterMs, "the destructor waited for the runner's answers");
    QTest::qWait(100);
    QCOMPARE(finished, 0);
    QCOMPARE(runner.stats().delivered, 0);
}

void TestThreadedPublisher::deliversOverHttp() {
    devtools::DevRunner runner;
    QVERIFY(runner.listen().ok());
    const auto publisher = threadedHttpPublisher();
    QVERIFY(publisher->configure(httpConfig(runner.url(), 16)).ok());

    QSignalSpy spy(publisher.get(), &dispatch::Publisher::finished);
    const QList<store::ClaimedEvent> events = numberedEvents(200);
    publisher->publishBatch(events);
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 200, 20000);
    for (const QList<QVariant> &arguments : std::as_const(spy)) {
        const auto outcome = arguments.first().value<PublishOutcome>();
        QCOMPARE(outcome.kind, PublishOutcome::Kind::Delivered);
        QVERIFY(outcome.duration.count() > 0);
    }
    QCOMPARE(runner.stats().received, 200);
    QCOMPARE(runner.stats().duplicates, 0);
    for (const store::ClaimedEvent &event : events)
        QCOMPARE(runner.deliveredCount(event.id), 1);
    QCOMPARE(publisher->inFlight(), 0);
}

QTEST_GUILESS_MAIN(TestThreadedPublisher)
#include "tst_threadedpublisher.moc"
