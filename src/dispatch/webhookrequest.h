#pragma once

#include "core/dispatcherconfig.h"
#include "core/webhooksigner.h"
#include "store/outboxstore.h"

#include <QByteArray>
#include <QNetworkRequest>
#include <QSslConfiguration>
#include <QString>
#include <QUrl>

namespace outbox::dispatch {

// Where one publisher's requests go, and how they are signed.
struct WebhookTarget {
    QUrl url;
    core::WebhookSigner signer;
    QByteArray authorization; // the Authorization header ("Bearer <token>"); empty: none
    core::Millis timeout{10000};
    QSslConfiguration ssl; // used for https
};

// The target a configuration names: signer from its secrets, bearer token,
// timeout, system CAs plus the optional CA file. Refuses a CA file without a
// PEM certificate.
core::Result<WebhookTarget> webhookTarget(const core::DispatcherConfig &config);

// A signed POST of `body` as one Standard Webhooks message: Content-Type
// application/json, webhook-id, webhook-timestamp, webhook-signature (when
// secrets are configured), Authorization; HTTP/1.1, no redirects, cookies or
// cache, the target's transfer timeout and TLS configuration. Every request
// the dispatcher sends is built here.
QNetworkRequest signedRequest(const WebhookTarget &target, const QByteArray &webhookId,
                              QByteArrayView body);

// The request for one event exactly as the dispatcher sends it: a signed
// request for its payload (webhook-id = the event id) with Idempotency-Key
// and the Outbox-* headers. The benchmark's HTTP ceiling sends the same
// request.
QNetworkRequest webhookRequest(const WebhookTarget &target, const store::ClaimedEvent &event);

// `text` with the target's secrets (bearer token, URL password) masked, for
// error messages built from what a runner answered.
QString scrubSecrets(const WebhookTarget &target, QString text);

} // namespace outbox::dispatch
