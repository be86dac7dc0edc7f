#include "console/widgets/eventview.h"
#include "console/widgets/mainwindow.h"
#include "consolebench.h"

#include <QAction>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTabWidget>
#include <QToolButton>

#include <cstdio>

namespace outbox::consolebench {

using core::Status;

namespace {

// The child's figures: process_to_rows_ms, window_to_rows_ms, rss_peak_mb.
core::Result<QJsonObject> startChild(const core::ConnInfo &info, Status status) {
    QProcess child;
    child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    const qint64 t0 = bench::steadyNowNs();
    // This program again, in --child-start mode.
    child.start(QCoreApplication::applicationFilePath(),
                {QStringLiteral("--child-start"), QStringLiteral("--db"), info.toKeyValue(),
                 QStringLiteral("--view"), core::statusName(status), QStringLiteral("--t0"),
                 QString::number(t0)});
    if (!child.waitForFinished(kLoadTimeoutMs + 10000)) {
        child.kill();
        child.waitForFinished();
        return failure(
            QStringLiteral("the cold-start child did not finish: %1").arg(child.errorString()));
    }
    const QList<QByteArray> lines = child.readAllStandardOutput().trimmed().split('\n');
    const QJsonObject json = QJsonDocument::fromJson(lines.constLast()).object();
    if (child.exitCode() != 0 || json.isEmpty()) {
        return failure(QStringLiteral("the cold-start child failed (exit code %1): %2")
                           .arg(child.exitCode())
                           .arg(QString::fromUtf8(lines.constLast())));
    }
    return json;
}

} // namespace

console::EventView *statusPage(console::MainWindow *w, Status status) {
    return w->findChild<console::EventView *>(QStringLiteral("eventView_") +
                                              core::statusName(status));
}

void showStatusPage(console::MainWindow *w, Status status) {
    w->findChild<QTabWidget *>(QStringLiteral("statusTabs"))
        ->setCurrentWidget(statusPage(w, status));
}

void triggerRefresh(console::MainWindow *w) {
    w->findChild<QAction *>(QStringLiteral("refreshAction"))->trigger();
}

void setLive(console::MainWindow *w, bool live) {
    w->findChild<QToolButton *>(QStringLiteral("liveButton"))->setChecked(live);
}

core::Result<double> openWindow(BenchApplication &app, BenchWindow &window,
                                const core::ConnInfo &info, Status status) {
    const qint64 t0 = app.now();
    console::MainWindow *w = window.create();
    if (status != Status::Pending)
        showStatusPage(w, status);
    w->connectTo(info, QStringLiteral("bench"));
    w->show();
    RowsProbe probe(&app, statusPage(w, status), t0);
    return probe.wait(false, QStringLiteral("the %1 view").arg(core::statusName(status)),
                      kLoadTimeoutMs);
}

core::Result<void> measureStarts(const BenchOptions &options, BenchCluster &cluster,
                                 BenchResults &results, const Progress &progress) {
    const core::ConnInfo info = cluster.connInfo();
    for (Status status : {Status::Pending, Status::Delivered}) {
        const QString view = core::statusName(status);
        progress(QStringLiteral("cold starts on the %1 view").arg(view));
        for (int i = 0; i < options.startRuns; ++i) {
            if (auto idle = cluster.sql().waitIdle(kIdleTimeoutMs); !idle)
                return idle;
            auto run = startChild(info, status);
            if (!run)
                return run.error();
            results.samples[QStringLiteral("start_process_%1_ms").arg(view)]
                << run->value(QLatin1String("process_to_rows_ms")).toDouble();
            results.samples[QStringLiteral("start_process_rss_mb")]
                << run->value(QLatin1String("rss_peak_mb")).toDouble();
        }
    }
    return {};
}
int runChildStart(BenchApplication &app, const core::ConnInfo &info, Status status, qint64 t0Ns) {
    BenchWindow window;
    const qint64 opening = app.now();
    auto opened = openWindow(app, window, info, status);
    QJsonObject json{{QStringLiteral("error"), opened ? QString() : opened.errorMessage()}};
    if (opened) {
        // The same instant on both clocks, to put the paint on the steady
        // clock the parent read before starting this process.
        const qint64 paintedNs =
            bench::steadyNowNs() - (app.now() - opening - qint64(opened.value() * 1e6));
        json = QJsonObject{{QStringLiteral("process_to_rows_ms"), double(paintedNs - t0Ns) / 1e6},
                           {QStringLiteral("window_to_rows_ms"), opened.value()},
                           {QStringLiteral("rss_peak_mb"), peakResidentMb()}};
    }
    std::fprintf(stdout, "%s\n", QJsonDocument(json).toJson(QJsonDocument::Compact).constData());
    std::fflush(stdout);
    window.destroy();
    return opened ? 0 : 1;
}
} // namespace outbox::consolebench
