#include "consolebench.h"

#include <QDateTime>
#include <QFile>
#include <QGuiApplication>
#include <QJsonArray>
#include <QSysInfo>
#include <QThread>

#include <algorithm>
#include <cmath>
#include <utility>

namespace outbox::consolebench {

namespace {

using core::Status;

constexpr double kStartTargetMs = 1000;
constexpr double kSwitchTargetMs = 200;
constexpr double kStallTargetMs = 50;
constexpr double kMemoryTargetMb = 200;

using bench::percentile;

double maxOf(const QList<double> &samples) {
    return samples.isEmpty() ? -1 : *std::max_element(samples.begin(), samples.end());
}

QString ms(double value) {
    return bench::ms(value, 1);
}

QString medianMax(const QList<double> &samples) {
    return QStringLiteral("median %1, max %2 (n=%3)")
        .arg(ms(percentile(samples, 0.5)), ms(maxOf(samples)))
        .arg(samples.size());
}

QString p50Max(const QList<double> &samples) {
    return QStringLiteral("p50 %1, max %2 (n=%3)")
        .arg(ms(percentile(samples, 0.5)), ms(maxOf(samples)))
        .arg(samples.size());
}

// A run that never finished counts as failed (-1).
bool allBelow(const QList<double> &samples, double limit) {
    return !samples.isEmpty() && std::all_of(samples.begin(), samples.end(),
                                             [limit](double v) { return v >= 0 && v < limit; });
}

QList<double> processStarts(const BenchResults &r, Status status) {
    QList<double> out;
    for (const StartRun &run : r.processStarts)
        if (run.status == status)
            out << run.processMs;
    return out;
}

QList<double> windowStarts(const BenchResults &r, Status status) {
    QList<double> out;
    for (const StartRun &run : r.windowStarts)
        if (run.status == status)
            out << run.windowMs;
    return out;
}

QList<double> switchFresh(const BenchResults &r) {
    QList<double> out;
    for (const SwitchRun &run : r.switches)
        out << run.freshMs;
    return out;
}

QJsonArray toArray(const QList<double> &samples) {
    return bench::roundedArray(samples, 1);
}

QJsonObject environment(const BenchOptions &options, const BenchResults &r) {
    return QJsonObject{
        {QStringLiteral("date"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("cpus"), QThread::idealThreadCount()},
        {QStringLiteral("cpu"), bench::cpuModel()},
        {QStringLiteral("os"), QSysInfo::prettyProductName()},
        {QStringLiteral("qt"), QString::fromLatin1(qVersion())},
        {QStringLiteral("qpa_platform"), QGuiApplication::platformName()},
        {QStringLiteral("postgresql"), r.serverVersion},
        {QStringLiteral("delivered"), r.data.delivered},
        {QStringLiteral("dead"), r.data.dead},
        {QStringLiteral("pending"), r.data.pending},
        {QStringLiteral("processing"), r.data.processing},
        {QStringLiteral("payload_bytes_avg"), std::round(r.data.payloadBytes)},
        {QStringLiteral("table_size"), r.data.tableSize},
        {QStringLiteral("load_s"), std::round(r.loadSeconds * 10.0) / 10.0},
        {QStringLiteral("backlog"), options.backlog},
        {QStringLiteral("stall_seconds"), options.stallSeconds},
        {QStringLiteral("producer_events_per_s"), options.producerRate},
        {QStringLiteral("dispatcher"),
         QStringLiteral("embedded (DispatcherPanel -> DispatcherHost), InProcessPublisher, "
                        "concurrency %1, batch %2")
             .arg(options.concurrency)
             .arg(options.batchSize)},
        {QStringLiteral("window"), QStringLiteral("console::MainWindow (the real one)")},
        {QStringLiteral("load_average_before"), r.loadBefore},
        {QStringLiteral("load_average_after"), r.loadAfter},
    };
}

} // namespace

QList<Check> checkTargets(const BenchResults &r) {
    QList<Check> checks;
    const QString startTarget = QStringLiteral("< 1000 ms (every run)");
    for (Status status : {Status::Pending, Status::Delivered}) {
        const QList<double> process = processStarts(r, status);
        checks.append({QStringLiteral("start -> rows painted, new process, %1 view")
                           .arg(core::statusName(status)),
                       medianMax(process), startTarget, allBelow(process, kStartTargetMs)});
    }
    for (Status status : {Status::Pending, Status::Delivered}) {
        const QList<double> window = windowStarts(r, status);
        checks.append({QStringLiteral("start -> rows painted, new window, %1 view")
                           .arg(core::statusName(status)),
                       medianMax(window), startTarget, allBelow(window, kStartTargetMs)});
    }
    const QList<double> switches = switchFresh(r);
    checks.append({QStringLiteral("switch status view -> fresh rows painted"), p50Max(switches),
                   QStringLiteral("< 200 ms (every switch)"), allBelow(switches, kSwitchTargetMs)});
    checks.append({QStringLiteral("refresh delivered view -> rows painted"), p50Max(r.refreshMs),
                   QStringLiteral("< 200 ms (every refresh)"),
                   allBelow(r.refreshMs, kSwitchTargetMs)});
    if (r.stall.ticks > 0) {
        checks.append({QStringLiteral("GUI event-loop stall, dispatcher at full speed"),
                       QStringLiteral("max %1, p99 %2 (%3 s)")
                           .arg(ms(r.stall.maxGapMs), ms(r.stall.p99GapMs))
                           .arg(r.stallSeconds, 0, 'f', 1),
                       QStringLiteral("< 50 ms (longest)"), r.stall.maxGapMs < kStallTargetMs});
    }
    checks.append({QStringLiteral("console memory (peak RSS)"),
                   QString::number(r.rssPeakMb, 'f', 1) + QStringLiteral(" MB"),
                   QStringLiteral("< 200 MB"), r.rssPeakMb > 0 && r.rssPeakMb < kMemoryTargetMb});
    return checks;
}

void printHuman(QTextStream &out, const BenchOptions &options, const BenchResults &r) {
    const QJsonObject env = environment(options, r);
    out << "Outbox Console benchmark\n";
    out << "  machine: " << env.value(QLatin1String("cpus")).toInt() << " CPUs ("
        << env.value(QLatin1String("cpu")).toString() << "), "
        << env.value(QLatin1String("os")).toString() << ", Qt "
        << env.value(QLatin1String("qt")).toString() << " ("
        << env.value(QLatin1String("qpa_platform")).toString() << "), PostgreSQL "
        << r.serverVersion << "\n";
    out << "  data: " << r.data.delivered << " delivered, " << r.data.dead << " dead, "
        << r.data.pending << " pending, " << r.data.processing << " processing; payload ~"
        << qRound(r.data.payloadBytes) << " bytes; table " << r.data.tableSize << "; loaded in "
        << QString::number(r.loadSeconds, 'f', 1) << " s\n";
    out << "  window: the real console::MainWindow, fresh settings each run\n\n";

    bench::printChecks(out, checkTargets(r),
                       {QStringLiteral("figure"), QStringLiteral("measured"),
                        QStringLiteral("target"), QStringLiteral("result")});
    out << "\nDetails\n";
    for (Status to : {Status::Pending, Status::Processing, Status::Delivered, Status::Dead}) {
        QList<double> first;
        QList<double> again;
        QList<double> shown;
        for (const SwitchRun &s : r.switches) {
            if (s.to == to) {
                (s.firstVisit ? first : again) << s.freshMs;
                shown << s.shownMs;
            }
        }
        if (first.isEmpty() && again.isEmpty())
            continue;
        out << "  switch to " << core::statusName(to) << ": first visit "
            << (first.isEmpty() ? QStringLiteral("-") : ms(maxOf(first))) << ", revisits "
            << p50Max(again) << "; rows on screen (maybe previous) " << p50Max(shown) << "\n";
    }
    out << "  refresh, until refreshed() (query + diff, before paint): "
        << p50Max(r.refreshWorkerMs) << "\n";
    QList<double> childRss;
    for (const auto &[kind, runs] :
         {std::pair{"new process", &r.processStarts}, std::pair{"new window", &r.windowStarts}}) {
        for (Status status : {Status::Pending, Status::Delivered}) {
            QList<double> window;
            QList<double> constructed;
            QList<double> firstFrame;
            QList<double> connected;
            for (const StartRun &run : *runs) {
                if (run.status == status) {
                    window << run.windowMs;
                    constructed << run.constructedMs;
                    firstFrame << run.firstFrameMs;
                    connected << run.connectedMs;
                }
            }
            out << "  " << kind << ", " << core::statusName(status)
                << " view, medians from the MainWindow constructor: constructed "
                << ms(percentile(constructed, 0.5)) << ", first frame "
                << ms(percentile(firstFrame, 0.5)) << ", connected "
                << ms(percentile(connected, 0.5)) << ", rows painted "
                << ms(percentile(window, 0.5)) << "\n";
        }
    }
    for (const StartRun &run : r.processStarts)
        childRss << run.rssMb;
    out << "  new-process console peak RSS: max " << QString::number(maxOf(childRss), 'f', 1)
        << " MB; bench process RSS ";
    if (r.stall.ticks > 0) {
        out << "before the dispatcher phase " << QString::number(r.rssBeforeStallMb, 'f', 1)
            << " MB, ";
    }
    out << "at the end " << QString::number(r.rssEndMb, 'f', 1) << " MB\n";
    if (r.scrolledRows > 0) {
        out << "  scrolling the delivered view to " << r.scrolledRows
            << " rows: bottom reached -> next page painted " << p50Max(r.scrollPageMs)
            << "; RSS then " << QString::number(r.rssAfterScrollMb, 'f', 1) << " MB\n";
    }
    if (r.stall.ticks > 0) {
        out << "  dispatcher phase: " << r.stallDelivered << " delivered ("
            << QString::number(double(r.stallDelivered) / std::max(0.001, r.stallSeconds), 'f', 0)
            << "/s), " << r.stallRetried << " retried, " << r.stallProduced << " produced; pending "
            << r.backlogBefore << " -> " << r.pendingAfter << "; " << r.stallCountsRefreshes
            << " count refreshes, " << r.stallPageRefreshes << " page refreshes, "
            << r.stallViewSwitches << " view switches\n";
        out << "  timer gaps: " << r.stall.ticks << " ticks, p50 " << ms(r.stall.p50GapMs)
            << ", p99 " << ms(r.stall.p99GapMs) << ", max " << ms(r.stall.maxGapMs) << "; "
            << r.stall.gapsOver16Ms << " over 16 ms, " << r.stall.gapsOver50Ms
            << " over 50 ms; GUI-thread CPU within the longest gap " << ms(r.stall.cpuInMaxGapMs)
            << ", most CPU within any gap " << ms(r.stall.maxCpuInGapMs) << "\n";
        out << "  slowest GUI-thread events (wall / CPU):\n";
        for (const SlowEvent &e : r.slowest) {
            out << "    " << ms(e.ms).rightJustified(10) << " / " << ms(e.cpuMs).rightJustified(9)
                << "  " << e.what << "\n";
        }
    }
    const auto statements = [&out](const char *title, const QList<store::StatementStat> &list) {
        if (list.isEmpty())
            return;
        out << "  " << title << " (pg_stat_statements, by total time):\n";
        for (const store::StatementStat &st : list)
            out << "    " << QString::number(st.totalMs, 'f', 0).rightJustified(7) << " ms total "
                << QString::number(st.calls).rightJustified(6) << " calls  mean "
                << QString::number(st.meanMs, 'f', 1).rightJustified(7) << " ms  max "
                << QString::number(st.maxMs, 'f', 1).rightJustified(7) << " ms  " << st.query
                << "\n";
    };
    statements("database work, start/switch/refresh phases", r.consoleStatements);
    statements("database work, dispatcher phase", r.stallStatements);
    for (const QString &note : r.notes)
        out << "  note: " << note << "\n";
    out << "  load average before/after: " << r.loadBefore << " / " << r.loadAfter << "\n";
    out.flush();
}

QJsonObject toJson(const BenchOptions &options, const BenchResults &r) {
    const QList<Check> checks = checkTargets(r);
    QJsonArray switches;
    for (const SwitchRun &s : r.switches) {
        switches.append(QJsonObject{{QStringLiteral("from"), core::statusName(s.from)},
                                    {QStringLiteral("to"), core::statusName(s.to)},
                                    {QStringLiteral("first_visit"), s.firstVisit},
                                    {QStringLiteral("shown_ms"), std::round(s.shownMs * 10) / 10},
                                    {QStringLiteral("fresh_ms"), std::round(s.freshMs * 10) / 10}});
    }
    const auto statementsJson = [](const QList<store::StatementStat> &list) {
        QJsonArray array;
        for (const store::StatementStat &st : list)
            array.append(QJsonObject{{QStringLiteral("calls"), st.calls},
                                     {QStringLiteral("total_ms"), std::round(st.totalMs)},
                                     {QStringLiteral("mean_ms"), std::round(st.meanMs * 10) / 10},
                                     {QStringLiteral("max_ms"), std::round(st.maxMs * 10) / 10},
                                     {QStringLiteral("query"), st.query}});
        return array;
    };
    QJsonArray slowest;
    for (const SlowEvent &e : r.slowest) {
        slowest.append(QJsonObject{{QStringLiteral("ms"), std::round(e.ms * 10) / 10},
                                   {QStringLiteral("cpu_ms"), std::round(e.cpuMs * 10) / 10},
                                   {QStringLiteral("event"), e.what}});
    }
    return QJsonObject{
        {QStringLiteral("pass"), bench::allPass(checks)},
        {QStringLiteral("figures"),
         bench::checksJson(checks, QStringLiteral("figure"), QStringLiteral("measured"))},
        {QStringLiteral("environment"), environment(options, r)},
        {QStringLiteral("start_process_pending_ms"), toArray(processStarts(r, Status::Pending))},
        {QStringLiteral("start_process_delivered_ms"),
         toArray(processStarts(r, Status::Delivered))},
        {QStringLiteral("start_window_pending_ms"), toArray(windowStarts(r, Status::Pending))},
        {QStringLiteral("start_window_delivered_ms"), toArray(windowStarts(r, Status::Delivered))},
        {QStringLiteral("switches"), switches},
        {QStringLiteral("refresh_ms"), toArray(r.refreshMs)},
        {QStringLiteral("refresh_until_refreshed_ms"), toArray(r.refreshWorkerMs)},
        {QStringLiteral("stall"),
         QJsonObject{{QStringLiteral("seconds"), r.stallSeconds},
                     {QStringLiteral("ticks"), r.stall.ticks},
                     {QStringLiteral("max_gap_ms"), r.stall.maxGapMs},
                     {QStringLiteral("p99_gap_ms"), r.stall.p99GapMs},
                     {QStringLiteral("p50_gap_ms"), r.stall.p50GapMs},
                     {QStringLiteral("gaps_over_16ms"), r.stall.gapsOver16Ms},
                     {QStringLiteral("gaps_over_50ms"), r.stall.gapsOver50Ms},
                     {QStringLiteral("cpu_in_max_gap_ms"), r.stall.cpuInMaxGapMs},
                     {QStringLiteral("max_cpu_in_gap_ms"), r.stall.maxCpuInGapMs},
                     {QStringLiteral("delivered"), r.stallDelivered},
                     {QStringLiteral("retried"), r.stallRetried},
                     {QStringLiteral("produced"), r.stallProduced},
                     {QStringLiteral("pending_before"), r.backlogBefore},
                     {QStringLiteral("pending_after"), r.pendingAfter},
                     {QStringLiteral("counts_refreshes"), r.stallCountsRefreshes},
                     {QStringLiteral("page_refreshes"), r.stallPageRefreshes},
                     {QStringLiteral("view_switches"), r.stallViewSwitches},
                     {QStringLiteral("slowest_events"), slowest}}},
        {QStringLiteral("statements_console_phases"), statementsJson(r.consoleStatements)},
        {QStringLiteral("statements_dispatcher_phase"), statementsJson(r.stallStatements)},
        {QStringLiteral("scroll"), QJsonObject{{QStringLiteral("rows"), r.scrolledRows},
                                               {QStringLiteral("page_ms"), toArray(r.scrollPageMs)},
                                               {QStringLiteral("rss_mb"), r.rssAfterScrollMb}}},
        {QStringLiteral("notes"), QJsonArray::fromStringList(r.notes)},
        {QStringLiteral("rss_peak_mb"), r.rssPeakMb},
        {QStringLiteral("rss_before_dispatcher_mb"), r.rssBeforeStallMb},
        {QStringLiteral("rss_end_mb"), r.rssEndMb},
    };
}

} // namespace outbox::consolebench
