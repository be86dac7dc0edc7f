#include "consolebench.h"

#include <QGuiApplication>
#include <QJsonArray>

#include <algorithm>

namespace outbox::consolebench {

namespace {

using core::Status;

constexpr double kStartTargetMs = 1000;
constexpr double kSwitchTargetMs = 200;
constexpr double kStallTargetMs = 50;
constexpr double kMemoryTargetMb = 200;
constexpr double kIdleDbTargetMsPerS = 50; // 5% of one core

using bench::percentile;

// The largest sample (-1 when there is none).
double maxOf(const QList<double> &samples) {
    return percentile(samples, 1.0);
}

QString mb(double value) {
    return QString::number(value, 'f', 1) + QStringLiteral(" MB");
}

// "median 130.2 ms, max 146.0 ms (n=5)", with "p50" for `middle` where
// the samples are not of one kind of run.
QString middleMax(const QList<double> &samples, const char *middle = "median") {
    return QStringLiteral("%1 %2, max %3 (n=%4)")
        .arg(QLatin1String(middle), bench::ms(percentile(samples, 0.5), 1),
             bench::ms(maxOf(samples), 1))
        .arg(samples.size());
}

// A run that never finished counts as failed (-1).
bool allBelow(const QList<double> &samples, double limit) {
    return !samples.isEmpty() && std::all_of(samples.begin(), samples.end(),
                                             [limit](double v) { return v >= 0 && v < limit; });
}

QJsonObject environment(const BenchOptions &options, const BenchResults &r) {
    QJsonObject env = bench::machineJson(
        r.serverVersion,
        {
            {QStringLiteral("qpa_platform"), QGuiApplication::platformName()},
            {QStringLiteral("backlog"), options.backlog},
            {QStringLiteral("stall_seconds"), options.stallSeconds},
            {QStringLiteral("producer_events_per_s"), kProducerRate},
            {QStringLiteral("dispatcher"),
             QStringLiteral("embedded (DispatcherPanel -> DispatcherHost), InProcessPublisher, "
                            "concurrency %1, batch %2")
                 .arg(kConcurrency)
                 .arg(kBatchSize)},
            {QStringLiteral("window"), QStringLiteral("console::MainWindow (the real one)")},
        });
    for (auto it = r.data.begin(); it != r.data.end(); ++it)
        env.insert(it.key(), it.value());
    return env;
}

} // namespace

QList<Check> checkTargets(const BenchResults &r) {
    QList<Check> checks;
    for (Status status : {Status::Pending, Status::Delivered}) {
        const QString view = core::statusName(status);
        const QList<double> samples =
            r.samples.value(QStringLiteral("start_process_%1_ms").arg(view));
        checks.append({QStringLiteral("start -> rows painted, new process, %1 view").arg(view),
                       middleMax(samples), QStringLiteral("< 1000 ms (every run)"),
                       allBelow(samples, kStartTargetMs)});
    }
    const QList<double> switches = r.samples.value(QStringLiteral("switch_fresh_ms"));
    const QList<double> refreshes = r.samples.value(QStringLiteral("refresh_ms"));
    checks.append({QStringLiteral("switch status view -> fresh rows painted"),
                   middleMax(switches, "p50"), QStringLiteral("< 200 ms (every switch)"),
                   allBelow(switches, kSwitchTargetMs)});
    checks.append({QStringLiteral("refresh delivered view -> rows painted"),
                   middleMax(refreshes, "p50"), QStringLiteral("< 200 ms (every refresh)"),
                   allBelow(refreshes, kSwitchTargetMs)});
    if (!r.stall.isEmpty()) {
        const auto stall = [&r](const char *key) {
            return r.stall.value(QLatin1String(key)).toDouble();
        };
        checks.append(
            {QStringLiteral("GUI event-loop stall, dispatcher at full speed"),
             QStringLiteral("max %1, p99 %2 (%3 s)")
                 .arg(bench::ms(stall("max_gap_ms"), 1), bench::ms(stall("p99_gap_ms"), 1))
                 .arg(stall("seconds"), 0, 'f', 1),
             QStringLiteral("< 50 ms (longest)"), stall("max_gap_ms") < kStallTargetMs});
    }
    for (const IdleCost &idle : r.idle)
        checks.append({QStringLiteral("database time per second, idle live console, %1 page%2")
                           .arg(core::statusName(idle.page),
                                idle.search ? QStringLiteral(" with a search") : QString()),
                       QStringLiteral("%1 ms/s (%2% of a core)")
                           .arg(idle.dbMsPerS, 0, 'f', 1)
                           .arg(idle.dbMsPerS / 10.0, 0, 'f', 2),
                       QStringLiteral("< 5% of a core"), idle.dbMsPerS < kIdleDbTargetMsPerS});
    checks.append({QStringLiteral("console memory (peak RSS)"), mb(r.rssPeakMb),
                   QStringLiteral("< 200 MB"), r.rssPeakMb > 0 && r.rssPeakMb < kMemoryTargetMb});
    return checks;
}

void printHuman(QTextStream &out, const BenchOptions &options, const BenchResults &r) {
    const QJsonObject json = toJson(options, r);
    out << "Outbox Console benchmark: "
        << bench::describeMachine(json.value(QLatin1String("environment")).toObject())
        << ", the real console::MainWindow, fresh settings each run\n\n";
    bench::printChecks(out, checkTargets(r),
                       {QStringLiteral("figure"), QStringLiteral("measured"),
                        QStringLiteral("target"), QStringLiteral("result")});
    out << '\n';
    // The statements an idle console ran: statements_idle_console in --json.
    bench::printFigures(out, json,
                        {QStringLiteral("figures"), QStringLiteral("statements_idle_console")});
    out.flush();
}

QJsonObject toJson(const BenchOptions &options, const BenchResults &r) {
    const QList<Check> checks = checkTargets(r);
    QJsonObject idleStatements;
    QJsonObject idleCost;
    for (const IdleCost &idle : r.idle) {
        idleStatements.insert(idle.key(), idle.statements);
        idleCost.insert(idle.key(), idle.dbMsPerS);
    }
    QJsonObject json{
        {QStringLiteral("pass"), bench::allPass(checks)},
        {QStringLiteral("figures"),
         bench::checksJson(checks, QStringLiteral("figure"), QStringLiteral("measured"))},
        {QStringLiteral("environment"), environment(options, r)},
        {QStringLiteral("stall"), r.stall},
        {QStringLiteral("statements_idle_console"), idleStatements},
        {QStringLiteral("idle_db_ms_per_s"), idleCost},
        {QStringLiteral("notes"), QJsonArray::fromStringList(r.notes)},
        {QStringLiteral("rss_peak_mb"), r.rssPeakMb},
        {QStringLiteral("rss_before_dispatcher_mb"), r.rssBeforeStallMb},
        {QStringLiteral("rss_end_mb"), r.rssEndMb},
    };
    for (auto it = r.samples.begin(); it != r.samples.end(); ++it)
        json.insert(it.key(), bench::roundedArray(it.value(), 1));
    return json;
}

} // namespace outbox::consolebench
