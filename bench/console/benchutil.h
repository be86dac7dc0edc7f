#pragma once

#include "core/result.h"

#include <QString>

namespace outbox::consolebench {

// How long any one wait of the benchmark may take before it gives up.
constexpr int kLoadTimeoutMs = 60000;
constexpr int kIdleTimeoutMs = 120000;

core::Error failure(const QString &message);

// CLOCK_MONOTONIC in nanoseconds: the same clock in every process.
qint64 steadyNowNs();

// Resident set size of this process now / at its peak, in MB (0 when
// /proc is not there).
double residentMb();
double peakResidentMb();
// /proc/loadavg's first three figures: how busy the machine was.
QString loadAverage();

} // namespace outbox::consolebench
