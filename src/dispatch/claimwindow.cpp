#include "dispatch/claimwindow.h"

#include "core/logline.h"
#include "dispatch/logging.h"

#include <algorithm>

namespace outbox::dispatch {

void ClaimWindow::clear() {
    m_flights.clear();
    m_floors.clear(); // a floor from an earlier run could hide requeued rows
    m_backlog = false;
}

int ClaimWindow::freeSlots(const core::DispatcherConfig &config) const {
    return config.eventsInFlightLimit() - inFlight();
}

bool ClaimWindow::worthRefilling(const core::DispatcherConfig &config) const {
    // Refilling one slot at a time would cost a statement per event; wait
    // until half of the window is free (or everything finished). Larger
    // claims and ack statements cost less per event (docs/DECISIONS.md).
    const int minimumClaim =
        std::max(1, std::min(config.batchSize, config.eventsInFlightLimit()) / 2);
    return freeSlots(config) >= minimumClaim || isEmpty();
}

core::Result<ClaimWindow::Claimed> ClaimWindow::claim(store::OutboxStore &store,
                                                      const QUuid &workerId,
                                                      const core::DispatcherConfig &config,
                                                      const QList<store::ClaimRoute> &routes,
                                                      DispatcherStats &stats, int limit) {
    const int wanted = std::min({freeSlots(config), config.batchSize, limit});
    m_backlog = false;
    store::ClaimOptions options;
    options.batchSize = wanted;
    options.lease = config.lease;
    options.maxAttempts = config.maxAttempts;
    options.nameSpace = config.nameSpace;
    options.ordering = config.ordering;
    options.createdFrom = floorFor(store, config.nameSpace, routes);
    options.routes = routes;
    auto claimed = store.claimBatch(workerId, options);
    ++stats.claims;
    if (!claimed)
        return claimed.error();
    Claimed result;
    result.rows = std::move(claimed.value());
    result.full = result.rows.size() == wanted;
    stats.claimed += result.rows.size();
    for (const store::ClaimedEvent &row : std::as_const(result.rows))
        m_flights.insert(row.id, Flight{row.attempts, row.createdAt});
    qCDebug(lcDispatch)
        << core::LogLine("claim").add("wanted", wanted).add("got", result.rows.size());
    if (result.full)
        m_backlog = true; // probably more waiting
    return result;
}

std::optional<ClaimWindow::Flight> ClaimWindow::complete(const PublishOutcome &outcome) {
    const auto it = m_flights.constFind(outcome.id);
    if (it == m_flights.cend() || it->attempts != outcome.attempts)
        return std::nullopt;
    const Flight flight = it.value();
    m_flights.erase(it);
    return flight;
}

QList<store::Release> ClaimWindow::abandonAll() {
    QList<store::Release> releases;
    releases.reserve(m_flights.size());
    for (auto it = m_flights.cbegin(); it != m_flights.cend(); ++it)
        releases.append(store::Release{it.key(), it->attempts, true});
    m_flights.clear();
    return releases;
}

namespace {

// The key of a set of floors: the destinations the routes may claim for.
QString floorKey(const QList<store::ClaimRoute> &routes) {
    QStringList destinations;
    for (const store::ClaimRoute &route : routes) {
        if (route.claimable && !destinations.contains(route.destination))
            destinations.append(route.destination);
    }
    destinations.sort();
    return destinations.join(QLatin1Char(','));
}

// `routes` claiming for the destinations of `key` (whatever their state now:
// a floor is a lower bound, and a lower one only walks a little more).
QList<store::ClaimRoute> routesOfKey(QList<store::ClaimRoute> routes, const QString &key) {
    const QStringList destinations = key.split(QLatin1Char(','));
    for (store::ClaimRoute &route : routes)
        route.claimable = destinations.contains(route.destination);
    return routes;
}

} // namespace

QString ClaimWindow::floorFor(store::OutboxStore &store, const QString &nameSpace,
                              const QList<store::ClaimRoute> &routes) {
    const QString key = floorKey(routes);
    auto it = m_floors.find(key);
    if (it == m_floors.end()) {
        if (routes.isEmpty())
            return {}; // refreshed every poll interval
        it = m_floors.insert(key, Floor{});
        refreshOne(store, nameSpace, routes, *it);
    }
    return it->from;
}

void ClaimWindow::refreshFloor(store::OutboxStore &store, const QString &nameSpace,
                               const QList<store::ClaimRoute> &routes) {
    if (routes.isEmpty()) {
        refreshOne(store, nameSpace, routes, m_floors[QString()]);
        return;
    }
    m_floors[floorKey(routes)]; // the current set's, found in full if new
    for (auto it = m_floors.begin(); it != m_floors.end(); ++it)
        refreshOne(store, nameSpace, routesOfKey(routes, it.key()), *it);
}

void ClaimWindow::refreshOne(store::OutboxStore &store, const QString &nameSpace,
                             const QList<store::ClaimRoute> &routes, Floor &floor) {
    // With routes, from the floor found before, and in full every
    // kFullFloorEvery refreshes (a destination resumed by an operator, a
    // producer transaction that committed late).
    const bool full =
        routes.isEmpty() || floor.from.isEmpty() || ++floor.refreshes % kFullFloorEvery == 0;
    auto found =
        store.claimFloor(nameSpace, core::Millis(1000), routes, full ? QString() : floor.from);
    if (!found) {
        // Not worth a reconnect of its own: the claim right after notices a
        // lost connection; meanwhile claim without a bound.
        floor.from.clear();
        return;
    }
    floor.from = found.value();
}

} // namespace outbox::dispatch
