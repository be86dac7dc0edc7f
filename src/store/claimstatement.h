#pragma once

#include "core/dispatcherconfig.h"

#include <QList>
#include <QString>

#include <limits>

namespace outbox::store {

// The claim as OutboxStore prepares it ('?' placeholders: with `routes` > 0
// (a routing dispatcher's number of routes) the routes as JSON
// (routesJson()); max attempts, the created_at floor, the namespace when
// `byNamespace`, the batch size, then in aggregate order the same four
// again; then the worker and the lease in ms).
QString claimStatement(bool byNamespace, core::Ordering ordering, int routes = 0);

// A route of a routing dispatcher, as its claim tests it: the event's
// namespace and topic against SQL LIKE patterns (core::globToLike), in
// order; the first match decides. An event whose first matching route's
// destination is not claimable (open circuit, full) or paused
// (outbox_destination_pauses) is not claimed, nor an event no route matches.
struct ClaimRoute {
    QString namespaceLike;
    QString topicLike;
    QString destination;
    bool claimable = true;
    // How many events its destination may take now (a limit below the
    // dispatcher's window: the claim takes no more than that).
    int room = std::numeric_limits<int>::max();
};
QString routesJson(const QList<ClaimRoute> &routes);
// The CTE "dr" of the routes (one '?': routesJson()), and the condition
// " AND ..." that a row of `table` may be claimed by `routes` routes.
QString routesCte();
QString routedCondition(const QString &table, int routes);

// OutboxStore::claimFloor() ('?' placeholders: with `routes` > 0 the routes
// as JSON; the margin in ms, the namespace when `byNamespace`; with routes
// the lower bound).
QString claimFloorStatement(bool byNamespace, int routes = 0);

} // namespace outbox::store
