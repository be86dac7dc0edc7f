#pragma once

#include "core/dispatcherconfig.h"
#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "dispatch/publisher.h"
#include "store/outboxstore.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <QUuid>

#include <limits>
#include <optional>

namespace outbox::dispatch {

// The rows a dispatcher holds leases on (claimed, handed to the publisher,
// outcome not in yet) and the claims that refill them: how many slots are
// free, whether more work is probably waiting, and where claims start in the
// index. No timers and no connection of its own: the Dispatcher decides when
// to claim and what a failed statement means. Dispatcher-internal.
class ClaimWindow final {
public:
    struct Flight {
        int attempts = 0; // the fencing token from the claim
        QDateTime createdAt;
    };

    // A new run: nothing in flight, no backlog, no floor.
    void clear();

    int inFlight() const { return int(m_flights.size()); }
    bool isEmpty() const { return m_flights.isEmpty(); }
    int freeSlots(const core::DispatcherConfig &config) const;
    // True when a claim now is worth its statement: half of the window is
    // free, or everything finished.
    bool worthRefilling(const core::DispatcherConfig &config) const;

    // More work is probably waiting: the last claim was full, or a wake-up
    // (NOTIFY, a configuration change) came while no slot was free.
    bool hasBacklog() const { return m_backlog; }
    void noteBacklog() { m_backlog = true; }

    struct Claimed {
        QList<store::ClaimedEvent> rows; // in flight from now on
        bool full = false;               // as many rows as there were free slots
    };
    // Claims up to the free slots (at most batch_size and `limit`), counting
    // into `stats`. `routes`: a routing publisher's (Publisher::claimRoutes()),
    // or some of them.
    core::Result<Claimed> claim(store::OutboxStore &store, const QUuid &workerId,
                                const core::DispatcherConfig &config,
                                const QList<store::ClaimRoute> &routes, DispatcherStats &stats,
                                int limit = std::numeric_limits<int>::max());

    // Takes the flight an outcome completes out of the window; nullopt for a
    // row abandoned at shutdown or an outcome of an earlier attempt.
    std::optional<Flight> complete(const PublishOutcome &outcome);
    // Empties the window: every row still in flight as a release that keeps
    // its attempt counted (the request was sent).
    QList<store::Release> abandonAll();

    // ClaimOptions::createdFrom, refreshed every poll interval so that claims
    // start past the index entries of rows delivered since the last vacuum.
    // A routing dispatcher keeps one for each set of destinations it claims
    // for (all that may take events, or one with little room): the floor of
    // {b} lies past the older backlog of a destination a that is open or
    // full, which the floor of {a, b} does not. Cleared (no bound) on a new
    // connection or namespace, and when a circuit opens or closes.
    void refreshFloor(store::OutboxStore &store, const QString &nameSpace,
                      const QList<store::ClaimRoute> &routes = {});
    void clearFloor() { m_floors.clear(); }

private:
    struct Floor {
        QString from; // empty: no bound
        int refreshes = 0;
    };
    // The floor of the destinations `routes` may claim for, found now when
    // there is none yet.
    QString floorFor(store::OutboxStore &store, const QString &nameSpace,
                     const QList<store::ClaimRoute> &routes);
    void refreshOne(store::OutboxStore &store, const QString &nameSpace,
                    const QList<store::ClaimRoute> &routes, Floor &floor);

    QHash<QUuid, Flight> m_flights;
    QHash<QString, Floor> m_floors; // by the claimable destinations, joined
    static constexpr int kFullFloorEvery = 5;
    bool m_backlog = false;
};

} // namespace outbox::dispatch
