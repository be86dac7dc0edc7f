#include "fleetphase.h"

#include "console/model/fleetmodel.h"
#include "console/model/fleetwatcher.h"
#include "console/widgets/fleetwindow.h"
#include "store/migrator.h"
#include "store/session.h"

#include <QDir>
#include <QHostAddress>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTreeView>

#include <cerrno>
#include <cstring>
#include <sched.h>

namespace outbox::consolebench {

namespace {

constexpr int kWatchSeconds = 20; // the stall and memory phase
constexpr int kCostSeconds = 20;  // each cost phase

QString cpuList(const QList<int> &cpus) {
    QStringList out;
    for (int cpu : cpus) {
        out << QString::number(cpu);
    }
    return out.join(QLatin1Char(','));
}

// A loopback port where nothing listens (bound, then released).
int closedPort() {
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0)) {
        return 1;
    }
    const int port = server.serverPort();
    server.close();
    return port;
}

struct FleetFigures {
    double firstRowsMs = -1;   // window constructed -> tree painted with every row
    double allAnsweredMs = -1; // ... every reachable database no longer pending
    QJsonObject startStall;    // from the constructor call until every database answered
    QStringList startGaps;     // its gaps over 50 ms: what the GUI thread was doing
    QJsonArray startGapsJson;
    QString cpus;      // where the window and the cluster ran, with --server-cpus
    QJsonObject stall; // the watch that follows
    double rssMb = 0;
    double rssPeakMb = 0;
    double fleetDbMsPerS = 0; // every database watched, statement time per second
    double oneDbMsPerS = 0;   // the loaded database alone
    QJsonArray oneDbStatements;
    int databases = 0;
    int unreachable = 0;
    QJsonObject data;
};

core::Result<QList<store::FleetEntry>> makeFleet(BenchCluster &cluster, int databases,
                                                 int unreachable, const Progress &progress) {
    QList<store::FleetEntry> fleet;
    const core::ConnInfo loaded = cluster.connInfo();
    fleet.append({QStringLiteral("loaded"), loaded, QStringLiteral("bench"), {}});
    progress(QStringLiteral("creating %1 more databases").arg(databases - 1 - unreachable));
    if (auto made = cluster.sql().exec(QStringLiteral("CREATE DATABASE fleet_template"),
                                       QStringLiteral("creating the fleet's template"));
        !made) {
        return made.error();
    }
    {
        core::ConnInfo info = loaded;
        info.dbname = QStringLiteral("fleet_template");
        store::Session session(info, {.applicationName = QStringLiteral("outbox-bench-setup")});
        if (auto opened = session.open(); !opened) {
            return opened.error();
        }
        store::Migrator migrator(session);
        if (auto migrated = migrator.migrate(); !migrated) {
            return migrated.error();
        }
    }
    for (int i = 1; i < databases - unreachable; ++i) {
        const QString name = QStringLiteral("fleet_%1").arg(i, 3, 10, QLatin1Char('0'));
        if (auto made = cluster.sql().exec(
                QStringLiteral("CREATE DATABASE %1 TEMPLATE fleet_template").arg(name),
                QStringLiteral("creating a fleet database"));
            !made) {
            return made.error();
        }
        core::ConnInfo info = loaded;
        info.dbname = name;
        fleet.append({name, info, QStringLiteral("group %1").arg(i % 5), {}});
    }
    for (int i = 0; i < unreachable; ++i) {
        fleet.append({QStringLiteral("gone_%1").arg(i),
                      core::ConnInfo::parse(
                          QStringLiteral("host=127.0.0.1 port=%1 dbname=x").arg(closedPort()))
                          .value(),
                      QStringLiteral("unreachable"),
                      {}});
    }
    return fleet;
}

// Moves the cluster (the postmaster, the processes it started so far, and so
// every backend it starts later) to `cpus`. Returns where the window and the
// cluster run, for the report.
core::Result<QString> pinServer(qint64 postmaster, const QList<int> &cpus) {
    if (postmaster <= 0) {
        return failure(QStringLiteral("--server-cpus: the cluster's process id is unknown"));
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) {
        CPU_SET(cpu, &set);
    }
    QList<qint64> pids{postmaster};
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
        if (!number || !stat.open(QIODevice::ReadOnly)) {
            continue;
        }
        // "pid (comm) state ppid ...": the fields after the command's ')'.
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        if (fields.size() > 1 && fields[1].toLongLong() == postmaster) {
            pids << pid;
        }
    }
    for (qint64 pid : std::as_const(pids)) {
        if (sched_setaffinity(pid_t(pid), sizeof set, &set) != 0) {
            return failure(QStringLiteral("--server-cpus: cannot move process %1 to CPUs %2: %3")
                               .arg(pid)
                               .arg(cpuList(cpus), QString::fromLocal8Bit(std::strerror(errno))));
        }
    }
    cpu_set_t own;
    CPU_ZERO(&own);
    QList<int> mine;
    if (sched_getaffinity(0, sizeof own, &own) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (CPU_ISSET(cpu, &own)) {
                mine << cpu;
            }
        }
    }
    return QStringLiteral("the window on CPUs %1, the cluster (%2 processes) on CPUs %3")
        .arg(cpuList(mine))
        .arg(pids.size())
        .arg(cpuList(cpus));
}

// Statement time per second of wall time while `seconds` pass.
core::Result<double> dbMsPerSecond(BenchCluster &cluster, int seconds) {
    if (auto reset = cluster.sql().resetStatementStats(); !reset) {
        return reset.error();
    }
    QElapsedTimer watch;
    watch.start();
    runFor(seconds * 1000);
    auto ms = cluster.sql().statementTimeMs();
    if (!ms) {
        return ms.error();
    }
    return ms.value() * 1000.0 / double(watch.elapsed());
}

core::Result<FleetFigures> measure(BenchApplication &app, const BenchOptions &options,
                                   int databases, const Progress &progress) {
    FleetFigures f;
    f.databases = databases;
    f.unreachable = std::max(1, databases / 10);
    BenchCluster cluster;
    progress(QStringLiteral("starting PostgreSQL"));
    devtools::EmbeddedPostgres::Options settings;
    settings.serverSettings = {QStringLiteral("shared_preload_libraries=pg_stat_statements"),
                               QStringLiteral("pg_stat_statements.track=top"),
                               QStringLiteral("max_connections=%1").arg(databases * 2 + 50)};
    if (auto started = cluster.start(settings); !started) {
        return started.error();
    }
    if (auto enabled = cluster.sql().enableStatementStats(); !enabled) {
        return enabled.error();
    }
    if (!options.serverCpus.isEmpty()) {
        auto pinned = pinServer(cluster.serverProcessId(), options.serverCpus);
        if (!pinned) {
            return pinned.error();
        }
        f.cpus = pinned.value();
    }
    progress(QStringLiteral("loading %1 delivered + %2 dead events into one database")
                 .arg(options.size.delivered)
                 .arg(options.size.dead));
    auto facts = cluster.sql().loadDataset(options.size);
    if (!facts) {
        return facts.error();
    }
    f.data = facts.value();
    auto fleet = makeFleet(cluster, databases, f.unreachable, progress);
    if (!fleet) {
        return fleet.error();
    }

    progress(QStringLiteral("opening the fleet window on %1 databases").arg(databases));
    QTemporaryDir dir;
    QSettings qsettings(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
    console::ConsoleSettings consoleSettings(&qsettings);
    GapTrace trace;
    trace.install();
    StallMeter meter;
    meter.start();
    const ThreadTimes origin = ThreadTimes::now();
    const qint64 t0 = app.now();
    std::optional<qint64> painted;
    QTreeView *view = nullptr;
    app.setPaintHook([&](QWidget *widget) {
        if (!painted && view && widget == view->viewport() && view->model()->rowCount() > 0) {
            painted = app.now();
        }
    });
    auto window = std::make_unique<console::FleetWindow>(&consoleSettings, fleet.value(),
                                                         console::MainWindowOptions{});
    trace.step(QStringLiteral("the FleetWindow constructor"), origin);
    view = window->findChild<QTreeView *>(QStringLiteral("fleetView"));
    const ThreadTimes showing = ThreadTimes::now();
    window->show();
    trace.step(QStringLiteral("show()"), showing);
    if (!waitUntil([&] { return painted.has_value(); }, kLoadTimeoutMs)) {
        return failure(QStringLiteral("the fleet's rows were not painted"));
    }
    f.firstRowsMs = double(*painted - t0) / 1e6;
    auto *watcher = window->findChild<console::FleetWatcher *>();
    const auto answered = [&] {
        for (int i = 0; i < watcher->size(); ++i) {
            const auto &m = watcher->member(i);
            if (m.state == store::FleetState::Pending && !m.entry.name.startsWith(u"gone_")) {
                return false;
            }
        }
        return true;
    };
    if (!waitUntil(answered, kLoadTimeoutMs)) {
        return failure(QStringLiteral("not every reachable database answered"));
    }
    f.allAnsweredMs = double(app.now() - t0) / 1e6;
    meter.stop();
    trace.uninstall();
    f.startStall = meter.figures();
    f.startGaps = trace.lines(origin.wallNs);
    f.startGapsJson = trace.json(origin.wallNs);
    progress(QStringLiteral("watching %1 databases for %2 s").arg(databases).arg(kWatchSeconds));
    StallMeter watchMeter;
    watchMeter.start();
    runFor(kWatchSeconds * 1000);
    watchMeter.stop();
    app.setPaintHook({});
    f.stall = watchMeter.figures();
    f.rssMb = residentMb();
    f.rssPeakMb = peakResidentMb();

    progress(QStringLiteral("the server's cost of the whole fleet (%1 s)").arg(kCostSeconds));
    auto all = dbMsPerSecond(cluster, kCostSeconds);
    if (!all) {
        return all.error();
    }
    f.fleetDbMsPerS = all.value();
    window.reset();

    progress(QStringLiteral("the server's cost of watching the loaded database (%1 s)")
                 .arg(kCostSeconds));
    console::FleetWatcher one({fleet->first()});
    one.start();
    runFor(3000); // its first readings: the error grouping's first run
    auto single = dbMsPerSecond(cluster, kCostSeconds);
    if (!single) {
        return single.error();
    }
    f.oneDbMsPerS = single.value();
    if (auto stats = cluster.sql().statementStats(6); stats) {
        f.oneDbStatements = stats.value();
    }
    return f;
}

QList<Check> checks(const FleetFigures &f) {
    const double maxGap = f.stall.value(QLatin1String("max_gap_ms")).toDouble();
    const double corePercent = f.oneDbMsPerS / 10.0; // ms per s -> % of one core
    return {
        {QStringLiteral("first rows painted"),
         QStringLiteral("%1 ms").arg(f.firstRowsMs, 0, 'f', 0), QStringLiteral("<= 1000 ms"),
         f.firstRowsMs <= 1000},
        {QStringLiteral("longest GUI stall, watching"),
         QStringLiteral("%1 ms").arg(maxGap, 0, 'f', 1), QStringLiteral("<= 50 ms"), maxGap <= 50},
        {QStringLiteral("resident memory"), QStringLiteral("%1 MB").arg(f.rssPeakMb, 0, 'f', 0),
         QStringLiteral("< 300 MB"), f.rssPeakMb < 300},
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
    QTextStream out(stdout);
    if (!figures) {
        std::fputs(qPrintable(QStringLiteral("outbox-console-bench: ") + figures.errorMessage() +
                              QLatin1Char('\n')),
                   stderr);
        return 2;
    }
    const FleetFigures &f = figures.value();
    const QList<Check> list = checks(f);
    if (json) {
        QJsonObject o{{QStringLiteral("databases"), f.databases},
                      {QStringLiteral("unreachable"), f.unreachable},
                      {QStringLiteral("data"), f.data},
                      {QStringLiteral("first_rows_ms"), bench::rounded(f.firstRowsMs, 1)},
                      {QStringLiteral("all_answered_ms"), bench::rounded(f.allAnsweredMs, 1)},
                      {QStringLiteral("stall"), f.stall},
                      {QStringLiteral("start_stall"), f.startStall},
                      {QStringLiteral("start_gaps"), f.startGapsJson},
                      {QStringLiteral("cpus"), f.cpus},
                      {QStringLiteral("rss_mb"), bench::rounded(f.rssMb, 1)},
                      {QStringLiteral("rss_peak_mb"), bench::rounded(f.rssPeakMb, 1)},
                      {QStringLiteral("fleet_db_ms_per_s"), bench::rounded(f.fleetDbMsPerS, 3)},
                      {QStringLiteral("one_db_ms_per_s"), bench::rounded(f.oneDbMsPerS, 3)},
                      {QStringLiteral("one_db_statements"), f.oneDbStatements},
                      {QStringLiteral("checks"), bench::checksJson(list, QStringLiteral("figure"),
                                                                   QStringLiteral("measured"))}};
        out << QJsonDocument(o).toJson(QJsonDocument::Indented);
        return 0;
    }
    out << "Fleet: " << f.databases << " databases in one cluster (" << f.unreachable
        << " unreachable: closed ports); one holds "
        << f.data.value(QLatin1String("delivered")).toInteger() << " delivered + "
        << f.data.value(QLatin1String("dead")).toInteger() << " dead events\n";
    if (!f.cpus.isEmpty()) {
        out << "Pinned: " << f.cpus << "\n";
    }
    out << "\n";
    bench::printChecks(out, list,
                       {QStringLiteral("figure"), QStringLiteral("measured"),
                        QStringLiteral("target"), QStringLiteral("result")});
    out << "\nDetails\n"
        << "  every reachable database answered after " << qRound(f.allAnsweredMs) << " ms\n"
        << "  longest GUI stall while opening (window, threads, first paint): "
        << QString::number(f.startStall.value(QLatin1String("max_gap_ms")).toDouble(), 'f', 1)
        << " ms, " << f.startStall.value(QLatin1String("gaps_over_50ms")).toInt()
        << " gaps over 50 ms (each, or else the longest: its length, the GUI thread's time on "
           "a CPU, waiting for one, blocked; what it handled):\n";
    for (const QString &gap : f.startGaps) {
        out << "    " << gap << "\n";
    }
    out << "  GUI gaps over 16 ms while watching: "
        << f.stall.value(QLatin1String("gaps_over_16ms")).toInt()
        << ", over 50 ms: " << f.stall.value(QLatin1String("gaps_over_50ms")).toInt() << "\n"
        << "  resident memory at the end of the watch: " << qRound(f.rssMb) << " MB\n"
        << "  statement time of the whole fleet: " << QString::number(f.fleetDbMsPerS, 'f', 2)
        << " ms/s ("
        << QString::number(f.fleetDbMsPerS / std::max(1, f.databases - f.unreachable), 'f', 3)
        << " ms/s per database)\n"
        << "  statement time of the loaded database alone: "
        << QString::number(f.oneDbMsPerS, 'f', 3) << " ms/s\n";
    out.flush();
    return bench::allPass(list) ? 0 : 1;
}

} // namespace outbox::consolebench
