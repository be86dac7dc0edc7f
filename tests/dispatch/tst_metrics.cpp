// Histogram arithmetic, the Prometheus exposition of a snapshot, and the
// /metrics endpoint on a real socket.

#include "dispatch/histogram.h"
#include "dispatch/metrics.h"
#include "dispatch/metricsserver.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTcpSocket>
#include <QtTest>

using outbox::dispatch::DispatcherState;
using outbox::dispatch::DispatcherStats;
using outbox::dispatch::Histogram;
using outbox::dispatch::MetricsServer;

class TestMetrics : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bucketsCoverValues_data() {
        QTest::addColumn<qint64>("value");
        for (qint64 value : {0LL, 1LL, 15LL, 16LL, 17LL, 31LL, 32LL, 1000LL, 999999LL, 1000000LL,
                             123456789LL, (1LL << 40) + 12345})
            QTest::addRow("%lld", value) << value;
    }

    void bucketsCoverValues() {
        QFETCH(qint64, value);
        const int index = Histogram::bucketIndex(value);
        QVERIFY(index >= 0 && index < Histogram::BucketCount);
        QVERIFY(Histogram::bucketLowerBound(index) <= value);
        QVERIFY(Histogram::bucketUpperBound(index) >= value);
        // Relative width at most 1/8: the promised precision.
        const qint64 width =
            Histogram::bucketUpperBound(index) - Histogram::bucketLowerBound(index);
        QVERIFY(width * 8 <= std::max<qint64>(Histogram::bucketLowerBound(index), 8));
    }

    void bucketsAreContiguous() {
        for (int i = 1; i < Histogram::BucketCount; ++i)
            QCOMPARE(Histogram::bucketLowerBound(i), Histogram::bucketUpperBound(i - 1) + 1);
    }

    void percentiles() {
        Histogram histogram;
        for (qint64 value = 1; value <= 1000; ++value)
            histogram.record(value * 100); // 100 us .. 100 ms, uniform
        QCOMPARE(histogram.count(), 1000);
        QCOMPARE(histogram.min(), 100);
        QCOMPARE(histogram.max(), 100000);
        QCOMPARE(histogram.sum(), 100 * 1000 * 1001 / 2);
        const auto near = [](qint64 actual, qint64 expected) {
            return actual >= expected && actual <= expected + expected / 8 + 1;
        };
        QVERIFY2(near(histogram.p50(), 50000), qPrintable(QString::number(histogram.p50())));
        QVERIFY2(near(histogram.p90(), 90000), qPrintable(QString::number(histogram.p90())));
        QVERIFY2(near(histogram.p99(), 99000), qPrintable(QString::number(histogram.p99())));
        QCOMPARE(histogram.percentile(1.0), 100000);
        QVERIFY(near(histogram.percentile(0.0), 100)); // the smallest value's bucket
        QCOMPARE(histogram.countAtOrBelow(1000000), 1000);
        QVERIFY(histogram.countAtOrBelow(50000) >= 440 && histogram.countAtOrBelow(50000) <= 500);
    }

    void emptyHistogram() {
        const Histogram histogram;
        QCOMPARE(histogram.count(), 0);
        QCOMPARE(histogram.p50(), 0);
        QCOMPARE(histogram.p99(), 0);
        QCOMPARE(histogram.max(), 0);
        QCOMPARE(histogram.min(), 0);
        QCOMPARE(histogram.mean(), 0.0);
    }

    void mergeAndReset() {
        Histogram a;
        Histogram b;
        a.record(10);
        b.record(5000);
        b.record(7);
        a.merge(b);
        QCOMPARE(a.count(), 3);
        QCOMPARE(a.min(), 7);
        QCOMPARE(a.max(), 5000);
        QCOMPARE(a.sum(), 5017);
        a.reset();
        QCOMPARE(a.count(), 0);
        QCOMPARE(a.max(), 0);
    }

    void hugeValuesSaturate() {
        Histogram histogram;
        histogram.record(std::numeric_limits<qint64>::max());
        histogram.record(std::numeric_limits<qint64>::max());
        histogram.record(-5); // clock skew: counted as 0
        QCOMPARE(histogram.count(), 3);
        QCOMPARE(histogram.sum(), std::numeric_limits<qint64>::max());
        QCOMPARE(histogram.min(), 0);
        QCOMPARE(histogram.p99(), std::numeric_limits<qint64>::max());
    }

    void prometheusText() {
        DispatcherStats stats;
        stats.state = DispatcherState::Running;
        stats.workerId = QUuid::fromString(QLatin1String("01890a5d-ac96-774b-bcce-b302099a8057"));
        stats.delivered = 42;
        stats.fencedOut = 3;
        stats.maybeDuplicated = 2;
        stats.inFlight = 5;
        stats.listening = true;
        stats.httpDuration.record(800);     // 0.8 ms
        stats.httpDuration.record(3000000); // 3 s
        const QByteArray text = outbox::dispatch::prometheusText(stats);
        const QByteArray labels = "worker_id=\"01890a5d-ac96-774b-bcce-b302099a8057\"";
        const auto has = [&text](const QByteArray &needle) { return text.contains(needle); };

        QVERIFY(has("# TYPE outbox_dispatch_delivered_total counter\n"));
        QVERIFY(has("outbox_dispatch_delivered_total{" + labels + "} 42\n"));
        QVERIFY(has("outbox_dispatch_fenced_out_total{" + labels + "} 3\n"));
        QVERIFY(has("outbox_dispatch_maybe_duplicated_total{" + labels + "} 2\n"));
        QVERIFY(has("outbox_dispatch_in_flight{" + labels + "} 5\n"));
        QVERIFY(has("outbox_dispatch_listening{" + labels + "} 1\n"));
        QVERIFY(has("outbox_dispatch_up{" + labels + "} 1\n"));
        QVERIFY(has("outbox_dispatch_state{" + labels + ",state=\"running\"} 1\n"));
        QVERIFY(has("outbox_dispatch_state{" + labels + ",state=\"stopped\"} 0\n"));
        QVERIFY(has("# TYPE outbox_dispatch_http_duration_seconds histogram\n"));
        QVERIFY(
            has("outbox_dispatch_http_duration_seconds_bucket{" + labels + ",le=\"0.001\"} 1\n"));
        QVERIFY(has("outbox_dispatch_http_duration_seconds_bucket{" + labels + ",le=\"2.5\"} 1\n"));
        QVERIFY(has("outbox_dispatch_http_duration_seconds_bucket{" + labels + ",le=\"5\"} 2\n"));
        QVERIFY(
            has("outbox_dispatch_http_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} 2\n"));
        QVERIFY(has("outbox_dispatch_http_duration_seconds_count{" + labels + "} 2\n"));
        QVERIFY(has("outbox_dispatch_http_duration_seconds_sum{" + labels + "} 3.0008\n"));
        // Every line is a comment or "name{labels} value".
        for (const QByteArray &line : text.split('\n')) {
            if (line.isEmpty() || line.startsWith('#'))
                continue;
            QVERIFY2(line.startsWith("outbox_dispatch_") && line.contains("} "), line.constData());
        }
    }

    void metricsServer() {
        MetricsServer server;
        QVERIFY(server.listen(QHostAddress::LocalHost, 0).ok());
        DispatcherStats stats;
        stats.delivered = 7;
        server.update(stats);

        const auto get = [&](const QByteArray &path, QByteArray &response,
                             const QByteArray &method = "GET") {
            QTcpSocket socket;
            socket.connectToHost(QHostAddress::LocalHost, server.port());
            QTRY_COMPARE(socket.state(), QAbstractSocket::ConnectedState);
            socket.write(method + ' ' + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
            QTRY_COMPARE(socket.state(), QAbstractSocket::UnconnectedState);
            response = socket.readAll();
        };
        QByteArray response;
        get("/metrics", response);
        QVERIFY2(response.startsWith("HTTP/1.1 200 OK\r\n"), response.left(100).constData());
        QVERIFY(response.contains("text/plain; version=0.0.4"));
        QVERIFY(response.contains("outbox_dispatch_delivered_total{worker_id=\""));
        QVERIFY(response.contains("} 7\n"));

        get("/metrics?name[]=x", response);
        QVERIFY2(response.startsWith("HTTP/1.1 200 OK\r\n"), response.left(100).constData());

        get("/other", response);
        QVERIFY(response.startsWith("HTTP/1.1 404"));
        get("/metrics", response, "DELETE");
        QVERIFY(response.startsWith("HTTP/1.1 405"));
    }

    // Every metric the example alert rules (packaging/prometheus) use is one
    // this build exposes: a renamed metric must not silently disarm an alert.
    void alertRulesNameExposedMetrics() {
        QFile rules(qEnvironmentVariable("OUTBOX_SOURCE_DIR") +
                    QStringLiteral("/packaging/prometheus/outbox-alerts.yml"));
        QVERIFY2(rules.open(QIODevice::ReadOnly), qPrintable(rules.fileName()));
        const QString text = QString::fromUtf8(rules.readAll());
        outbox::store::QueueGauges gauges;
        gauges.readAt = QDateTime::currentDateTimeUtc();
        const QString exposed =
            QString::fromUtf8(outbox::dispatch::prometheusText(DispatcherStats()) +
                              outbox::dispatch::queueGaugesText(gauges, gauges.readAt));
        QSet<QString> names;
        static const QRegularExpression metric(QStringLiteral("\\b(outbox_[a-z_]+)"));
        for (auto it = metric.globalMatch(text); it.hasNext();)
            names.insert(it.next().captured(1));
        QVERIFY(names.size() >= 5);
        for (const QString &name : names) {
            const QRegularExpression line(QStringLiteral("^") + name + QStringLiteral("[ {]"),
                                          QRegularExpression::MultilineOption);
            QVERIFY2(line.match(exposed).hasMatch(), qPrintable(name));
        }
        QVERIFY(exposed.contains(QStringLiteral("outbox_queue_events{status=\"pending\"} 0")));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
