#pragma once

#include "dispatch/webhookpublisher.h"

namespace outbox::dispatch {

// POSTs claimed events to the runner (the delivery contract, docs/RUNNER-CONTRACT.md):
//  - body: the payload bytes, Content-Type: application/json
//  - webhook-id (event id), webhook-timestamp (unix seconds), and, when
//    secrets are configured, webhook-signature (space-separated list while a
//    secret is rotated)
//  - Idempotency-Key (dedupe_key, else the id), Outbox-Namespace,
//    Outbox-Topic, Outbox-Tenant (when set), Outbox-Attempt, and
//    Authorization: Bearer when a token is configured
//  - HTTP/1.1 keep-alive (WebhookClient), redirects never followed, a hard
//    deadline of request_timeout, system CAs plus the optional CA file for
//    https.
//  - at most max_response_bytes of a reply are read: a longer reply is
//    aborted once the bytes read pass the cap and retried (or dead for a
//    permanent status), its first bytes quoted in the error, so no runner
//    can make the dispatcher hold more than that per request.
//
// One connection per request in flight, up to `concurrency`.
class HttpPublisher final : public WebhookPublisher {
    Q_OBJECT
public:
    using WebhookPublisher::WebhookPublisher;
    ~HttpPublisher() override;
    Q_DISABLE_COPY_MOVE(HttpPublisher)

    void publish(const store::ClaimedEvent &event) override;

private:
    void configureDelivery(const core::DispatcherConfig &config) override;
    PublishOutcome outcomeFor(const HttpAnswer &answer, const store::ClaimedEvent &event) const;

    qint64 m_maxResponseBytes = core::DispatcherConfig::DefaultMaxResponseBytes;
};

} // namespace outbox::dispatch
