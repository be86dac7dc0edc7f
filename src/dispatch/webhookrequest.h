#pragma once

#include "core/dispatcherconfig.h"
#include "core/webhooksigner.h"
#include "dispatch/httpconnection.h"
#include "store/outboxstore.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QSslConfiguration>
#include <QString>
#include <QUrl>

namespace outbox::dispatch {

// Where one publisher's requests go, and how they are signed.
struct WebhookTarget {
    QUrl url;
    core::WebhookSigner signer;
    QByteArray
        authorization; // the Authorization header ("Bearer <token>", "Basic ..."); empty: none
    core::Millis timeout{10000};
    QSslConfiguration ssl; // used for https
};

// The target a configuration names: signer from its secrets, bearer token,
// timeout, system CAs plus the optional CA file. Refuses a CA file without a
// PEM certificate.
core::Result<WebhookTarget> webhookTarget(const core::DispatcherConfig &config);

// Header lines of a request, in order.
using HttpHeaders = QList<QPair<QByteArray, QByteArray>>;

// The headers of `body` as one signed Standard Webhooks message:
// Content-Type application/json, webhook-id, webhook-timestamp,
// webhook-signature (when secrets are configured), Authorization (the
// bearer token, else Basic from the URL's user info). Every request the
// dispatcher sends is signed here.
HttpHeaders signedHeaders(const WebhookTarget &target, const QByteArray &webhookId,
                          QByteArrayView body);

// The headers of one event exactly as the dispatcher sends it: signed for its
// payload (webhook-id = the event id), with Idempotency-Key and the Outbox-*
// headers, and traceparent / tracestate when the producer attached trace
// context. The benchmark's HTTP ceilings send the same headers.
HttpHeaders webhookHeaders(const WebhookTarget &target, const store::ClaimedEvent &event);

// The POST to the target's URL as it goes on the wire: request line, Host,
// User-Agent, `headers`, Content-Length, then `body`, in one buffer (one
// write; docs/PERFORMANCE.md).
QByteArray httpRequest(const WebhookTarget &target, const HttpHeaders &headers,
                       QByteArrayView body);

// Where the target's connections go: host, port, TLS and its configuration.
HttpEndpoint httpEndpoint(const WebhookTarget &target);

// `text` with the target's secrets (bearer token, URL password) masked, for
// error messages built from what a runner answered.
QString scrubSecrets(const WebhookTarget &target, QString text);

} // namespace outbox::dispatch
