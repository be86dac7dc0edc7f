#pragma once

#include "core/dispatcherconfig.h"
#include "core/duration.h"
#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "store/outboxstore.h"

#include <QObject>
#include <QString>
#include <QUuid>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace outbox::dispatch {

// The result of one delivery attempt, as the dispatcher turns it into an ack
// or a nack.
struct PublishOutcome {
    enum class Kind {
        Delivered, // 2xx: ack
        Retry,     // timeout, connection error, 408, 429, 5xx, other 4xx, 3xx: nack with backoff
        Permanent, // a configured permanent status (default 410): dead at once
        // Not attempted: its lease is handed back and the attempt the claim
        // counted is given back (a destination's open circuit).
        Returned,
    };

    QUuid id;
    int attempts = 0; // the fencing token from the claim
    Kind kind = Kind::Retry;
    std::optional<int> httpStatus;          // none for transport errors and timeouts
    std::optional<core::Millis> retryAfter; // the runner's Retry-After, parsed
    QString error; // for last_error: what happened + response excerpt, <= 500 chars,
                   // never a secret; empty when delivered
    std::chrono::microseconds duration{0}; // request start to end of response (or failure)
    // A retry of something the destination may have kept (Kafka: a timeout
    // while the produce was in flight); counted as maybe_duplicated.
    bool maybeDuplicated = false;
    // A retry's delay chosen by the publisher (a destination's own backoff);
    // none: the dispatcher's backoff.
    std::optional<core::Millis> backoff;

    static constexpr int MaxErrorLength = 500;

    static PublishOutcome delivered(const store::ClaimedEvent &event, int httpStatus = 200);
    static PublishOutcome retry(const store::ClaimedEvent &event, QString error,
                                std::optional<int> httpStatus = std::nullopt,
                                std::optional<core::Millis> retryAfter = std::nullopt);
    static PublishOutcome permanent(const store::ClaimedEvent &event, QString error,
                                    std::optional<int> httpStatus = std::nullopt);
    static PublishOutcome returned(const store::ClaimedEvent &event, QString reason);
};

// "delivered", "retry", "permanent", "returned"
QString outcomeKindName(PublishOutcome::Kind kind);

// Delivers claimed events somewhere (HTTP in production, in-process in tests
// and the database-only benchmark). Lives in the dispatcher's thread.
//
// Contract:
//  - publish() never blocks and never emits finished() synchronously from
//    inside publish(); exactly one finished() follows every publish() unless
//    abortAll() is called first.
//  - configure() is called before the first publish() and on every live
//    configuration change; it applies to requests started afterwards.
class Publisher : public QObject {
    Q_OBJECT
public:
    explicit Publisher(QObject *parent = nullptr);
    ~Publisher() override;
    Q_DISABLE_COPY_MOVE(Publisher)

    virtual core::Result<void> configure(const core::DispatcherConfig &config) = 0;
    virtual void publish(const store::ClaimedEvent &event) = 0;
    // The rows of one claim; the default publishes them one by one.
    virtual void publishBatch(const QList<store::ClaimedEvent> &events);
    // Abandons every request in flight without emitting finished() for them
    // (shutdown after the grace period; the dispatcher releases their leases).
    virtual void abortAll() = 0;
    virtual int inFlight() const = 0;

    // A publisher with several destinations (RoutingPublisher): the routes
    // its next claim tests, which destinations may take events now, and how
    // each one is doing. Empty for a publisher with one destination.
    virtual QList<store::ClaimRoute> claimRoutes() const { return {}; }
    virtual QList<DestinationStats> destinationStats() { return {}; }

Q_SIGNALS:
    void finished(const outbox::dispatch::PublishOutcome &outcome);
    // What claimRoutes() returns changed (a circuit opened or closed, a
    // destination has room again): claim again soon.
    void claimRoutesChanged();
};

// Makes the dispatcher's publisher, in the dispatcher's thread, on start().
// Tests inject an InProcessPublisher this way.
using PublisherFactory = std::function<std::unique_ptr<Publisher>()>;

} // namespace outbox::dispatch

Q_DECLARE_METATYPE(outbox::dispatch::PublishOutcome)
