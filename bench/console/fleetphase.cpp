#include "fleetphase.h"

#include "console/model/fleetwatcher.h"
#include "console/widgets/fleetwindow.h"
#include "devtools/localport.h"
#include "store/migrator.h"
#include "store/session.h"

#include <QJsonDocument>
#include <QTreeView>

namespace outbox::consolebench {

namespace {

constexpr int kWatchSeconds = 20; // the stall and memory phase
constexpr int kCostSeconds = 20;  // each cost phase

// The loaded database, `databases - unreachable - 1` empty migrated ones and
// `unreachable` closed ports.
core::Result<QList<store::FleetEntry>> makeFleet(BenchCluster &cluster, int databases,
                                                 int unreachable) {
    const core::ConnInfo loaded = cluster.connInfo();
    QList<store::FleetEntry> fleet{{QStringLiteral("loaded"), loaded, QStringLiteral("bench"), {}}};
    auto made = cluster.sql().exec(QStringLiteral("CREATE DATABASE fleet_template"),
                                   QStringLiteral("creating the fleet's template"));
    core::ConnInfo info = loaded;
    info.dbname = QStringLiteral("fleet_template");
    store::Session session(info, {.applicationName = QStringLiteral("outbox-bench-setup")});
    if (made)
        made = session.open();
    if (made) {
        auto migrated = store::Migrator(session).migrate();
        made = migrated ? core::Result<void>() : migrated.error();
    }
    session.close();
    for (int i = 1; made && i < databases - unreachable; ++i) {
        info.dbname = QStringLiteral("fleet_%1").arg(i, 3, 10, QLatin1Char('0'));
        made = cluster.sql().exec(
            QStringLiteral("CREATE DATABASE %1 TEMPLATE fleet_template").arg(info.dbname),
            QStringLiteral("creating a fleet database"));
        fleet.append({info.dbname, info, QStringLiteral("group %1").arg(i % 5), {}});
    }
    if (!made)
        return made.error();
    for (int i = 0; i < unreachable; ++i)
        fleet.append(
            {QStringLiteral("gone_%1").arg(i),
             core::ConnInfo::parse(
                 QStringLiteral("host=127.0.0.1 port=%1 dbname=x").arg(devtools::closedPort()))
                 .value(),
             QStringLiteral("unreachable"),
             {}});
    return fleet;
}

// The figures under their JSON keys.
core::Result<QJsonObject> measure(BenchApplication &app, const BenchOptions &options, int databases,
                                  const Progress &progress) {
    const int unreachable = std::max(1, databases / 10);
    BenchCluster cluster;
    progress(QStringLiteral("starting PostgreSQL"));
    if (auto started =
            startCluster(cluster, {QStringLiteral("max_connections=%1").arg(databases * 2 + 50)});
        !started)
        return started.error();
    progress(QStringLiteral("loading %1 delivered + %2 dead events into one database, creating "
                            "%3 more databases")
                 .arg(options.size.delivered)
                 .arg(options.size.dead)
                 .arg(databases - 1 - unreachable));
    auto data = cluster.sql().loadDataset(options.size);
    if (!data)
        return data.error();
    auto fleet = makeFleet(cluster, databases, unreachable);
    if (!fleet)
        return fleet.error();

    progress(QStringLiteral("opening the fleet window on %1 databases").arg(databases));
    BenchWindow settings; // its settings only
    StallMeter meter;
    meter.start();
    const qint64 t0 = app.now();
    std::optional<qint64> painted;
    QTreeView *view = nullptr;
    app.setPaintHook([&](QWidget *widget) {
        if (!painted && view && widget == view->viewport() && view->model()->rowCount() > 0)
            painted = app.now();
    });
    auto window = std::make_unique<console::FleetWindow>(settings.settings(), fleet.value(),
                                                         console::MainWindowOptions{});
    view = window->findChild<QTreeView *>(QStringLiteral("fleetView"));
    window->show();
    if (!waitUntil([&] { return painted.has_value(); }, kLoadTimeoutMs))
        return failure(QStringLiteral("the fleet's rows were not painted"));
    const double firstRowsMs = double(*painted - t0) / 1e6;
    const auto *watcher = window->findChild<console::FleetWatcher *>();
    const auto answered = [&] {
        for (int i = 0; i < watcher->size(); ++i) {
            const auto &m = watcher->member(i);
            if (m.state == store::FleetState::Pending && !m.entry.name.startsWith(u"gone_"))
                return false;
        }
        return true;
    };
    if (!waitUntil(answered, kLoadTimeoutMs))
        return failure(QStringLiteral("not every reachable database answered"));
    const double allAnsweredMs = double(app.now() - t0) / 1e6;
    meter.stop();
    QJsonObject f{{QStringLiteral("databases"), databases},
                  {QStringLiteral("unreachable"), unreachable},
                  {QStringLiteral("data"), data.value()},
                  {QStringLiteral("first_rows_ms"), bench::rounded(firstRowsMs, 1)},
                  {QStringLiteral("all_answered_ms"), bench::rounded(allAnsweredMs, 1)},
                  {QStringLiteral("start_stall"), meter.figures()}};

    progress(QStringLiteral("watching %1 databases for %2 s").arg(databases).arg(kWatchSeconds));
    meter.start();
    runFor(kWatchSeconds * 1000);
    meter.stop();
    app.setPaintHook({});
    f.insert(QStringLiteral("stall"), meter.figures());
    f.insert(QStringLiteral("rss_mb"), bench::rounded(residentMb(), 1));
    f.insert(QStringLiteral("rss_peak_mb"), bench::rounded(peakResidentMb(), 1));

    progress(QStringLiteral("the server's cost of the whole fleet (%1 s)").arg(kCostSeconds));
    auto all = dbMsPerSecond(cluster, kCostSeconds * 1000);
    if (!all)
        return all.error();
    window.reset();
    progress(QStringLiteral("the server's cost of watching the loaded database (%1 s)")
                 .arg(kCostSeconds));
    console::FleetWatcher one({fleet->first()});
    one.start();
    runFor(3000); // its first readings: the error grouping's first run
    auto single = dbMsPerSecond(cluster, kCostSeconds * 1000);
    if (!single)
        return single.error();
    f.insert(QStringLiteral("fleet_db_ms_per_s"), bench::rounded(all.value(), 3));
    f.insert(QStringLiteral("one_db_ms_per_s"), bench::rounded(single.value(), 3));
    if (auto stats = cluster.sql().statementStats(6); stats)
        f.insert(QStringLiteral("one_db_statements"), stats.value());
    return f;
}

QList<Check> checks(const QJsonObject &f) {
    const auto at = [&f](const char *key) { return f.value(QLatin1String(key)).toDouble(); };
    const double maxGap = f.value(QLatin1String("stall"))[QLatin1String("max_gap_ms")].toDouble();
    const double corePercent = at("one_db_ms_per_s") / 10.0; // ms per s -> % of one core
    return {
        {QStringLiteral("first rows painted"), bench::ms(at("first_rows_ms"), 0),
         QStringLiteral("<= 1000 ms"), at("first_rows_ms") <= 1000},
        {QStringLiteral("longest GUI stall, watching"), bench::ms(maxGap, 1),
         QStringLiteral("<= 50 ms"), maxGap <= 50},
        {QStringLiteral("resident memory"),
         QStringLiteral("%1 MB").arg(at("rss_peak_mb"), 0, 'f', 0), QStringLiteral("< 300 MB"),
         at("rss_peak_mb") < 300},
        {QStringLiteral("server cost of one database"),
         QStringLiteral("%1 % of a core").arg(corePercent, 0, 'f', 3), QStringLiteral("< 0.5 %"),
         corePercent < 0.5},
    };
}

} // namespace

int runFleetBench(BenchApplication &app, const BenchOptions &options, int databases, bool json) {
    auto figures = measure(app, options, databases, [](const QString &step) {
        std::fputs(qPrintable(QStringLiteral("... ") + step + QLatin1Char('\n')), stderr);
    });
    if (!figures) {
        std::fputs(qPrintable(QStringLiteral("outbox-console-bench: ") + figures.errorMessage() +
                              QLatin1Char('\n')),
                   stderr);
        return 2;
    }
    QJsonObject f = figures.value();
    const QList<Check> list = checks(f);
    f.insert(QStringLiteral("checks"),
             bench::checksJson(list, QStringLiteral("figure"), QStringLiteral("measured")));
    QTextStream out(stdout);
    if (json) {
        out << QJsonDocument(f).toJson(QJsonDocument::Indented);
        return 0;
    }
    out << "Fleet: " << databases << " databases in one cluster, "
        << f.value(QLatin1String("unreachable")).toInt()
        << " of them unreachable (closed ports)\n\n";
    bench::printChecks(out, list,
                       {QStringLiteral("figure"), QStringLiteral("measured"),
                        QStringLiteral("target"), QStringLiteral("result")});
    out << "\n";
    bench::printFigures(out, f, {QStringLiteral("checks"), QStringLiteral("one_db_statements")});
    out.flush();
    return bench::allPass(list) ? 0 : 1;
}

} // namespace outbox::consolebench
