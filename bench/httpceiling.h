#pragma once

#include "bench/cpumeter.h"
#include "core/result.h"

#include <QString>
#include <QUrl>

namespace outbox::bench {

struct HttpCeiling {
    double requestsPerSecond = 0;
    int managers = 0;
    qint64 failures = 0; // non-2xx answers or transport errors
    CpuUsage cpu;        // during the measured requests (not the warm-up)
};

// The HTTP ceiling: QNetworkAccessManagers posting signed webhook requests
// (the same headers, attributes and body size as the dispatcher's
// HttpPublisher, and the same pool of one manager per 6 connections) to the
// runner with `concurrency` requests in flight, no database. Runs its own
// event loop in the calling thread.
core::Result<HttpCeiling> measureHttpCeiling(const QUrl &url, const QString &secret, int requests,
                                             int concurrency, int payloadBytes,
                                             const CpuMeter &meter);

} // namespace outbox::bench
