#include "dispatch/routingpublisher.h"

#include "core/logline.h"
#include "core/retrypolicy.h"
#include "dispatch/circuitbreaker.h"
#include "dispatch/logging.h"
#include "dispatch/routingdestinations.h"

#include <QTimer>

#include <algorithm>
#include <cmath>

namespace outbox::dispatch {

struct RoutingPublisher::Lane {
    Lane(core::Destination settings, std::unique_ptr<Publisher> deliverer)
        : destination(std::move(settings))
        , publisher(std::move(deliverer))
        , breaker(destination.circuitFailures, destination.circuitOpen) {
        rateTimer.setSingleShot(true);
        probeTimer.setSingleShot(true);
    }

    void apply(const core::Destination &settings, const core::DispatcherConfig &base) {
        destination = settings;
        retry = core::RetryPolicy{destination.baseDelay.value_or(base.baseDelay),
                                  destination.maxDelay.value_or(base.maxDelay)};
        maxAttempts = destination.maxAttempts.value_or(base.maxAttempts);
        limit = destination.concurrency.value_or(base.concurrency);
        if (destination.kind == core::Routes::kindHttp()) {
            if (const auto config = core::httpDestinationConfig(destination, base))
                limit = config->eventsInFlightLimit();
        }
        limit = std::max(limit, 1);
    }

    core::Destination destination;
    std::unique_ptr<Publisher> publisher;
    CircuitBreaker breaker;
    core::RetryPolicy retry;
    int maxAttempts = 10;
    int limit = 1;                    // events in flight
    QList<store::ClaimedEvent> queue; // claimed, waiting for room or a token
    int sent = 0;                     // outcomes outstanding
    std::optional<QUuid> probe;       // the half-open circuit's probe
    double tokens = 0;                // rate limit: events that may go now
    qint64 tokensAtMs = -1;
    QTimer rateTimer;       // the next token
    QTimer probeTimer;      // open -> half-open
    DestinationStats stats; // the counters
    qint64 deliveredAtSnapshot = 0;
    qint64 snapshotAtMs = 0;
};

RoutingPublisher::RoutingPublisher(QObject *parent)
    : Publisher(parent)
    , m_rng(QRandomGenerator::securelySeeded()) {
    m_clock.start();
}

RoutingPublisher::~RoutingPublisher() = default;

core::Result<void> RoutingPublisher::configure(const core::DispatcherConfig &config) {
    if (!config.routes)
        return core::Error{core::ErrorKind::Invalid,
                           QStringLiteral("the routing publisher got no routes (internal error)")};
    const QList<core::Destination> &destinations = config.routes->destinations;
    if (m_lanes.empty()) {
        for (const core::Destination &destination : destinations) {
            const DestinationKind *kind = destinationKind(destination.kind);
            auto made = kind ? kind->make(destination, config, this)
                             : core::Result<std::unique_ptr<Publisher>>(
                                   core::Error{core::ErrorKind::Invalid,
                                               QStringLiteral("kind %1 is not known to this build")
                                                   .arg(destination.kind)});
            if (!made) {
                m_lanes.clear();
                return core::Error{made.error().kind,
                                   QStringLiteral("destination %1 (%2, line %3): %4")
                                       .arg(destination.name, config.routesFile)
                                       .arg(destination.line)
                                       .arg(made.errorMessage())};
            }
            auto lane = std::make_unique<Lane>(destination, std::move(made.value()));
            lane->apply(destination, config);
            lane->stats.name = destination.name;
            lane->stats.kind = destination.kind;
            lane->stats.target = kind->target(destination);
            lane->stats.rateLimit = destination.rate;
            Lane *raw = lane.get();
            connect(raw->publisher.get(), &Publisher::finished, this,
                    [this, raw](const PublishOutcome &outcome) { onLaneFinished(*raw, outcome); });
            connect(&raw->rateTimer, &QTimer::timeout, this, [this, raw] { pump(*raw); });
            connect(&raw->probeTimer, &QTimer::timeout, this, [this, raw] {
                if (raw->breaker.poll(m_clock.elapsed()))
                    breakerChanged(*raw);
                else if (const qint64 left = raw->breaker.msUntilProbe(m_clock.elapsed()))
                    raw->probeTimer.start(int(left)); // a timer may fire a little early
            });
            m_lanes.push_back(std::move(lane));
        }
    } else {
        const bool same = qsizetype(m_lanes.size()) == destinations.size() &&
                          std::equal(m_lanes.cbegin(), m_lanes.cend(), destinations.cbegin(),
                                     [](const auto &lane, const core::Destination &destination) {
                                         return lane->destination.name == destination.name &&
                                                lane->destination.kind == destination.kind;
                                     });
        if (!same)
            return core::Error{core::ErrorKind::Invalid,
                               QStringLiteral("the destinations cannot change while the "
                                              "dispatcher runs; stop it, then start it with the "
                                              "new routes")};
        for (qsizetype i = 0; i < destinations.size(); ++i) {
            Lane &lane = *m_lanes.at(size_t(i));
            const core::Destination &destination = destinations.at(i);
            if (destination.kind == core::Routes::kindHttp()) {
                auto laneConfig = core::httpDestinationConfig(destination, config);
                if (!laneConfig)
                    return laneConfig.error();
                if (auto configured = lane.publisher->configure(laneConfig.value()); !configured)
                    return configured;
            } else if (auto configured = lane.publisher->configure(config); !configured) {
                return configured;
            }
            lane.apply(destination, config);
            lane.stats.rateLimit = destination.rate;
        }
    }
    m_routes = config.routes;
    for (const auto &lane : m_lanes) {
        lane->stats.routes.clear();
        for (qsizetype n = 0; n < m_routes->routes.size(); ++n) {
            const core::Route &route = m_routes->routes.at(n);
            if (route.destination == lane->destination.name)
                lane->stats.routes.append({int(n), route.nameSpace, route.topic});
        }
    }
    return {};
}

RoutingPublisher::Lane *RoutingPublisher::laneFor(const store::ClaimedEvent &event) const {
    const core::Route *route =
        m_routes ? m_routes->routeFor(event.nameSpace, event.topic) : nullptr;
    if (!route)
        return nullptr;
    for (const auto &lane : m_lanes) {
        if (lane->destination.name == route->destination)
            return lane.get();
    }
    return nullptr;
}

void RoutingPublisher::publish(const store::ClaimedEvent &event) {
    Lane *lane = laneFor(event);
    if (!lane)
        return returnLater(event, QStringLiteral("no route of this dispatcher matches the event"));
    if (event.attempts > lane->maxAttempts) {
        // Claimed past its destination's limit (a lease that expired on the
        // last attempt): dead, as the dead sweep would have made it.
        m_returns.append(PublishOutcome::permanent(
            event, QStringLiteral("dead: reached max attempts (%1) of destination %2")
                       .arg(lane->maxAttempts)
                       .arg(lane->destination.name)));
        return deliverReturns();
    }
    switch (lane->breaker.state()) {
    case CircuitBreaker::State::Open:
        ++lane->stats.returned;
        return returnLater(event, QStringLiteral("the circuit of destination %1 is open: %2")
                                      .arg(lane->destination.name, lane->breaker.reason()));
    case CircuitBreaker::State::HalfOpen:
        if (lane->probe) {
            ++lane->stats.returned;
            return returnLater(event,
                               QStringLiteral("the circuit of destination %1 is half-open and "
                                              "its probe is under way")
                                   .arg(lane->destination.name));
        }
        lane->probe = event.id;
        break;
    case CircuitBreaker::State::Closed:
        break;
    }
    lane->queue.append(event);
    pump(*lane);
}

bool RoutingPublisher::takeToken(Lane &lane) {
    const double rate = lane.destination.rate;
    if (rate <= 0)
        return true;
    const qint64 now = m_clock.elapsed();
    // A burst of at most a tenth of a second's events (at least one).
    const double burst = std::max(1.0, rate / 10.0);
    if (lane.tokensAtMs < 0)
        lane.tokens = burst;
    else
        lane.tokens = std::min(burst, lane.tokens + double(now - lane.tokensAtMs) * rate / 1000.0);
    lane.tokensAtMs = now;
    if (lane.tokens >= 1.0) {
        lane.tokens -= 1.0;
        return true;
    }
    if (!lane.rateTimer.isActive())
        lane.rateTimer.start(int(std::ceil((1.0 - lane.tokens) * 1000.0 / rate)));
    return false;
}

void RoutingPublisher::pump(Lane &lane) {
    QList<store::ClaimedEvent> going;
    while (!lane.queue.isEmpty() && lane.sent + going.size() < lane.limit) {
        if (!takeToken(lane))
            break;
        going.append(lane.queue.takeFirst());
    }
    if (going.isEmpty())
        return;
    lane.sent += int(going.size());
    lane.publisher->publishBatch(going);
}

void RoutingPublisher::onLaneFinished(Lane &lane, PublishOutcome outcome) {
    lane.sent = std::max(lane.sent - 1, 0);
    const bool probe = lane.probe == outcome.id;
    if (probe)
        lane.probe.reset();
    const qint64 now = m_clock.elapsed();
    bool changed = false;
    if (outcome.kind == PublishOutcome::Kind::Retry) {
        ++lane.stats.failed;
        lane.stats.lastError = outcome.error;
        lane.stats.lastErrorAt = QDateTime::currentDateTimeUtc();
        changed = lane.breaker.recordFailure(outcome.error, now);
        if (probe) {
            // A failed probe costs its event nothing: the circuit is open
            // again and the event waits with the others.
            outcome.kind = PublishOutcome::Kind::Returned;
            ++lane.stats.returned;
        } else if (outcome.attempts >= lane.maxAttempts) {
            outcome.kind = PublishOutcome::Kind::Permanent;
            outcome.error = QStringLiteral("dead: reached max attempts (%1) of destination %2; "
                                           "the last error: %3")
                                .arg(lane.maxAttempts)
                                .arg(lane.destination.name, outcome.error)
                                .left(PublishOutcome::MaxErrorLength);
        } else {
            outcome.backoff = lane.retry.nextDelay(outcome.attempts, m_rng, outcome.retryAfter);
        }
    } else {
        if (outcome.kind == PublishOutcome::Kind::Delivered)
            ++lane.stats.delivered;
        else if (outcome.kind == PublishOutcome::Kind::Permanent)
            ++lane.stats.failed;
        // The destination answered: it is up.
        changed = outcome.kind != PublishOutcome::Kind::Returned && lane.breaker.recordSuccess();
    }
    Q_EMIT finished(outcome);
    if (changed)
        breakerChanged(lane);
    pump(lane);
}

void RoutingPublisher::breakerChanged(Lane &lane) {
    const CircuitBreaker::State state = lane.breaker.state();
    qCWarning(lcDispatch) << core::LogLine("circuit")
                                 .add("destination", lane.destination.name)
                                 .add("state", CircuitBreaker::stateName(state))
                                 .add("reason", lane.breaker.reason());
    if (state == CircuitBreaker::State::Open) {
        returnQueued(lane, QStringLiteral("the circuit of destination %1 opened: %2")
                               .arg(lane.destination.name, lane.breaker.reason()));
        lane.probeTimer.start(int(lane.breaker.msUntilProbe(m_clock.elapsed())));
    }
    Q_EMIT claimRoutesChanged();
}

void RoutingPublisher::returnLater(const store::ClaimedEvent &event, const QString &reason) {
    m_returns.append(PublishOutcome::returned(event, reason));
    deliverReturns();
}

void RoutingPublisher::returnQueued(Lane &lane, const QString &reason) {
    for (const store::ClaimedEvent &event : std::as_const(lane.queue))
        m_returns.append(PublishOutcome::returned(event, reason));
    lane.stats.returned += lane.queue.size();
    lane.queue.clear();
    lane.probe.reset();
    deliverReturns();
}

void RoutingPublisher::deliverReturns() {
    // Never from inside publish() (the Publisher contract): on the next pass.
    if (m_returnsPosted || m_returns.isEmpty())
        return;
    m_returnsPosted = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_returnsPosted = false;
            const QList<PublishOutcome> outcomes = std::exchange(m_returns, {});
            for (const PublishOutcome &outcome : outcomes)
                Q_EMIT finished(outcome);
        },
        Qt::QueuedConnection);
}

void RoutingPublisher::abortAll() {
    for (const auto &lane : m_lanes) {
        lane->publisher->abortAll();
        lane->queue.clear();
        lane->sent = 0;
        lane->probe.reset();
        lane->rateTimer.stop();
    }
    m_returns.clear();
}

int RoutingPublisher::inFlight() const {
    int total = int(m_returns.size());
    for (const auto &lane : m_lanes)
        total += lane->sent + int(lane->queue.size());
    return total;
}

int RoutingPublisher::room(const Lane &lane) const {
    switch (lane.breaker.state()) {
    case CircuitBreaker::State::Closed: {
        // What waits for the rate limit counts: a slow or rate-limited
        // destination holds no more of the dispatcher's window than its
        // limit, and a rate-limited one no more than a second's worth.
        int most = lane.limit;
        if (const double rate = lane.destination.rate; rate > 0)
            most = std::min(most, std::max(1, int(std::ceil(rate))));
        return std::max(most - lane.sent - int(lane.queue.size()), 0);
    }
    case CircuitBreaker::State::HalfOpen:
        return lane.probe ? 0 : 1;
    case CircuitBreaker::State::Open:
        return 0;
    }
    return 0;
}

QList<store::ClaimRoute> RoutingPublisher::claimRoutes() const {
    QList<store::ClaimRoute> routes;
    if (!m_routes)
        return routes;
    for (const core::Route &route : m_routes->routes) {
        const auto lane =
            std::find_if(m_lanes.cbegin(), m_lanes.cend(), [&route](const auto &candidate) {
                return candidate->destination.name == route.destination;
            });
        const int free = lane != m_lanes.cend() ? room(**lane) : 0;
        routes.append(store::ClaimRoute{core::globToLike(route.nameSpace),
                                        core::globToLike(route.topic), route.destination, free > 0,
                                        free});
    }
    return routes;
}

QList<DestinationStats> RoutingPublisher::destinationStats() {
    QList<DestinationStats> all;
    const qint64 now = m_clock.elapsed();
    for (const auto &lane : m_lanes) {
        DestinationStats &stats = lane->stats;
        stats.circuit = CircuitBreaker::stateName(lane->breaker.state());
        stats.reason = lane->breaker.reason();
        stats.circuitSince = lane->breaker.since();
        stats.inFlight = lane->sent;
        stats.queued = int(lane->queue.size());
        stats.limit = lane->limit;
        if (const qint64 elapsed = now - lane->snapshotAtMs; elapsed >= 200) {
            stats.deliveredPerSecond =
                double(stats.delivered - lane->deliveredAtSnapshot) * 1000.0 / double(elapsed);
            lane->deliveredAtSnapshot = stats.delivered;
            lane->snapshotAtMs = now;
        }
        all.append(stats);
    }
    return all;
}

} // namespace outbox::dispatch
