#pragma once

#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "dispatch/publisher.h"
#include "store/outboxstore.h"

#include <QDateTime>
#include <QList>
#include <QUuid>

#include <optional>

namespace outbox::dispatch {

// The dispatcher's buffered outcomes: acks and nacks collected between
// flushes and written with one statement each. A failed statement keeps its
// part of the buffer for the next flush (after a reconnect): an ack is never
// dropped, at worst the event is delivered again. Dispatcher-internal.
class AckBuffer final {
public:
    // The outcome of one attempt at a row created at `createdAt`: an ack
    // when delivered, else a nack (dead at once when permanent, otherwise
    // due again after `retryDelay`); a returned row's lease is released with
    // its attempt given back.
    void add(const PublishOutcome &outcome, const QDateTime &createdAt, core::Millis retryDelay);

    int ackCount() const { return int(m_acks.size()); }
    int nackCount() const { return int(m_nacks.size()); }
    int size() const { return ackCount() + nackCount() + int(m_returns.size()); }
    bool isEmpty() const { return m_acks.isEmpty() && m_nacks.isEmpty() && m_returns.isEmpty(); }
    void clear();

    struct Flushed {
        // The earliest retry among the applied nacks (to schedule a claim).
        std::optional<core::Millis> soonestRetry;
    };
    // Writes acks, then nacks, and counts what happened into `stats`
    // (delivered, retried, dead, fencedOut, commit->delivered latency).
    core::Result<Flushed> flush(store::OutboxStore &store, const QUuid &workerId, int maxAttempts,
                                DispatcherStats &stats);

private:
    struct PendingAck {
        QUuid id;
        int attempts = 0;
        QDateTime createdAt;
    };

    QList<PendingAck> m_acks;
    QList<store::Nack> m_nacks;
    QList<store::Release> m_returns;
};

} // namespace outbox::dispatch
