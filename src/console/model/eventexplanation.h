#pragma once

#include "console/model/registrywatcher.h"
#include "core/event.h"
#include "store/aggregateorder.h"

#include <QDateTime>
#include <QString>

#include <chrono>
#include <optional>

namespace outbox::console {

// What the console knows about dispatchers beyond one row: from the live
// counts (nothing processing) and from watching them over time.
struct DispatchActivity {
    qint64 processing = -1; // rows in processing now; -1 = unknown
    QDateTime lastActivity; // last time a claim or a delivery was seen; invalid = unknown
    // A due row older than this with no activity means nobody is dispatching.
    std::chrono::milliseconds grace{30000};
    // The dispatcher registry and the pauses, when the database has them:
    // "no dispatcher has heartbeat since ...", "paused by ..." instead of guesses.
    std::optional<RegistrySnapshot> registry;
};

struct Explanation {
    enum class Tone { Ok, Waiting, Warning, Error };
    Tone tone = Tone::Waiting;
    QString text; // one or two plain sentences
};

// The plain-language answer to "why is this event not delivered yet?":
// waiting for backoff until T, leased by W until T, lease expired, dead
// after N attempts, no dispatcher running, or delivered at T. `now` is the
// database clock. `blockedBy`: the unfinished earlier event of its aggregate,
// or the open producer transaction it waits for (EventDetail::blockedBy),
// named for dispatchers that deliver in aggregate order.
Explanation explainEvent(const core::OutboxEvent &event, const QDateTime &now,
                         const DispatchActivity &activity = {},
                         const std::optional<store::AggregateBlocker> &blockedBy = std::nullopt);

} // namespace outbox::console
