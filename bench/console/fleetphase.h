#pragma once

#include "consolebench.h"

namespace outbox::consolebench {

// outbox-console-bench --fleet N: the fleet window watching N databases of
// one cluster (one of them holding the benchmark's data set, a tenth of them
// unreachable: closed ports), measured against the fleet's targets: first
// rows painted within 1 s, no GUI stall over 50 ms, resident memory under
// 300 MB, and watching one database costing its server under 0.5 % of a
// core (statement time per second, as the idle console is measured).
// Prints the figures (JSON with `json`) and returns the exit code.
int runFleetBench(BenchApplication &app, const BenchOptions &options, int databases, bool json);

} // namespace outbox::consolebench
