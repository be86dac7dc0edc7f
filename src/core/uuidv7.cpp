#include "core/uuidv7.h"

#include <QRandomGenerator>

#include <algorithm>
#include <atomic>

namespace outbox::core {

namespace {

constexpr quint64 kMaxTimestamp = (quint64(1) << 48) - 1;

quint64 clampToTimestamp(qint64 msecs) {
    if (msecs < 0)
        return 0;
    return std::min(quint64(msecs), kMaxTimestamp);
}

// Lays out 48 bits of milliseconds, the version, 12 bits of rand_a, the
// variant and 62 bits of rand_b (RFC 9562 §5.7).
QUuid build(quint64 timestamp, quint16 randA, quint64 randB) {
    QUuid id;
    id.data1 = uint(timestamp >> 16);
    id.data2 = ushort(timestamp & 0xFFFF);
    id.data3 = ushort(0x7000 | (randA & 0x0FFF));
    const quint64 low = (quint64(0x2) << 62) | (randB & ((quint64(1) << 62) - 1));
    for (int i = 0; i < 8; ++i)
        id.data4[i] = uchar(low >> (56 - 8 * i));
    return id;
}

} // namespace

QUuid createUuidV7() {
    // The process-wide (timestamp, counter) pair is the one piece of shared
    // mutable state the contract needs: monotonic ids across threads cannot
    // be had without it. It is packed as timestamp << 16 | counter so that
    // one atomic compare-and-swap advances both, and a counter overflow
    // carries into the timestamp (RFC 9562 §6.2: borrow from the next
    // millisecond rather than repeat or go back).
    static std::atomic<quint64> s_state{0};

    QRandomGenerator *rng = QRandomGenerator::global();
    const quint64 now = clampToTimestamp(QDateTime::currentMSecsSinceEpoch());
    // A fresh millisecond starts the counter at a random value below 2^15,
    // leaving at least 2^15 increments before the carry.
    const quint64 fresh = (now << 16) | (rng->generate() & 0x7FFF);
    quint64 previous = s_state.load(std::memory_order_relaxed);
    quint64 next = 0;
    do {
        next = std::max(fresh, previous + 1);
    } while (!s_state.compare_exchange_weak(previous, next, std::memory_order_relaxed));

    const quint64 timestamp = next >> 16;
    const quint16 counter = quint16(next & 0xFFFF);
    // The top 12 counter bits fill rand_a, the low 4 lead rand_b; the rest
    // of rand_b is random so that ids from other processes do not collide.
    const quint64 randB = (quint64(counter & 0xF) << 58) | (rng->generate64() >> 6);
    return build(timestamp, quint16(counter >> 4), randB);
}

QUuid createUuidV7(const QDateTime &at) {
    QRandomGenerator *rng = QRandomGenerator::global();
    return build(clampToTimestamp(at.toMSecsSinceEpoch()), quint16(rng->generate()),
                 rng->generate64());
}

QDateTime uuidV7Time(const QUuid &id) {
    if ((id.data3 >> 12) != 7 || (id.data4[0] & 0xC0) != 0x80)
        return QDateTime();
    const qint64 msecs = (qint64(id.data1) << 16) | id.data2;
    return QDateTime::fromMSecsSinceEpoch(msecs, Qt::UTC);
}

} // namespace outbox::core
