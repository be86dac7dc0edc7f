// `outboxctl bench --quick --json` runs on its own cluster and runner and
// reports every figure. Only that the figures exist and are plausible is
// checked here: speed depends on the machine (docs/PERFORMANCE.md).

#include "e2e/e2e.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace outbox::testing;

class TestE2eBench final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void quickJsonHasEveryFigure() {
        QProcess bench;
        bench.setProcessEnvironment(e2eEnvironment());
        bench.start(QStringLiteral(OUTBOXCTL_PATH),
                    {QStringLiteral("bench"), QStringLiteral("--quick"), QStringLiteral("--json"),
                     QStringLiteral("--no-durable")});
        QVERIFY(bench.waitForStarted(30000));
        QVERIFY2(bench.waitForFinished(280000), "outboxctl bench --quick did not finish");
        const QByteArray out = bench.readAllStandardOutput();
        const QByteArray err = bench.readAllStandardError();
        QVERIFY2(bench.exitStatus() == QProcess::NormalExit && bench.exitCode() == 0,
                 err.constData());

        // Exactly one JSON object on stdout; progress goes to stderr.
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(out, &error);
        QVERIFY2(error.error == QJsonParseError::NoError, out.constData());
        QVERIFY(document.isObject());
        const QJsonObject json = document.object();

        for (const char *key : {"db_ceiling_events_per_s",
                                "db_only_events_per_s",
                                "db_only_ratio",
                                "http_only_requests_per_s",
                                "e2e_events_per_s",
                                "e2e_ratio",
                                "latency_p50_ms",
                                "latency_p99_ms",
                                "latency_max_ms",
                                "rss_mb_max",
                                "burn_down_first_events_per_s",
                                "burn_down_last_events_per_s",
                                "burn_down_ratio",
                                "nginx_http_only_requests_per_s",
                                "nginx_e2e_events_per_s",
                                "nginx_e2e_ratio",
                                "client_only_requests_per_s",
                                "e2e_batch_events_per_s",
                                "e2e_db_only_ratio",
                                "nginx_client_only_requests_per_s",
                                "nginx_e2e_batch_events_per_s"}) {
            const QJsonValue value = json.value(QLatin1String(key));
            QVERIFY2(value.isDouble(), key);
            QVERIFY2(value.toDouble() > 0.0, key);
        }
        QVERIFY(json.value(QStringLiteral("latency_p50_ms")).toDouble() <=
                json.value(QStringLiteral("latency_p99_ms")).toDouble());
        QVERIFY(json.value(QStringLiteral("latency_p99_ms")).toDouble() <=
                json.value(QStringLiteral("latency_max_ms")).toDouble());
        QCOMPARE(json.value(QStringLiteral("latency_events")).toInt(), 300);
        QCOMPARE(json.value(QStringLiteral("e2e_duplicates")).toInt(-1), 0);
        QCOMPARE(json.value(QStringLiteral("burn_down_events")).toInt(), 50000);
        // Per body size up to the batch byte limit, both clients.
        const QJsonArray sizes = json.value(QStringLiteral("latency_by_size")).toArray();
        QCOMPARE(sizes.size(), 5);
        for (const QJsonValue &size : sizes)
            for (const char *client : {"client", "qnam"})
                QVERIFY2(size[QLatin1String(client)][QLatin1String("p50_ms")].toDouble() > 0.0,
                         client);
        const QJsonObject claimPath = json.value(QStringLiteral("claim_path")).toObject();
        for (const char *key : {"stale_statistics_events_per_s", "fresh_statistics_events_per_s",
                                "unordered_events_per_s", "unordered_indexed_events_per_s",
                                "aggregate_order_events_per_s", "stale_ratio",
                                "aggregate_order_ratio", "index_off_ratio"})
            QVERIFY2(claimPath.value(QLatin1String(key)).toDouble() > 0.0, key);
        QCOMPARE(claimPath.value(QStringLiteral("events")).toInt(), 5000);

        // Delivery beside a paused backlog, behind dead events and beside
        // as many delivered events (the reference).
        const QJsonObject paused = json.value(QStringLiteral("paused")).toObject();
        QCOMPARE(paused.value(QStringLiteral("paused_events")).toInt(), 50000);
        for (const char *key : {"nothing_paused_events_per_s", "paused_events_per_s",
                                "nothing_blocked_events_per_s", "blocked_events_per_s",
                                "history_events_per_s", "ratio", "blocked_ratio", "history_ratio"})
            QVERIFY2(paused.value(QLatin1String(key)).toDouble() > 0.0, key);

        // Delivery to Kafka (the mock cluster) beside the database only.
        const QJsonObject kafka = json.value(QStringLiteral("kafka")).toObject();
        QCOMPARE(kafka.value(QStringLiteral("events")).toInt(), 10000);
        for (const char *key : {"kafka_events_per_s", "db_only_events_per_s", "ratio"})
            QVERIFY2(kafka.value(QLatin1String(key)).toDouble() > 0.0, key);
        QCOMPARE(kafka.value(QStringLiteral("maybe_duplicated")).toInt(-1), 0);

        // One destination's delivery beside a failing one (a routing
        // dispatcher), against it alone; nothing dead.
        const QJsonObject isolation = json.value(QStringLiteral("isolation")).toObject();
        for (const char *key :
             {"alone_events_per_s", "a_503_events_per_s", "a_closed_events_per_s",
              "a_slow_events_per_s", "a_503_ratio", "a_closed_ratio", "a_slow_ratio"})
            QVERIFY2(isolation.value(QLatin1String(key)).toDouble() > 0.0, key);
        QCOMPARE(isolation.value(QStringLiteral("dead")).toInt(-1), 0);

        // A verdict per target, each with a measured value.
        const QJsonArray targets = json.value(QStringLiteral("targets")).toArray();
        QCOMPARE(targets.size(), 16);
        for (const QJsonValue &target : targets) {
            const QJsonObject check = target.toObject();
            QVERIFY(!check.value(QStringLiteral("name")).toString().isEmpty());
            QVERIFY(!check.value(QStringLiteral("value")).toString().isEmpty());
            QVERIFY(check.value(QStringLiteral("pass")).isBool());
        }
        const QJsonObject environment = json.value(QStringLiteral("environment")).toObject();
        QVERIFY(environment.value(QStringLiteral("cpus")).toInt() >= 1);
        QVERIFY(!environment.value(QStringLiteral("postgresql")).toString().isEmpty());
    }

    void refusesBadOptions() {
        QProcess bench;
        bench.setProcessEnvironment(e2eEnvironment());
        bench.start(QStringLiteral(OUTBOXCTL_PATH),
                    {QStringLiteral("bench"), QStringLiteral("--only"), QStringLiteral("moon")});
        QVERIFY(bench.waitForFinished(30000));
        QCOMPARE(bench.exitCode(), 2);
        QVERIFY(bench.readAllStandardError().contains("--only: 'moon'"));
    }
};

QTEST_GUILESS_MAIN(TestE2eBench)
#include "tst_e2e_bench.moc"
