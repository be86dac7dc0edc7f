#include "dispatch/claimwindow.h"

#include "core/logline.h"
#include "dispatch/logging.h"

#include <algorithm>

namespace outbox::dispatch {

void ClaimWindow::clear() {
    m_flights.clear();
    m_floor.clear(); // a floor from an earlier run could hide requeued rows
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
                                                      DispatcherStats &stats) {
    const int wanted = std::min(freeSlots(config), config.batchSize);
    m_backlog = false;
    store::ClaimOptions options;
    options.batchSize = wanted;
    options.lease = config.lease;
    options.maxAttempts = config.maxAttempts;
    options.nameSpace = config.nameSpace;
    options.ordering = config.ordering;
    options.createdFrom = m_floor;
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

void ClaimWindow::refreshFloor(store::OutboxStore &store, const QString &nameSpace,
                               const QList<store::ClaimRoute> &routes) {
    // With routes, from the floor found before, and in full every
    // kFullFloorEvery refreshes (a destination resumed by an operator, a
    // producer transaction that committed late).
    const bool full = routes.isEmpty() || ++m_floorRefreshes % kFullFloorEvery == 0;
    auto floor =
        store.claimFloor(nameSpace, core::Millis(1000), routes, full ? QString() : m_floor);
    if (!floor) {
        // Not worth a reconnect of its own: the claim right after notices a
        // lost connection; meanwhile claim without a bound.
        m_floor.clear();
        return;
    }
    m_floor = floor.value();
}

} // namespace outbox::dispatch
