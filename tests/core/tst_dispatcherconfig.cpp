#include "core/dispatcherconfig.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

using namespace outbox::core;
using namespace std::chrono_literals;

using Mutation = std::function<void(DispatcherConfig &)>;
Q_DECLARE_METATYPE(Mutation)

namespace {

DispatcherConfig validConfig() {
    DispatcherConfig config;
    config.runnerUrl = QUrl(QStringLiteral("http://localhost:8080/events"));
    return config;
}

} // namespace

class TestDispatcherConfig final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void defaultsAreValid();
    void accepted_data();
    void accepted();
    void refused_data();
    void refused();
    void caFile();
    void describeShowsSettings();
    void describeHidesSecrets();
    void deliveryNames();
};

void TestDispatcherConfig::defaultsAreValid() {
    const auto result = validConfig().validate();
    QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
}

void TestDispatcherConfig::accepted_data() {
    QTest::addColumn<Mutation>("mutate");
    QTest::newRow("https") << Mutation([](DispatcherConfig &c) {
        c.runnerUrl = QUrl(QStringLiteral("https://runner.example.com/hook"));
    });
    QTest::newRow("upper-case scheme") << Mutation(
        [](DispatcherConfig &c) { c.runnerUrl = QUrl(QStringLiteral("HTTP://runner:9000")); });
    QTest::newRow("poll exactly a third of lease") << Mutation([](DispatcherConfig &c) {
        c.lease = 30s;
        c.pollInterval = 10s;
    });
    QTest::newRow("timeout just under lease") << Mutation([](DispatcherConfig &c) {
        c.lease = 30s;
        c.requestTimeout = 29999ms;
    });
    QTest::newRow("base equals max") << Mutation([](DispatcherConfig &c) {
        c.baseDelay = 5s;
        c.maxDelay = 5s;
    });
    QTest::newRow("minimal sizes") << Mutation([](DispatcherConfig &c) {
        c.batchSize = 1;
        c.concurrency = 1;
        c.maxAttempts = 1;
    });
    QTest::newRow("zero grace") << Mutation([](DispatcherConfig &c) { c.shutdownGrace = 0ms; });
    QTest::newRow("longest durations") << Mutation([](DispatcherConfig &c) {
        c.lease = outbox::core::kLongestSetting;
        c.pollInterval = c.lease / 3;
        c.maxDelay = c.lease;
        c.shutdownGrace = c.lease;
    });
    QTest::newRow("no permanent statuses")
        << Mutation([](DispatcherConfig &c) { c.permanentStatuses.clear(); });
    QTest::newRow("several permanent statuses") << Mutation([](DispatcherConfig &c) {
        c.permanentStatuses = {400, 404, 410, 422};
    });
    QTest::newRow("secrets") << Mutation([](DispatcherConfig &c) {
        c.secrets = {QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                     QStringLiteral("whsec_c2Vjb25k")};
    });
    QTest::newRow("bearer") << Mutation(
        [](DispatcherConfig &c) { c.bearerToken = QStringLiteral("abc.def.ghi"); });
    QTest::newRow("batch delivery, smallest bounds") << Mutation([](DispatcherConfig &c) {
        c.delivery = Delivery::Batch;
        c.batchMaxEvents = 1;
        c.batchMaxBytes = 1;
    });
}

void TestDispatcherConfig::accepted() {
    QFETCH(Mutation, mutate);
    DispatcherConfig config = validConfig();
    mutate(config);
    const auto result = config.validate();
    QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
}

void TestDispatcherConfig::refused_data() {
    QTest::addColumn<Mutation>("mutate");
    QTest::addColumn<QString>("flag");    // the option the message must name
    QTest::addColumn<QString>("problem"); // and what is wrong / the fix

    const auto url = [](const char *text) {
        return Mutation([text](DispatcherConfig &c) { c.runnerUrl = QUrl(QLatin1String(text)); });
    };
    QTest::newRow("no url") << url("") << QStringLiteral("--runner-url")
                            << QStringLiteral("is missing");
    QTest::newRow("ftp url") << url("ftp://host/x") << QStringLiteral("--runner-url")
                             << QStringLiteral("not an http or https URL");
    QTest::newRow("relative url") << url("/events") << QStringLiteral("--runner-url")
                                  << QStringLiteral("not an http or https URL");
    QTest::newRow("no host") << url("http:///events") << QStringLiteral("--runner-url")
                             << QStringLiteral("has no host");
    QTest::newRow("file url") << url("file:///srv/hook") << QStringLiteral("--runner-url")
                              << QStringLiteral("not an http or https URL");

    QTest::newRow("batch 0") << Mutation([](DispatcherConfig &c) { c.batchSize = 0; })
                             << QStringLiteral("--batch-size") << QStringLiteral("at least 1");
    QTest::newRow("concurrency -1")
        << Mutation([](DispatcherConfig &c) { c.concurrency = -1; })
        << QStringLiteral("--concurrency") << QStringLiteral("at least 1 (got -1)");
    QTest::newRow("max attempts 0")
        << Mutation([](DispatcherConfig &c) { c.maxAttempts = 0; })
        << QStringLiteral("--max-attempts") << QStringLiteral("at least 1");
    QTest::newRow("lease 0") << Mutation([](DispatcherConfig &c) { c.lease = 0ms; })
                             << QStringLiteral("--lease") << QStringLiteral("longer than 0");
    QTest::newRow("poll 0") << Mutation([](DispatcherConfig &c) { c.pollInterval = 0ms; })
                            << QStringLiteral("--poll-interval") << QStringLiteral("longer than 0");
    QTest::newRow("base 0") << Mutation([](DispatcherConfig &c) { c.baseDelay = 0ms; })
                            << QStringLiteral("--base-delay") << QStringLiteral("longer than 0");
    QTest::newRow("max delay negative")
        << Mutation([](DispatcherConfig &c) { c.maxDelay = -1s; }) << QStringLiteral("--max-delay")
        << QStringLiteral("longer than 0");
    QTest::newRow("timeout 0") << Mutation([](DispatcherConfig &c) { c.requestTimeout = 0ms; })
                               << QStringLiteral("--request-timeout")
                               << QStringLiteral("longer than 0");
    QTest::newRow("negative grace")
        << Mutation([](DispatcherConfig &c) { c.shutdownGrace = -1s; })
        << QStringLiteral("--shutdown-grace") << QStringLiteral("must not be negative");
    QTest::newRow("poll above a third of lease")
        << Mutation([](DispatcherConfig &c) {
               c.lease = 30s;
               c.pollInterval = 10001ms;
           })
        << QStringLiteral("--poll-interval")
        << QStringLiteral("at most a third of --lease (30s); lower --poll-interval to 10s");
    QTest::newRow("timeout equals lease") << Mutation([](DispatcherConfig &c) {
        c.lease = 30s;
        c.requestTimeout = 30s;
    }) << QStringLiteral("--request-timeout")
                                          << QStringLiteral("must be shorter than --lease (30s)");
    QTest::newRow("base above max") << Mutation([](DispatcherConfig &c) {
        c.baseDelay = 10min;
        c.maxDelay = 5min;
    }) << QStringLiteral("--base-delay")
                                    << QStringLiteral("(10m) must not exceed --max-delay (5m)");
    QTest::newRow("permanent 200") << Mutation([](DispatcherConfig &c) {
        c.permanentStatuses = {410, 200};
    }) << QStringLiteral("--permanent-status 200")
                                   << QStringLiteral("not an HTTP error status");
    QTest::newRow("permanent 600")
        << Mutation([](DispatcherConfig &c) { c.permanentStatuses = {600}; })
        << QStringLiteral("--permanent-status 600") << QStringLiteral("300 to 599");
    QTest::newRow("bad secret") << Mutation([](DispatcherConfig &c) {
        c.secrets = {QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                     QStringLiteral("whsec_n0t*val1d")};
    }) << QStringLiteral("webhook secret #2")
                                << QStringLiteral("not valid base64");
    QTest::newRow("batch max events 0")
        << Mutation([](DispatcherConfig &c) { c.batchMaxEvents = 0; })
        << QStringLiteral("--batch-max-events") << QStringLiteral("at least 1");
    QTest::newRow("batch max bytes 0")
        << Mutation([](DispatcherConfig &c) { c.batchMaxBytes = 0; })
        << QStringLiteral("--batch-max-bytes") << QStringLiteral("at least 1 (got 0)");
    // Every duration ends up in a Qt timer (an int of milliseconds) or in a
    // PostgreSQL interval: beyond 24 days it is refused, not overflowed.
    QTest::newRow("lease 999999999999h")
        << Mutation([](DispatcherConfig &c) { c.lease = std::chrono::hours(999999999999); })
        << QStringLiteral("--lease (") << QStringLiteral("longest supported duration (24d)");
    QTest::newRow("lease 100d, poll 30d") << Mutation([](DispatcherConfig &c) {
        c.lease = std::chrono::hours(2400);
        c.pollInterval = std::chrono::hours(720);
    }) << QStringLiteral("--lease (100d)") << QStringLiteral("longest supported duration (24d)");
    QTest::newRow("grace 25d") << Mutation([](DispatcherConfig &c) {
        c.shutdownGrace = std::chrono::hours(600);
    }) << QStringLiteral("--shutdown-grace (25d)")
                               << QStringLiteral("give a shorter value");
    QTest::newRow("max delay 30d")
        << Mutation([](DispatcherConfig &c) { c.maxDelay = std::chrono::hours(720); })
        << QStringLiteral("--max-delay (30d)") << QStringLiteral("longest supported");
    QTest::newRow("response cap 0")
        << Mutation([](DispatcherConfig &c) { c.maxResponseBytes = 0; })
        << QStringLiteral("--max-response-bytes") << QStringLiteral("from 1 to");
    QTest::newRow("bearer with newline") << Mutation([](DispatcherConfig &c) {
        c.bearerToken = QStringLiteral("abc\r\nX-Injected: 1");
    }) << QStringLiteral("bearer token") << QStringLiteral("line break");
}

void TestDispatcherConfig::refused() {
    QFETCH(Mutation, mutate);
    QFETCH(QString, flag);
    QFETCH(QString, problem);
    DispatcherConfig config = validConfig();
    mutate(config);
    const auto result = config.validate();
    QVERIFY(!result.ok());
    QCOMPARE(result.errorKind(), ErrorKind::Invalid);
    QVERIFY2(result.errorMessage().contains(flag), qPrintable(result.errorMessage()));
    QVERIFY2(result.errorMessage().contains(problem), qPrintable(result.errorMessage()));
    QVERIFY(!result.errorMessage().contains(QStringLiteral("n0t*val1d")));
    QVERIFY(!result.errorMessage().contains(QStringLiteral("abc")));
}

void TestDispatcherConfig::caFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    DispatcherConfig config = validConfig();
    config.caFile = dir.filePath(QStringLiteral("missing.pem"));
    const auto missing = config.validate();
    QVERIFY(!missing.ok());
    QVERIFY2(missing.errorMessage().contains(config.caFile), qPrintable(missing.errorMessage()));

    QFile pem(dir.filePath(QStringLiteral("ca.pem")));
    QVERIFY(pem.open(QIODevice::WriteOnly));
    pem.write("-----BEGIN CERTIFICATE-----\n");
    pem.close();
    config.caFile = pem.fileName();
    const auto present = config.validate();
    QVERIFY2(present.ok(), qPrintable(present.errorMessage()));
}

void TestDispatcherConfig::deliveryNames() {
    for (const Delivery delivery : {Delivery::PerEvent, Delivery::Batch})
        QCOMPARE(deliveryNamed(deliveryName(delivery)), delivery);
    QCOMPARE(deliveryName(Delivery::Batch), QStringLiteral("batch"));
    QCOMPARE(deliveryNamed(u" Per-Event "), Delivery::PerEvent);
    QVERIFY(!deliveryNamed(u"bulk"));

    DispatcherConfig config = validConfig();
    QVERIFY(config.describe().contains(QLatin1String("delivery=per-event")));
    QVERIFY(!config.describe().contains(QLatin1String("batch-max")));
    config.delivery = Delivery::Batch;
    config.batchMaxEvents = 25;
    config.batchMaxBytes = 65536;
    const QString line = config.describe();
    for (const char *expected : {"delivery=batch", "batch-max-events=25", "batch-max-bytes=65536"})
        QVERIFY2(line.contains(QLatin1String(expected)), qPrintable(line));
}

void TestDispatcherConfig::describeShowsSettings() {
    DispatcherConfig config = validConfig();
    config.batchSize = 50;
    config.concurrency = 8;
    config.lease = 1min;
    config.pollInterval = 1500ms;
    config.maxAttempts = 12;
    config.nameSpace = QStringLiteral("billing");
    config.workerId = QUuid(QStringLiteral("{0190a5f4-7c2e-7b3a-9d4e-123456789abc}"));
    config.permanentStatuses = {410, 422};
    config.ordering = outbox::core::Ordering::Aggregate;
    const QString line = config.describe();
    QVERIFY(!line.contains(QLatin1Char('\n')));
    for (const char *expected :
         {"runner-url=http://localhost:8080/events", "batch-size=50", "concurrency=8", "lease=1m",
          "poll-interval=1.5s", "max-attempts=12", "base-delay=1s", "max-delay=5m",
          "request-timeout=10s", "shutdown-grace=10s", "permanent-status=410,422",
          "namespace=billing", "worker-id=0190a5f4-7c2e-7b3a-9d4e-123456789abc", "signing=off",
          "bearer-token=off", "ordering=aggregate"})
        QVERIFY2(line.contains(QLatin1String(expected)),
                 qPrintable(line + QStringLiteral(" lacks ") + QLatin1String(expected)));
}

void TestDispatcherConfig::describeHidesSecrets() {
    DispatcherConfig config = validConfig();
    config.runnerUrl = QUrl(QStringLiteral("https://hookuser:urlpassw0rd@runner.example.com/in"));
    config.secrets = {QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
                      QStringLiteral("whsec_c2Vjb25ka2V5")};
    config.bearerToken = QStringLiteral("tok-very-secret");
    const QString line = config.describe();
    QVERIFY2(!line.contains(QStringLiteral("urlpassw0rd")), qPrintable(line));
    QVERIFY2(!line.contains(QStringLiteral("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")), qPrintable(line));
    QVERIFY2(!line.contains(QStringLiteral("c2Vjb25ka2V5")), qPrintable(line));
    QVERIFY2(!line.contains(QStringLiteral("tok-very-secret")), qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral("runner.example.com/in")), qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral("signing=\"on(2 secrets)\"")), qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral("bearer-token=on")), qPrintable(line));

    // Validation messages quote the URL without its password too.
    config.runnerUrl = QUrl(QStringLiteral("ftp://hookuser:urlpassw0rd@runner.example.com/in"));
    const auto refused = config.validate();
    QVERIFY(!refused.ok());
    QVERIFY2(!refused.errorMessage().contains(QStringLiteral("urlpassw0rd")),
             qPrintable(refused.errorMessage()));
}

QTEST_GUILESS_MAIN(TestDispatcherConfig)
#include "tst_dispatcherconfig.moc"
