#include "dispatch/leasereleases.h"

#include "core/logline.h"
#include "core/uuidtext.h"
#include "dispatch/logging.h"

namespace outbox::dispatch {

core::Result<void> LeaseReleases::write(store::OutboxStore &store, const QUuid &workerId,
                                        int maxAttempts, DispatcherStats &stats) {
    if (m_releases.isEmpty())
        return {};
    const auto released = store.release(workerId, m_releases, maxAttempts);
    if (!released)
        return released.error();
    const auto dead = released->madeDead.size();
    stats.released += released->applied - dead;
    stats.swept += dead;
    for (const QUuid &id : released->madeDead)
        qCInfo(lcDispatchEvents) << core::LogLine("dead")
                                        .add("id", core::uuidText(id))
                                        .add("attempts", maxAttempts)
                                        .add("reason", "last_attempt_cut_off_by_shutdown");
    m_releases.clear();
    return {};
}

} // namespace outbox::dispatch
