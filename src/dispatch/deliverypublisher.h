#pragma once

#include "dispatch/publisher.h"

#include <memory>

namespace outbox::dispatch {

// The dispatcher's HTTP publisher: one request per event (HttpPublisher) or
// many events per request (BatchPublisher), as the configuration's delivery
// says. A live change of the delivery applies to the rows published
// afterwards; requests in flight finish where they started. Each publisher is
// made the first time its delivery is configured.
//
// The per-event path is HttpPublisher's own: this class only forwards.
class DeliveryPublisher final : public Publisher {
    Q_OBJECT
public:
    explicit DeliveryPublisher(QObject *parent = nullptr);
    ~DeliveryPublisher() override;
    Q_DISABLE_COPY_MOVE(DeliveryPublisher)

    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void publishBatch(const QList<store::ClaimedEvent> &events) override;
    void abortAll() override;
    int inFlight() const override;

private:
    std::unique_ptr<Publisher> &slot(core::Delivery delivery);

    std::unique_ptr<Publisher> m_perEvent;
    std::unique_ptr<Publisher> m_batch;
    Publisher *m_active = nullptr; // never null
};

} // namespace outbox::dispatch
