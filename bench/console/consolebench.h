#pragma once

#include "benchapplication.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "core/status.h"
#include "dataset.h"
#include "stallmeter.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace outbox::consolebench {

struct BenchOptions {
    DatasetSize size;
    qint64 backlog = 200000; // due pending events for the dispatcher phase
    int startRuns = 5;       // per view, for each way of starting
    int switchRounds = 5;    // rounds through the four status pages
    int refreshRuns = 20;
    int stallSeconds = 20;
    int scrollRows = 10000; // rows to load into the delivered view by scrolling (0 = skip)
    int producerRate = 500; // events/s enqueued during the dispatcher phase
    int concurrency = 64;
    int batchSize = 100;
    QString childProgram; // this executable, started for the cold-start runs
    // Investigation aid: after loading, print the connection string and wait
    // for a line on stdin (so the data can be examined with psql).
    bool pauseAfterLoad = false;
    // Statements run after loading, e.g. an index to try (--after-load-sql).
    QStringList afterLoadSql;
};

struct StartRun {
    core::Status status = core::Status::Pending;
    double processMs = -1; // fork/exec of a new process -> rows painted
    double windowMs = -1;  // MainWindow constructor -> rows painted, same process
    // Where the window's time went (from the constructor call):
    double constructedMs = -1; // constructor returned
    double firstFrameMs = -1;  // first paint of anything
    double connectedMs = -1;   // the store worker's connection is up
    double rssMb = 0;          // peak resident set size of that process
};

struct SwitchRun {
    core::Status from = core::Status::Pending;
    core::Status to = core::Status::Pending;
    bool firstVisit = false;
    double shownMs = -1; // rows on screen (possibly those from the last visit)
    double freshMs = -1; // rows read after the switch on screen
};

struct BenchResults {
    DatasetFacts data;
    QString serverVersion;
    QList<StartRun> processStarts; // new process each
    QList<StartRun> windowStarts;  // new window in this process each
    QList<SwitchRun> switches;
    QList<double> refreshMs;
    QList<double> refreshWorkerMs; // refreshed() only (query + diff), for diagnosis

    StallFigures stall;
    QList<SlowEvent> slowest;
    double stallSeconds = 0;
    qint64 stallDelivered = 0;
    qint64 stallRetried = 0;
    qint64 stallProduced = 0;
    int stallCountsRefreshes = 0;
    int stallPageRefreshes = 0;
    int stallViewSwitches = 0;
    qint64 backlogBefore = 0;
    qint64 pendingAfter = 0;

    // Database work by statement (pg_stat_statements): during the start,
    // switch and refresh phases, and during the dispatcher phase.
    QList<StatementStat> consoleStatements;
    QList<StatementStat> stallStatements;
    QString loadBefore; // /proc/loadavg: other work on the machine
    QString loadAfter;

    // Scrolling the delivered view down until scrollRows rows are loaded.
    int scrolledRows = 0;
    QList<double> scrollPageMs; // scroll to the bottom -> next page's rows painted
    double rssAfterScrollMb = 0;

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

// Application names, icon: what outbox-console sets before its window.
void setUpApplication();

} // namespace outbox::consolebench
