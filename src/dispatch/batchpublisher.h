#pragma once

#include "dispatch/batchformat.h"
#include "dispatch/webhookpublisher.h"

#include <QList>

namespace outbox::dispatch {

// POSTs claimed events to the runner many at a time (the batch format of the
// delivery contract, docs/RUNNER-CONTRACT.md): the rows of one publishBatch() call are
// packed into batches of at most batch_max_events events and
// batch_max_bytes bytes, each one signed request (a new webhook-id per
// batch, header Outbox-Batch: <count>). The answer decides every event:
//  - 2xx: delivered, except those the body lists under "failed" (retried, or
//    dead when "permanent"); a body that cannot be read retries them all;
//  - anything else (status, timeout, connection error): what the same answer
//    means for a single event (classifyStatus), for each one.
// Answers are read up to a bound (ReplyBaseBytes + ReplyBytesPerEvent per
// event); a longer one is cut off and the batch retried.
// finished() is emitted once per event, as for any publisher.
class BatchPublisher final : public WebhookPublisher {
    Q_OBJECT
public:
    static constexpr qint64 ReplyBaseBytes = 64 * 1024;
    static constexpr qint64 ReplyBytesPerEvent = 1024;

    using WebhookPublisher::WebhookPublisher;
    ~BatchPublisher() override;
    Q_DISABLE_COPY_MOVE(BatchPublisher)

    void publish(const store::ClaimedEvent &event) override;
    void publishBatch(const QList<store::ClaimedEvent> &events) override;

private:
    void configureDelivery(const core::DispatcherConfig &config) override;
    void send(Batch batch);
    // One outcome for every event of the batch.
    QList<PublishOutcome> outcomesFor(const HttpAnswer &answer,
                                      const QList<store::ClaimedEvent> &events,
                                      qint64 replyLimit) const;
    QList<PublishOutcome> outcomesOf2xx(const HttpAnswer &answer,
                                        const QList<store::ClaimedEvent> &events) const;

    int m_maxEvents = 100;
    qint64 m_maxBytes = 1024 * 1024;
};

} // namespace outbox::dispatch
