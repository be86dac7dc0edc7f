#pragma once

#include <QDateTime>
#include <QUuid>

namespace outbox::core {

// RFC 9562 UUID version 7: 48-bit unix milliseconds, then random bits.
// Monotonic within one process: ids made in the same millisecond still sort
// in creation order (a counter in rand_a), safe to call from any thread.
QUuid createUuidV7();
QUuid createUuidV7(const QDateTime &at); // for tests; same layout

// The creation time embedded in a v7 id (invalid QDateTime for other versions).
QDateTime uuidV7Time(const QUuid &id);

} // namespace outbox::core
