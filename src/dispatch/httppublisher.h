#pragma once

#include "dispatch/webhookpublisher.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>

class QNetworkReply;

namespace outbox::dispatch {

// POSTs claimed events to the runner (the delivery contract, docs/RUNNER-CONTRACT.md):
//  - body: the payload bytes, Content-Type: application/json
//  - webhook-id (event id), webhook-timestamp (unix seconds), and, when
//    secrets are configured, webhook-signature (space-separated list while a
//    secret is rotated)
//  - Idempotency-Key (dedupe_key, else the id), Outbox-Namespace,
//    Outbox-Topic, Outbox-Tenant (when set), Outbox-Attempt, and
//    Authorization: Bearer when a token is configured
//  - HTTP/1.1 only, keep-alive, redirects never followed, a transfer timeout
//    of request_timeout, system CAs plus the optional CA file for https.
//  - at most max_response_bytes of a reply are read: a longer reply is
//    aborted once the bytes read pass the cap and retried (or dead for a
//    permanent status), its first bytes quoted in the error, so no runner
//    can make the dispatcher hold more than that per request.
//
// A pool of managers keeps `concurrency` requests in flight (RequestPool).
class HttpPublisher final : public WebhookPublisher {
    Q_OBJECT
public:
    using WebhookPublisher::WebhookPublisher;
    ~HttpPublisher() override;
    Q_DISABLE_COPY_MOVE(HttpPublisher)

    void publish(const store::ClaimedEvent &event) override;
    void abortAll() override;
    int inFlight() const override { return int(m_replies.size()); }

private:
    struct InFlight {
        store::ClaimedEvent event;
        QElapsedTimer timer;
        bool timedOut = false;  // aborted by the request deadline
        int manager = 0;        // index into m_pool's managers
        QByteArray head;        // the first bytes of the body, for the error message
        qint64 received = 0;    // body bytes read so far
        bool oversized = false; // aborted: the body is longer than m_maxResponseBytes
    };

    void configureDelivery(const core::DispatcherConfig &config) override;
    void abortExpired() override;
    void onReplyFinished(QNetworkReply *reply);
    // Reads what arrived into the flight's head; aborts beyond the cap.
    void drainBody(QNetworkReply *reply);
    void abortOversized(QNetworkReply *reply, InFlight &flight);
    PublishOutcome outcomeFor(QNetworkReply *reply, const InFlight &flight) const;

    QHash<QNetworkReply *, InFlight> m_replies;
    qint64 m_maxResponseBytes = core::DispatcherConfig::DefaultMaxResponseBytes;
};

} // namespace outbox::dispatch
