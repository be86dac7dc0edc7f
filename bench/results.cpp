#include "bench/benchmark.h"
#include "bench/harness.h"

#include <QJsonArray>

namespace outbox::bench {

QList<Check> checkTargets(const QJsonObject &f) {
    // A figure by its key, "phase.key" inside a phase's object; undefined
    // when its phase did not run.
    const auto at = [&f](const QString &key) {
        const qsizetype dot = key.indexOf(QLatin1Char('.'));
        return dot < 0 ? f.value(key) : f.value(key.left(dot))[key.mid(dot + 1)];
    };
    QList<Check> checks;
    const auto ratio = [&](const QString &name, const QString &key, double least) {
        if (const QJsonValue value = at(key); value.isDouble())
            checks.append(Check::ratio(name, value.toDouble(), least));
    };
    ratio(QStringLiteral("database only / database ceiling"), QStringLiteral("db_only_ratio"),
          0.80);
    ratio(QStringLiteral("end to end per event / QNAM alone (runner)"), QStringLiteral("e2e_ratio"),
          0.80);
    // Batch delivery: the database is the limit, not one request per event.
    ratio(QStringLiteral("end to end (batch delivery) / database only"),
          QStringLiteral("e2e_db_only_ratio"), 0.80);
    // A request of about 30 KB (a batch of 100 events) against a small one, one
    // at a time on a warm connection: a Nagle/delayed-ACK stall adds 40 ms.
    QMap<int, double> sizeP50;
    const QJsonArray sizes = f.value(QLatin1String("latency_by_size")).toArray();
    for (const QJsonValue &row : sizes)
        sizeP50[row[QLatin1String("bytes")].toInt()] =
            row[QLatin1String("client")][QLatin1String("p50_ms")].toDouble();
    if (sizeP50.contains(300) && sizeP50.contains(30000))
        checks.append({QStringLiteral("30 KB request over a 0.3 KB one (p50, loopback)"),
                       ms(sizeP50[30000] - sizeP50[300], 2), QStringLiteral("< 3 ms"),
                       sizeP50[30000] - sizeP50[300] < 3.0});
    if (f.contains(QLatin1String("latency_events"))) {
        const double p50 = f.value(QLatin1String("latency_p50_ms")).toDouble();
        const double p99 = f.value(QLatin1String("latency_p99_ms")).toDouble();
        const bool measured = f.value(QLatin1String("latency_events")).toInt() > 0;
        checks.append({QStringLiteral("commit->delivered p50"), ms(p50, 2),
                       QStringLiteral("< 2.5 ms"), measured && p50 < 2.5});
        checks.append({QStringLiteral("commit->delivered p99"), ms(p99, 2),
                       QStringLiteral("< 7 ms"), measured && p99 < 7.0});
    }
    ratio(QStringLiteral("burst into stale / fresh statistics"),
          QStringLiteral("claim_path.stale_ratio"), 0.80);
    ratio(QStringLiteral("aggregate order / unordered claim"),
          QStringLiteral("claim_path.aggregate_order_ratio"), 0.50);
    const qint64 aside = at(QStringLiteral("paused.paused_events")).toInteger();
    ratio(QStringLiteral("rest delivered, %1 paused / nothing paused").arg(aside),
          QStringLiteral("paused.ratio"), 0.90);
    ratio(QStringLiteral("aggregate order, %1 behind dead / none").arg(aside),
          QStringLiteral("paused.blocked_ratio"), 0.90);
    ratio(QStringLiteral("Kafka (mock cluster) / database only"), QStringLiteral("kafka.ratio"),
          0.80);
    ratio(QStringLiteral("B beside A answering 503 / B alone"),
          QStringLiteral("isolation.a_503_ratio"), 0.90);
    ratio(QStringLiteral("B beside A's port closed / B alone"),
          QStringLiteral("isolation.a_closed_ratio"), 0.90);
    ratio(QStringLiteral("B beside A answering in 2 s / B alone"),
          QStringLiteral("isolation.a_slow_ratio"), 0.90);
    ratio(QStringLiteral("burn-down last/first %1 s window")
              .arg(at(QStringLiteral("burn_down.window_s")).toDouble(), 0, 'f', 1),
          QStringLiteral("burn_down.ratio"), 0.80);
    if (const QJsonValue rss = at(QStringLiteral("burn_down.rss_mb_max")); rss.isDouble())
        checks.append({QStringLiteral("RSS max during burn-down"),
                       QString::number(rss.toDouble(), 'f', 1) + QStringLiteral(" MB"),
                       QStringLiteral("< 60 MB"), rss.toDouble() < 60.0});
    return checks;
}

} // namespace outbox::bench
