#include "dispatch/deliverypublisher.h"

#include "dispatch/batchpublisher.h"
#include "dispatch/dispatcher.h"
#include "dispatch/httppublisher.h"
#include "dispatch/threadedpublisher.h"

namespace outbox::dispatch {

DeliveryPublisher::DeliveryPublisher(QObject *parent)
    : Publisher(parent)
    , m_perEvent(std::make_unique<HttpPublisher>()) {
    // Before configure(), requests are answered as HttpPublisher answers them.
    connect(m_perEvent.get(), &Publisher::finished, this, &Publisher::finished);
    m_active = m_perEvent.get();
}

DeliveryPublisher::~DeliveryPublisher() = default;

std::unique_ptr<Publisher> &DeliveryPublisher::slot(core::Delivery delivery) {
    return delivery == core::Delivery::Batch ? m_batch : m_perEvent;
}

core::Result<void> DeliveryPublisher::configure(const core::DispatcherConfig &config) {
    std::unique_ptr<Publisher> &publisher = slot(config.delivery);
    std::unique_ptr<Publisher> made;
    if (!publisher)
        made = std::make_unique<BatchPublisher>(); // the per-event one always exists
    Publisher *next = made ? made.get() : publisher.get();
    if (auto configured = next->configure(config); !configured)
        return configured; // nothing changes
    if (made) {
        connect(made.get(), &Publisher::finished, this, &Publisher::finished);
        publisher = std::move(made);
    }
    m_active = next;
    return {};
}

void DeliveryPublisher::publish(const store::ClaimedEvent &event) {
    m_active->publish(event);
}

void DeliveryPublisher::publishBatch(const QList<store::ClaimedEvent> &events) {
    m_active->publishBatch(events);
}

void DeliveryPublisher::abortAll() {
    for (const auto *publisher : {&m_perEvent, &m_batch}) {
        if (*publisher)
            (*publisher)->abortAll();
    }
}

int DeliveryPublisher::inFlight() const {
    return (m_perEvent ? m_perEvent->inFlight() : 0) + (m_batch ? m_batch->inFlight() : 0);
}

// Defined here, next to the publisher it makes.
PublisherFactory Dispatcher::httpPublisherFactory() {
    // Its own thread: claims and acks wait on the database, and requests and
    // replies should not wait for them (docs/PERFORMANCE.md).
    return ThreadedPublisher::inOwnThread([] { return std::make_unique<DeliveryPublisher>(); },
                                          QStringLiteral("outbox-http"));
}

} // namespace outbox::dispatch
