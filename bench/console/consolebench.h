#pragma once

#include "bench/harness.h"
#include "bench/report.h"
#include "console/model/consolesettings.h"
#include "console/widgets/mainwindow.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "core/status.h"
#include "instruments.h"
#include "store/benchqueries.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTextStream>

#include <functional>
#include <memory>

namespace outbox::consolebench {

using bench::BenchCluster;
using bench::Check;
using bench::failure;
using bench::peakResidentMb;
using bench::residentMb;

// How long any one wait of the benchmark may take before it gives up.
constexpr int kLoadTimeoutMs = 60000;
constexpr int kIdleTimeoutMs = 120000;

// The embedded dispatcher of the dispatcher phase and its producer.
constexpr int kConcurrency = 64;
constexpr int kBatchSize = 100;
constexpr int kProducerRate = 500; // events/s

// Not the dispatcher benchmark's bench::BenchOptions: none of these (data
// set, start runs, switch rounds, GUI stall phase) means anything there.
struct BenchOptions {
    store::DatasetSize size;
    qint64 backlog = 200000; // due pending events for the dispatcher phase
    int startRuns = 5;       // new processes per view
    int switchRounds = 5;    // rounds through the four status pages
    int refreshRuns = 20;
    int stallSeconds = 20;
    // A live console left open on each status page, without and with a
    // search (kIdleSearch): this long each.
    int idleSeconds = 10;
};

// The search of the idle phase's second pass on each page: words in topics
// and dedupe keys, so the filter reads every row of the page's set.
inline const QString kIdleSearch = QStringLiteral("invoice");

// The idle cost of one page: database time per second of a live console
// nobody touches (sum of pg_stat_statements total_exec_time) and the
// statements it ran.
struct IdleCost {
    core::Status page = core::Status::Pending;
    bool search = false;
    double dbMsPerS = 0;
    QJsonArray statements;
    QString key() const; // "dead", "dead_search"
};

struct BenchResults {
    // The data and the machine's load, for the report's environment:
    // BenchQueries::loadDataset()'s figures, load_s (seconds to load), and
    // load_average_before and _after (/proc/loadavg: other work on the machine).
    QJsonObject data;
    QString serverVersion;
    // Samples under their JSON keys, in milliseconds: start_process_<view>_ms
    // (fork/exec of a new process -> rows painted) for the pending and the
    // delivered view, switch_fresh_ms, refresh_ms; and
    // start_process_rss_mb (peak resident set size of each new process).
    QMap<QString, QList<double>> samples;

    // The dispatcher phase: StallMeter::figures() and the phase's counts
    // (seconds, delivered and delivered_per_s, retried, produced,
    // pending_before and pending_after, counts_refreshes, page_refreshes,
    // view_switches); empty when it did not run.
    QJsonObject stall;

    // The idle phase: one figure per page, without and with a search.
    QList<IdleCost> idle;

    QStringList notes; // problems in phases without a target

    double rssPeakMb = 0;
    double rssBeforeStallMb = 0;
    double rssEndMb = 0;
};

using Progress = std::function<void(const QString &step)>;

// Runs every phase in this process (plus the cold-start child processes)
// against a throwaway cluster. Fails only when something could not run at
// all; figures that miss their targets are reported, not errors.
core::Result<BenchResults> runBench(BenchApplication &app, const BenchOptions &options,
                                    const Progress &progress);

// The child side of the cold-start measurement: opens the console on `info`
// showing `status` and prints one JSON line with the figures. `t0Ns` is the
// steady clock (CLOCK_MONOTONIC) of the parent right before it started us.
int runChildStart(BenchApplication &app, const core::ConnInfo &info, core::Status status,
                  qint64 t0Ns);

// The console's main window with settings of its own (a fresh INI file in a
// temporary directory): every run starts like a first start, and the
// user's real settings are never read or written.
class BenchWindow final {
public:
    BenchWindow()
        : m_qsettings(m_dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat)
        , m_settings(&m_qsettings) {}
    ~BenchWindow() { destroy(); }
    Q_DISABLE_COPY_MOVE(BenchWindow)

    console::MainWindow *create() { // the real MainWindow, default options
        m_window = std::make_unique<console::MainWindow>(&m_settings, console::MainWindowOptions{});
        return m_window.get();
    }
    console::MainWindow *window() const { return m_window.get(); }
    console::ConsoleSettings *settings() { return &m_settings; }
    void destroy() { m_window.reset(); }

private:
    QTemporaryDir m_dir;
    QSettings m_qsettings;
    console::ConsoleSettings m_settings;
    std::unique_ptr<console::MainWindow> m_window;
};

// Starts the cluster with pg_stat_statements (and `settings`) and enables it.
core::Result<void> startCluster(BenchCluster &cluster, const QStringList &settings = {});
// The statement time per second of wall time (pg_stat_statements) while the
// event loop runs for `ms` milliseconds.
core::Result<double> dbMsPerSecond(BenchCluster &cluster, int ms);

// The bench drives the window as an operator does, through what the window
// shows (found by object name): a status tab, View > Refresh, the Live button.
console::EventView *statusPage(console::MainWindow *w, core::Status status);
void showStatusPage(console::MainWindow *w, core::Status status);
void triggerRefresh(console::MainWindow *w);
void setLive(console::MainWindow *w, bool live);

// Opens a MainWindow on `info` showing `status`, the way outbox-console
// --db does (connectTo, then show), and waits for its rows on screen:
// milliseconds from the MainWindow constructor call.
core::Result<double> openWindow(BenchApplication &app, BenchWindow &window,
                                const core::ConnInfo &info, core::Status status);

// Start to first painted rows: new processes (this program again, in
// --child-start mode) on the Pending and the Delivered view.
core::Result<void> measureStarts(const BenchOptions &options, BenchCluster &cluster,
                                 BenchResults &results, const Progress &progress);

// The targets of the console, checked against one run's figures.
QList<Check> checkTargets(const BenchResults &results);
void printHuman(QTextStream &out, const BenchOptions &options, const BenchResults &results);
QJsonObject toJson(const BenchOptions &options, const BenchResults &results);

} // namespace outbox::consolebench
