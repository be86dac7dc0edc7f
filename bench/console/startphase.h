#pragma once

#include "consolebench.h"

namespace outbox::consolebench {

class BenchWindow;
class Dataset;

// A window opened on the database, until its rows were painted. Times are
// milliseconds from the MainWindow constructor call.
struct Opened {
    double ms = 0;      // rows painted
    qint64 shownAt = 0; // the same moment, BenchApplication::now()
    double constructedMs = -1;
    double firstFrameMs = -1;
    double connectedMs = -1;
};

// Opens a MainWindow on `info` showing `status`, the way outbox-console
// --db does (connectTo, then show), and waits for its rows on screen.
core::Result<Opened> openWindow(BenchApplication &app, BenchWindow &window,
                                const core::ConnInfo &info, core::Status status);

// Start to first painted rows: new processes (this program again, in
// --child-start mode) and new windows in this process, on the Pending and
// the Delivered view.
core::Result<void> measureStarts(BenchApplication &app, const BenchOptions &options,
                                 Dataset &dataset, BenchResults &results, const Progress &progress);

} // namespace outbox::consolebench
