#pragma once

#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "store/outboxstore.h"

#include <QList>
#include <QUuid>

namespace outbox::dispatch {

// The leases a stopping dispatcher hands back: the rows still in flight after
// the grace period (at once on abort). Written with one statement; a failed
// statement keeps them for another try after a reconnect, and rows never
// written are claimed again when their leases expire. Dispatcher-internal.
class LeaseReleases final {
public:
    void add(const QList<store::Release> &releases) { m_releases.append(releases); }
    int size() const { return int(m_releases.size()); }
    bool isEmpty() const { return m_releases.isEmpty(); }
    void clear() { m_releases.clear(); }

    // Rows cut off at their last attempt end dead (as the dead sweep would
    // have ended them), the others are pending again, due now. Counts into
    // `stats` (released, swept).
    core::Result<void> write(store::OutboxStore &store, const QUuid &workerId, int maxAttempts,
                             DispatcherStats &stats);

private:
    QList<store::Release> m_releases;
};

} // namespace outbox::dispatch
