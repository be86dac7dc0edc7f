#include "bench/benchmark.h"

#include <QJsonArray>

namespace outbox::bench {

namespace {

double ratio(double value, double reference) {
    return reference > 0 ? value / reference : 0.0;
}

QString percent(double fraction) {
    return QString::number(fraction * 100.0, 'f', 1) + QLatin1Char('%');
}

QString ms(double value) {
    return QString::number(value, 'f', 2) + QStringLiteral(" ms");
}

double rounded(double value, int decimals = 2) {
    const double scale = std::pow(10.0, decimals);
    return std::round(value * scale) / scale;
}

QJsonObject burnDownJson(const BenchResults::BurnDown &b) {
    return QJsonObject{
        {QStringLiteral("events"), b.events},
        {QStringLiteral("vacuum_settings"), b.vacuumSettings},
        {QStringLiteral("seconds"), rounded(b.seconds)},
        {QStringLiteral("window_s"), rounded(b.windowSeconds)},
        {QStringLiteral("first_window_events_per_s"), rounded(b.firstRate, 0)},
        {QStringLiteral("last_window_events_per_s"), rounded(b.lastRate, 0)},
        {QStringLiteral("average_events_per_s"), rounded(b.averageRate, 0)},
        {QStringLiteral("ratio"), rounded(ratio(b.lastRate, b.firstRate), 3)},
        {QStringLiteral("rss_mb_start"), rounded(b.rssMbStart, 1)},
        {QStringLiteral("rss_mb_max"), rounded(b.rssMbMax, 1)},
        {QStringLiteral("rss_mb_end"), rounded(b.rssMbEnd, 1)},
        {QStringLiteral("autovacuum_runs"), b.autovacuums},
        {QStringLiteral("window_rates"),
         [&b] {
             QJsonArray rates;
             for (double rate : b.windowRates)
                 rates.append(rounded(rate, 0));
             return rates;
         }()},
    };
}

QJsonObject cpuJson(const CpuFigures &f) {
    return QJsonObject{
        {QStringLiteral("busy_pct"), rounded(f.busy * 100.0, 1)},
        {QStringLiteral("steal_pct"), rounded(f.steal * 100.0, 1)},
        {QStringLiteral("total_us_per_event"), rounded(f.totalUs, 1)},
        {QStringLiteral("self_us_per_event"), rounded(f.selfUs, 1)},
        {QStringLiteral("runner_us_per_event"), rounded(f.runnerUs, 1)},
        {QStringLiteral("database_us_per_event"), rounded(f.databaseUs, 1)},
        {QStringLiteral("rest_us_per_event"), rounded(f.restUs, 1)},
    };
}

QJsonArray cpuRoundsJson(const QList<CpuUsage> &rounds, qint64 events) {
    QJsonArray array;
    for (const CpuUsage &usage : rounds)
        array.append(cpuJson(usage.perEvent(events)));
    return array;
}

} // namespace

CpuFigures medianCpu(const QList<CpuUsage> &rounds, qint64 events) {
    QList<double> total, self, runner, database, rest, busy, steal;
    for (const CpuUsage &usage : rounds) {
        const CpuFigures round = usage.perEvent(events);
        if (!round.valid)
            continue;
        total << round.totalUs;
        self << round.selfUs;
        runner << round.runnerUs;
        database << round.databaseUs;
        rest << round.restUs;
        busy << round.busy;
        steal << round.steal;
    }
    CpuFigures figures;
    figures.valid = !total.isEmpty();
    figures.totalUs = median(total);
    figures.selfUs = median(self);
    figures.runnerUs = median(runner);
    figures.databaseUs = median(database);
    figures.restUs = median(rest);
    figures.busy = median(busy);
    figures.steal = median(steal);
    return figures;
}

QList<TargetCheck> checkTargets(const BenchResults &r) {
    QList<TargetCheck> checks;
    if (r.dbRan) {
        const double dbRatio = r.dbRatio;
        checks.append({QStringLiteral("database only / database ceiling"), percent(dbRatio),
                       QStringLiteral(">= 80%"), dbRatio >= 0.80});
    }
    if (r.httpRan) {
        const double e2eRatio = r.e2eRatio;
        checks.append({QStringLiteral("end to end / HTTP ceiling"), percent(e2eRatio),
                       QStringLiteral(">= 70%"), e2eRatio >= 0.70});
    }
    if (r.latencyRan) {
        checks.append({QStringLiteral("commit->delivered p50"), ms(r.latencyP50),
                       QStringLiteral("< 2.5 ms"), r.latencyCount > 0 && r.latencyP50 < 2.5});
        checks.append({QStringLiteral("commit->delivered p99"), ms(r.latencyP99),
                       QStringLiteral("< 7 ms"), r.latencyCount > 0 && r.latencyP99 < 7.0});
    }
    if (r.burnDown.ran) {
        const double held = ratio(r.burnDown.lastRate, r.burnDown.firstRate);
        checks.append({QStringLiteral("burn-down last/first %1 s window")
                           .arg(r.burnDown.windowSeconds, 0, 'f', 1),
                       percent(held), QStringLiteral(">= 80%"), held >= 0.80});
        checks.append({QStringLiteral("RSS max during burn-down"),
                       QString::number(r.burnDown.rssMbMax, 'f', 1) + QStringLiteral(" MB"),
                       QStringLiteral("< 60 MB"), r.burnDown.rssMbMax < 60.0});
    }
    return checks;
}

QJsonObject resultsJson(const BenchResults &r) {
    QJsonObject json{
        {QStringLiteral("db_ceiling_events_per_s"), rounded(r.dbCeilingPerSecond, 0)},
        {QStringLiteral("db_only_events_per_s"), rounded(r.dbOnlyPerSecond, 0)},
        {QStringLiteral("db_only_ratio"), rounded(r.dbRatio, 3)},
        {QStringLiteral("http_only_requests_per_s"), rounded(r.httpCeilingPerSecond, 0)},
        {QStringLiteral("e2e_events_per_s"), rounded(r.e2ePerSecond, 0)},
        {QStringLiteral("e2e_ratio"), rounded(r.e2eRatio, 3)},
        {QStringLiteral("e2e_duplicates"), r.e2eDuplicates},
        {QStringLiteral("http_managers"), r.httpManagers},
        {QStringLiteral("latency_events"), r.latencyCount},
        {QStringLiteral("latency_p50_ms"), rounded(r.latencyP50, 3)},
        {QStringLiteral("latency_p90_ms"), rounded(r.latencyP90, 3)},
        {QStringLiteral("latency_p99_ms"), rounded(r.latencyP99, 3)},
        {QStringLiteral("latency_max_ms"), rounded(r.latencyMax, 3)},
        {QStringLiteral("latency_from_transaction_start_p50_ms"),
         rounded(r.latencyFromStartP50, 3)},
        {QStringLiteral("latency_from_transaction_start_p99_ms"),
         rounded(r.latencyFromStartP99, 3)},
        {QStringLiteral("latency_http_p50_ms"), rounded(r.httpP50, 3)},
        {QStringLiteral("latency_http_p99_ms"), rounded(r.httpP99, 3)},
        {QStringLiteral("rss_mb_max"), rounded(r.rssMbMax, 1)},
    };
    // Per-round lists: ratios to 3 decimals, rates to whole events.
    const auto rounds = [](const QList<double> &values, int decimals) {
        QJsonArray array;
        for (double value : values)
            array.append(rounded(value, decimals));
        return array;
    };
    json.insert(QStringLiteral("db_only_ratio_rounds"), rounds(r.dbRatios, 3));
    json.insert(QStringLiteral("e2e_ratio_rounds"), rounds(r.e2eRatios, 3));
    json.insert(QStringLiteral("db_ceiling_rounds"), rounds(r.dbCeilingRounds, 0));
    json.insert(QStringLiteral("db_only_rounds"), rounds(r.dbOnlyRounds, 0));
    json.insert(QStringLiteral("http_ceiling_rounds"), rounds(r.httpCeilingRounds, 0));
    json.insert(QStringLiteral("e2e_rounds"), rounds(r.e2eRounds, 0));
    if (r.httpRan) {
        json.insert(QStringLiteral("http_ceiling_cpu"),
                    cpuJson(medianCpu(r.httpCeilingCpu, r.eventsPerPhase)));
        json.insert(QStringLiteral("e2e_cpu"), cpuJson(medianCpu(r.e2eCpu, r.eventsPerPhase)));
        json.insert(QStringLiteral("http_ceiling_cpu_rounds"),
                    cpuRoundsJson(r.httpCeilingCpu, r.eventsPerPhase));
        json.insert(QStringLiteral("e2e_cpu_rounds"), cpuRoundsJson(r.e2eCpu, r.eventsPerPhase));
    }
    if (r.burnDown.ran) {
        json.insert(QStringLiteral("burn_down_events"), r.burnDown.events);
        json.insert(QStringLiteral("burn_down_first_events_per_s"),
                    rounded(r.burnDown.firstRate, 0));
        json.insert(QStringLiteral("burn_down_last_events_per_s"), rounded(r.burnDown.lastRate, 0));
        json.insert(QStringLiteral("burn_down_ratio"),
                    rounded(ratio(r.burnDown.lastRate, r.burnDown.firstRate), 3));
        json.insert(QStringLiteral("burn_down"), burnDownJson(r.burnDown));
    }
    if (r.burnDownNoVacuumSettings.ran) {
        json.insert(QStringLiteral("burn_down_no_vacuum_settings_ratio"),
                    rounded(ratio(r.burnDownNoVacuumSettings.lastRate,
                                  r.burnDownNoVacuumSettings.firstRate),
                            3));
        json.insert(QStringLiteral("burn_down_no_vacuum_settings"),
                    burnDownJson(r.burnDownNoVacuumSettings));
    }
    QJsonArray targets;
    bool allPass = true;
    for (const TargetCheck &check : checkTargets(r)) {
        targets.append(QJsonObject{{QStringLiteral("name"), check.name},
                                   {QStringLiteral("value"), check.value},
                                   {QStringLiteral("target"), check.target},
                                   {QStringLiteral("pass"), check.pass}});
        allPass = allPass && check.pass;
    }
    json.insert(QStringLiteral("targets"), targets);
    json.insert(QStringLiteral("all_targets_pass"), allPass);
    json.insert(QStringLiteral("environment"), r.environment);
    return json;
}

} // namespace outbox::bench
