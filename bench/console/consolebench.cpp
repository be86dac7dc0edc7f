#include "consolebench.h"

#include "bench/harness.h"
#include "console/model/eventtablemodel.h"
#include "console/model/statusnavmodel.h"
#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/eventview.h"
#include "console/widgets/mainwindow.h"
#include "devtools/inprocesspublisher.h"

#include <QDockWidget>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QTimer>

namespace outbox::consolebench {

namespace {

using core::Status;

core::Result<void> measureSwitches(BenchApplication &app, const BenchOptions &options,
                                   console::MainWindow *w, BenchResults &results) {
    constexpr Status order[] = {Status::Delivered, Status::Dead, Status::Processing,
                                Status::Pending};
    for (int round = 0; round < options.switchRounds; ++round) {
        for (Status to : order) {
            runFor(500); // an operator's pace: earlier work has a moment to finish
            const qint64 t0 = app.now();
            RowsProbe probe(&app, statusPage(w, to), t0);
            showStatusPage(w, to);
            auto fresh = probe.wait(
                true, QStringLiteral("switching to %1").arg(core::statusName(to)), kLoadTimeoutMs);
            if (!fresh)
                return fresh.error();
            results.samples[QStringLiteral("switch_fresh_ms")] << fresh.value();
        }
    }
    return {};
}

core::Result<void> measureRefreshes(BenchApplication &app, const BenchOptions &options,
                                    BenchCluster &cluster, console::MainWindow *w,
                                    BenchResults &results) {
    showStatusPage(w, Status::Delivered);
    console::EventView *view = statusPage(w, Status::Delivered);
    runFor(1000);
    for (int i = 0; i < options.refreshRuns; ++i) {
        // New deliveries, so every refresh has rows to insert at the top
        // (newest first) and to drop at the bottom, as in a live outbox.
        if (auto added = cluster.sql().addDelivered(20); !added)
            return added;
        runFor(300);
        RowsProbe probe(&app, view, app.now());
        triggerRefresh(w); // what the live tick does
        auto fresh =
            probe.wait(true, QStringLiteral("refreshing the delivered view"), kLoadTimeoutMs);
        if (!fresh)
            return fresh.error();
        results.samples[QStringLiteral("refresh_ms")] << fresh.value();
    }
    return {};
}

// An operator who leaves the console open on a page, live, and walks away:
// what that costs the database, per page, without and with a search typed
// into the filter bar.
core::Result<void> measureIdle(const BenchOptions &options, BenchCluster &cluster,
                               console::MainWindow *w, BenchResults &results,
                               const Progress &progress) {
    auto *search = w->findChild<QLineEdit *>(QStringLiteral("searchEdit"));
    if (!search)
        return failure(QStringLiteral("the filter bar has no search field (searchEdit)"));
    setLive(w, true);
    for (const bool searching : {false, true}) {
        search->setText(searching ? kIdleSearch : QString());
        for (Status page : {Status::Pending, Status::Processing, Status::Delivered, Status::Dead}) {
            IdleCost cost{page, searching, 0, {}};
            progress(QStringLiteral("a live console left open on %1 (%2 s)")
                         .arg(cost.key())
                         .arg(options.idleSeconds));
            showStatusPage(w, page);
            runFor(3000); // the page's first live refreshes: an operator's doing
            auto dbMs = dbMsPerSecond(cluster, options.idleSeconds * 1000);
            if (!dbMs)
                return dbMs.error();
            cost.dbMsPerS = dbMs.value();
            if (auto stats = cluster.sql().statementStats(8); stats)
                cost.statements = stats.value();
            results.idle << cost;
        }
    }
    search->clear();
    setLive(w, false);
    return {};
}

dispatch::PublisherFactory benchPublisher() {
    return [] {
        // One event in fifty fails once, like a flaky runner; the rest
        // are delivered at once (the dispatcher runs as fast as the
        // database lets it).
        return std::make_unique<devtools::InProcessPublisher>([](const store::ClaimedEvent &event) {
            if (event.attempts == 1 && qHash(event.id) % 50 == 0)
                return dispatch::PublishOutcome::retry(
                    event, QStringLiteral("HTTP 503 Service Unavailable: runner busy"), 503);
            return dispatch::PublishOutcome::delivered(event);
        });
    };
}

core::Result<void> measureStall(const BenchOptions &options, BenchCluster &cluster,
                                console::MainWindow *w, BenchResults &results,
                                const Progress &progress) {
    progress(QStringLiteral("adding a backlog of %1 due events").arg(options.backlog));
    if (auto added = cluster.sql().addBacklog(options.backlog); !added)
        return added;
    showStatusPage(w, Status::Pending);
    if (auto *dock = w->findChild<QDockWidget *>(QStringLiteral("dispatcherDock")))
        dock->show(); // its figures and chart repaint while it runs: part of the load
    setLive(w, true);
    triggerRefresh(w);
    runFor(2000);
    const auto pending = [&] {
        auto count = cluster.sql().count(QStringLiteral("pending"));
        return count ? count.value() : -1;
    };
    const qint64 pendingBefore = pending();
    results.rssBeforeStallMb = residentMb();

    console::DispatcherPanel *panel = w->findChild<console::DispatcherPanel *>();
    core::DispatcherConfig config;
    config.runnerUrl = QUrl(QStringLiteral("http://127.0.0.1:9/bench"));
    config.secrets = {QStringLiteral("whsec_YmVuY2gtc2VjcmV0LWJlbmNoLXNlY3JldA==")};
    config.concurrency = kConcurrency;
    config.batchSize = kBatchSize;
    panel->setConfig(config, false);
    panel->setPublisherFactory(benchPublisher());

    int countsRefreshes = 0;
    int pageRefreshes = 0;
    QObject context;
    QObject::connect(w->findChild<console::StatusNavModel *>(),
                     &console::StatusNavModel::countsApplied, &context, [&] { ++countsRefreshes; });
    for (Status status : {Status::Pending, Status::Processing, Status::Delivered, Status::Dead}) {
        QObject::connect(statusPage(w, status)->model(), &console::EventTableModel::refreshed,
                         &context, [&] { ++pageRefreshes; });
    }

    progress(QStringLiteral("dispatcher at full speed for %1 s, console live")
                 .arg(options.stallSeconds));
    // Ten ticks a second, one transaction each, as services enqueue (the
    // NOTIFYs of a transaction fold into one).
    bench::Producer producer(
        cluster.connInfo(),
        {{QStringLiteral("billing"), QStringLiteral("files"), QStringLiteral("identity")},
         {QStringLiteral("invoice.paid"), QStringLiteral("file.stored"),
          QStringLiteral("user.created")},
         std::max(1, kProducerRate / 10),
         100},
        core::Millis(100));
    StallMeter meter;
    meter.start();
    QElapsedTimer clock;
    clock.start();
    panel->start(); // pressing Start is part of the measured window
    producer.start();
    // An operator looking around while it runs: another page every 5 s.
    QTimer switcher;
    const Status cycle[] = {Status::Delivered, Status::Dead, Status::Processing, Status::Pending};
    int next = 0;
    QObject::connect(&switcher, &QTimer::timeout, &context, [&] {
        showStatusPage(w, cycle[next % 4]);
        ++next;
    });
    switcher.start(5000);
    runFor(options.stallSeconds * 1000);
    switcher.stop();
    meter.stop();
    const double seconds = double(clock.elapsed()) / 1000.0;
    const dispatch::DispatcherStats stats = panel->lastStats();
    producer.stop();
    QJsonObject stall = meter.figures();
    for (const auto &[key, value] :
         {std::pair{"seconds", QJsonValue(bench::rounded(seconds, 2))},
          {"delivered", stats.delivered},
          {"delivered_per_s", qRound64(double(stats.delivered) / std::max(0.001, seconds))},
          {"retried", stats.retried},
          {"produced", producer.produced()},
          {"pending_before", pendingBefore},
          {"counts_refreshes", countsRefreshes},
          {"page_refreshes", pageRefreshes},
          {"view_switches", next}})
        stall.insert(QLatin1String(key), value);
    if (!producer.lastError().isEmpty())
        results.notes << QStringLiteral("producer: ") + producer.lastError();
    if (panel->state() != dispatch::DispatcherState::Running &&
        panel->state() != dispatch::DispatcherState::Stopping) {
        return failure(QStringLiteral("the embedded dispatcher is not running (state %1); see "
                                      "its log in the dispatcher panel")
                           .arg(dispatch::stateName(panel->state())));
    }

    progress(QStringLiteral("stopping the dispatcher"));
    panel->stop();
    if (!waitUntil([&] { return !panel->isRunning(); }, kLoadTimeoutMs)) {
        return failure(QStringLiteral("the embedded dispatcher did not stop within %1 s")
                           .arg(kLoadTimeoutMs / 1000));
    }
    triggerRefresh(w);
    runFor(1000);
    stall.insert(QStringLiteral("pending_after"), pending());
    results.stall = stall;
    return {};
}
} // namespace

core::Result<void> startCluster(BenchCluster &cluster, const QStringList &settings) {
    devtools::EmbeddedPostgres::Options options;
    options.serverSettings =
        QStringList{QStringLiteral("shared_preload_libraries=pg_stat_statements"),
                    QStringLiteral("pg_stat_statements.track=top")} +
        settings;
    auto started = cluster.start(options);
    return started ? cluster.sql().enableStatementStats() : started;
}

core::Result<double> dbMsPerSecond(BenchCluster &cluster, int ms) {
    if (auto reset = cluster.sql().resetStatementStats(); !reset)
        return reset.error();
    QElapsedTimer watch;
    watch.start();
    runFor(ms);
    auto spent = cluster.sql().statementTimeMs();
    if (!spent)
        return spent.error();
    return spent.value() * 1000.0 / double(watch.elapsed());
}

QString IdleCost::key() const {
    return core::statusName(page) + (search ? QStringLiteral("_search") : QString());
}

core::Result<BenchResults> runBench(BenchApplication &app, const BenchOptions &options,
                                    const Progress &progress) {
    BenchResults results;
    BenchCluster cluster;
    progress(QStringLiteral("starting PostgreSQL"));
    if (auto started = startCluster(cluster); !started)
        return started.error();
    results.serverVersion = cluster.serverVersion();
    progress(QStringLiteral("loading %1 delivered + %2 dead events")
                 .arg(options.size.delivered)
                 .arg(options.size.dead));
    QElapsedTimer loading;
    loading.start();
    auto facts = cluster.sql().loadDataset(options.size);
    if (!facts)
        return facts.error();
    results.data = facts.value();
    results.data.insert(QStringLiteral("load_s"), bench::rounded(loading.elapsed() / 1000.0, 1));
    const core::ConnInfo info = cluster.connInfo();

    results.data.insert(QStringLiteral("load_average_before"), bench::loadAverage());
    if (auto done = measureStarts(options, cluster, results, progress); !done)
        return done.error();

    // One window for the rest, as an operator would keep it open.
    if (auto idle = cluster.sql().waitIdle(kIdleTimeoutMs); !idle)
        return idle.error();
    BenchWindow window;
    auto opened = openWindow(app, window, info, Status::Pending);
    if (!opened)
        return opened.error();
    console::MainWindow *w = window.window();
    setLive(w, false); // the phases below trigger every refresh themselves
    progress(QStringLiteral("switching status views"));
    if (auto done = measureSwitches(app, options, w, results); !done)
        return done.error();
    progress(QStringLiteral("refreshing the delivered view"));
    if (auto done = measureRefreshes(app, options, cluster, w, results); !done)
        return done.error();
    if (options.idleSeconds > 0) {
        if (auto done = measureIdle(options, cluster, w, results, progress); !done)
            return done.error();
    }
    if (options.stallSeconds > 0) {
        if (auto done = measureStall(options, cluster, w, results, progress); !done)
            return done.error();
    }
    results.data.insert(QStringLiteral("load_average_after"), bench::loadAverage());
    results.rssEndMb = residentMb();
    results.rssPeakMb = peakResidentMb();
    window.destroy();
    runFor(100);
    return results;
}
} // namespace outbox::consolebench
