#include "bench/benchmark.h"
#include "bench/harness.h"
#include "bench/isolation.h"
#include "bench/kafka.h"

#include <QJsonArray>

#include <tuple>

namespace outbox::bench {

QList<Check> checkTargets(const BenchResults &r) {
    QList<Check> checks;
    if (r.dbRan) {
        checks.append(Check::ratio(QStringLiteral("database only / database ceiling"),
                                   median(r.rounds.value(QStringLiteral("db_only_ratio_rounds"))),
                                   0.80));
    }
    if (r.httpRan) {
        checks.append(Check::ratio(QStringLiteral("end to end per event / QNAM alone (runner)"),
                                   median(r.rounds.value(QStringLiteral("e2e_ratio_rounds"))),
                                   0.80));
    }
    if (const auto batch = r.rounds.value(QStringLiteral("e2e_db_only_ratio_rounds"));
        !batch.isEmpty()) // batch delivery: the database is the limit, not one request per event
        checks.append(Check::ratio(QStringLiteral("end to end (batch delivery) / database only"),
                                   median(batch), 0.80));
    // A request of about 30 KB (a batch of 100 events) against a small one, one
    // at a time on a warm connection: a Nagle/delayed-ACK stall adds 40 ms.
    QMap<int, double> sizeP50;
    for (const QJsonValue &row : r.latencyBySize)
        sizeP50[row[QLatin1String("bytes")].toInt()] =
            row[QLatin1String("client")][QLatin1String("p50_ms")].toDouble();
    if (sizeP50.contains(300) && sizeP50.contains(30000))
        checks.append({QStringLiteral("30 KB request over a 0.3 KB one (p50, loopback)"),
                       ms(sizeP50[30000] - sizeP50[300], 2), QStringLiteral("< 3 ms"),
                       sizeP50[30000] - sizeP50[300] < 3.0});
    if (!r.latency.isEmpty()) {
        const double p50 = r.latency.value(QLatin1String("latency_p50_ms")).toDouble();
        const double p99 = r.latency.value(QLatin1String("latency_p99_ms")).toDouble();
        const bool measured = r.latency.value(QLatin1String("latency_events")).toInt() > 0;
        checks.append({QStringLiteral("commit->delivered p50"), ms(p50, 2),
                       QStringLiteral("< 2.5 ms"), measured && p50 < 2.5});
        checks.append({QStringLiteral("commit->delivered p99"), ms(p99, 2),
                       QStringLiteral("< 7 ms"), measured && p99 < 7.0});
    }
    if (!r.claimPath.isEmpty()) {
        const auto c = [&r](const char *key) {
            return r.claimPath.value(QLatin1String(key)).toDouble();
        };
        checks.append(Check::ratio(QStringLiteral("burst into stale / fresh statistics"),
                                   c("stale_ratio"), 0.80));
        checks.append(Check::ratio(QStringLiteral("aggregate order / unordered claim"),
                                   c("aggregate_order_ratio"), 0.50));
    }
    if (!r.paused.isEmpty()) {
        const qint64 aside = r.paused.value(QLatin1String("paused_events")).toInteger();
        for (const auto &[name, key] :
             {std::pair{QStringLiteral("rest delivered, %1 paused / nothing paused"), "ratio"},
              {QStringLiteral("aggregate order, %1 behind dead / none"), "blocked_ratio"}}) {
            checks.append(
                Check::ratio(name.arg(aside), r.paused.value(QLatin1String(key)).toDouble(), 0.90));
        }
    }
    checks += kafkaChecks(r.kafka);
    checks += isolationChecks(r.isolation);
    if (!r.burnDown.isEmpty()) {
        const auto b = [&r](const char *key) {
            return r.burnDown.value(QLatin1String(key)).toDouble();
        };
        checks.append(Check::ratio(
            QStringLiteral("burn-down last/first %1 s window").arg(b("window_s"), 0, 'f', 1),
            b("ratio"), 0.80));
        checks.append({QStringLiteral("RSS max during burn-down"),
                       QString::number(b("rss_mb_max"), 'f', 1) + QStringLiteral(" MB"),
                       QStringLiteral("< 60 MB"), b("rss_mb_max") < 60.0});
    }
    return checks;
}

QJsonObject resultsJson(const BenchResults &r) {
    QJsonObject json{
        {QStringLiteral("e2e_duplicates"), r.e2eDuplicates},
        {QStringLiteral("http_managers"), r.httpManagers},
        {QStringLiteral("rss_mb_max"), rounded(r.rssMbMax, 1)},
    };
    // The median of each per-round list and the list itself: ratios to 3
    // decimals, rates to whole events.
    for (const auto &[key, rounds, decimals] :
         {std::tuple{"db_ceiling_events_per_s", "db_ceiling_rounds", 0},
          {"db_only_events_per_s", "db_only_rounds", 0},
          {"db_only_ratio", "db_only_ratio_rounds", 3},
          {"http_only_requests_per_s", "http_ceiling_rounds", 0},
          {"client_only_requests_per_s", "client_ceiling_rounds", 0},
          {"e2e_events_per_s", "e2e_rounds", 0},
          {"e2e_ratio", "e2e_ratio_rounds", 3},
          {"e2e_batch_events_per_s", "e2e_batch_rounds", 0},
          {"e2e_db_only_ratio", "e2e_db_only_ratio_rounds", 3},
          {"nginx_http_only_requests_per_s", "nginx_http_ceiling_rounds", 0},
          {"nginx_client_only_requests_per_s", "nginx_client_ceiling_rounds", 0},
          {"nginx_e2e_events_per_s", "nginx_e2e_rounds", 0},
          {"nginx_e2e_ratio", "nginx_e2e_ratio_rounds", 3},
          {"nginx_e2e_batch_events_per_s", "nginx_e2e_batch_rounds", 0}}) {
        const QList<double> values = r.rounds.value(QLatin1String(rounds));
        if (values.isEmpty()) // its phase did not run (--only)
            continue;
        json.insert(QLatin1String(key), rounded(median(values), decimals));
        json.insert(QLatin1String(rounds), roundedArray(values, decimals));
    }
    for (auto it = r.latency.begin(); it != r.latency.end(); ++it)
        json.insert(it.key(), rounded(it.value().toDouble(), 3));
    // The main burn-down figures at the top level too, as before the
    // burn-down had an object of its own.
    for (const auto &[key, figure] : {std::pair{"burn_down_events", "events"},
                                      {"burn_down_first_events_per_s", "first_window_events_per_s"},
                                      {"burn_down_last_events_per_s", "last_window_events_per_s"},
                                      {"burn_down_ratio", "ratio"}}) {
        if (!r.burnDown.isEmpty())
            json.insert(QLatin1String(key), r.burnDown.value(QLatin1String(figure)));
    }
    if (!r.latencyBySize.isEmpty())
        json.insert(QStringLiteral("latency_by_size"), r.latencyBySize);
    if (!r.burnDown.isEmpty())
        json.insert(QStringLiteral("burn_down"), r.burnDown);
    if (!r.claimPath.isEmpty())
        json.insert(QStringLiteral("claim_path"), r.claimPath);
    if (!r.paused.isEmpty())
        json.insert(QStringLiteral("paused"), r.paused);
    if (!r.kafka.isEmpty())
        json.insert(QStringLiteral("kafka"), r.kafka);
    if (!r.isolation.isEmpty())
        json.insert(QStringLiteral("isolation"), r.isolation);
    const QList<Check> checks = checkTargets(r);
    json.insert(QStringLiteral("targets"),
                checksJson(checks, QStringLiteral("name"), QStringLiteral("value")));
    json.insert(QStringLiteral("all_targets_pass"), allPass(checks));
    json.insert(QStringLiteral("environment"), r.environment);
    return json;
}

} // namespace outbox::bench
