#pragma once

#include "core/result.h"

#include <QList>
#include <QString>
#include <QUrl>

// The HTTP loads a benchmark posts to a runner, without a database.
namespace outbox::devtools {

enum class HttpClientKind {
    // QNetworkAccessManager as the dispatcher used it before WebhookClient:
    // one manager per 6 connections (Qt's limit per host and manager), each
    // request on the least busy one, HTTP/2 off, no redirects, cookies or cache.
    Qnam,
    // The dispatcher's own client (dispatch::WebhookClient).
    Webhook,
};

struct HttpLoadResult {
    qint64 elapsedNs = 0;      // the measured requests, first sent to last answered
    qint64 failures = 0;       // non-2xx answers or transport errors
    QList<double> latenciesMs; // per request, from handing it to the client to its answer
    int managers = 0;          // QNetworkAccessManagers (Qnam)
};

// Posts `warmUp` and then `total` signed requests (the dispatcher's headers
// for an event whose body is `bodyBytes` of JSON, signed with `secret`) to
// `url`, keeping `concurrency` in flight, in an event loop of its own. Fails
// when the runner leaves requests unanswered for 5 minutes.
core::Result<HttpLoadResult> postLoad(HttpClientKind kind, const QUrl &url, const QString &secret,
                                      int bodyBytes, int concurrency, int warmUp, int total);

} // namespace outbox::devtools
