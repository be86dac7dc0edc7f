#pragma once

#include "core/routes.h"
#include "dispatch/publisher.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QRandomGenerator>

#include <memory>
#include <vector>

namespace outbox::dispatch {

// Delivers by a routes file (core::Routes, DispatcherConfig::routes): one
// publisher per destination (its kind's, routingdestinations.h), the
// event's first matching route choosing it. Each destination is isolated
// from the others: its own concurrency limit and optional rate limit (events
// wait here for room, in claim order), its own retries (max attempts,
// backoff) and a circuit breaker (circuitbreaker.h). While a circuit is
// open the claim leaves its destination's events alone (claimRoutes()), and
// the events that still reach it are returned unattempted: their leases are
// released and the attempt the claim counted is given back, so an outage of
// a day kills no event. Circuit changes are logged (event=circuit, one line
// each) and shown in destinationStats().
//
// Lives in the dispatcher's thread, as any publisher; the destinations'
// publishers bring their own threads (HTTP: one each).
class RoutingPublisher final : public Publisher {
    Q_OBJECT
public:
    explicit RoutingPublisher(QObject *parent = nullptr);
    ~RoutingPublisher() override;
    Q_DISABLE_COPY_MOVE(RoutingPublisher)

    // The first call makes the destinations' publishers; later calls may
    // change the routes and the destinations' settings, not which
    // destinations there are.
    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void abortAll() override;
    int inFlight() const override;
    QList<store::ClaimRoute> claimRoutes() const override;
    QList<DestinationStats> destinationStats() override;

private:
    struct Lane;

    Lane *laneFor(const store::ClaimedEvent &event) const;
    void pump(Lane &lane);
    bool takeToken(Lane &lane);
    void onLaneFinished(Lane &lane, PublishOutcome outcome);
    void breakerChanged(Lane &lane);
    void returnLater(const store::ClaimedEvent &event, const QString &reason);
    void returnQueued(Lane &lane, const QString &reason);
    void deliverReturns();
    // Events the lane may take now: none while its circuit is open or its
    // probe is out, one probe when half-open, else what its limit leaves.
    int room(const Lane &lane) const;

    std::shared_ptr<const core::Routes> m_routes;
    std::vector<std::unique_ptr<Lane>> m_lanes;
    QList<PublishOutcome> m_returns; // emitted on the next event-loop pass
    bool m_returnsPosted = false;
    QElapsedTimer m_clock;
    QRandomGenerator m_rng;
};

} // namespace outbox::dispatch
