#include "dispatch/ackbuffer.h"

#include "core/logline.h"
#include "core/uuidtext.h"
#include "dispatch/logging.h"

#include <QSet>

#include <algorithm>

namespace outbox::dispatch {

void AckBuffer::add(const PublishOutcome &outcome, const QDateTime &createdAt,
                    core::Millis retryDelay) {
    if (outcome.kind == PublishOutcome::Kind::Returned) {
        m_returns.append(store::Release{outcome.id, outcome.attempts, false});
        return;
    }
    if (outcome.kind == PublishOutcome::Kind::Delivered) {
        m_acks.append(PendingAck{outcome.id, outcome.attempts, createdAt});
        return;
    }
    store::Nack nack;
    nack.id = outcome.id;
    nack.attempts = outcome.attempts;
    nack.error = outcome.error;
    nack.permanent = outcome.kind == PublishOutcome::Kind::Permanent;
    nack.delay = nack.permanent ? core::Millis(0) : retryDelay;
    nack.httpStatus = outcome.httpStatus;
    nack.duration = std::chrono::duration_cast<core::Millis>(outcome.duration);
    qCDebug(lcDispatch) << core::LogLine("attempt_failed")
                               .add("id", core::uuidText(outcome.id))
                               .add("attempt", outcome.attempts)
                               .add("outcome", outcomeKindName(outcome.kind))
                               .add("status", outcome.httpStatus
                                                  ? QString::number(*outcome.httpStatus)
                                                  : QStringLiteral("-"))
                               .add("retry_in_ms", nack.delay.count());
    m_nacks.append(std::move(nack));
}

void AckBuffer::clear() {
    m_acks.clear();
    m_nacks.clear();
    m_returns.clear();
}

core::Result<AckBuffer::Flushed> AckBuffer::flush(store::OutboxStore &store, const QUuid &workerId,
                                                  int maxAttempts, DispatcherStats &stats) {
    Flushed flushed;
    if (!m_acks.isEmpty()) {
        QList<store::Ack> acks;
        acks.reserve(m_acks.size());
        for (const PendingAck &ack : std::as_const(m_acks))
            acks.append(store::Ack{ack.id, ack.attempts});
        const auto result = store.ack(workerId, acks);
        if (!result)
            return result.error();
        const QSet<QUuid> fenced(result->fencedOut.cbegin(), result->fencedOut.cend());
        const QDateTime now = QDateTime::currentDateTimeUtc();
        for (const PendingAck &ack : std::as_const(m_acks)) {
            if (fenced.contains(ack.id)) {
                // Another worker owns the row now; it will deliver it (again).
                qCInfo(lcDispatch) << core::LogLine("ack_fenced_out")
                                          .add("id", core::uuidText(ack.id))
                                          .add("reason", "lease_lost");
                continue;
            }
            const qint64 latency = std::max<qint64>(ack.createdAt.msecsTo(now), 0) * 1000;
            stats.commitToDelivered.record(latency);
            stats.recentCommitToDelivered.record(latency);
        }
        stats.delivered += result->applied;
        stats.fencedOut += fenced.size();
        m_acks.clear();
    }
    if (!m_nacks.isEmpty()) {
        const auto result = store.nack(workerId, m_nacks, maxAttempts);
        if (!result)
            return result.error();
        const QSet<QUuid> fenced(result->fencedOut.cbegin(), result->fencedOut.cend());
        // The database decides which died: an event may have a limit of its own.
        const QSet<QUuid> dead(result->madeDead.cbegin(), result->madeDead.cend());
        for (const store::Nack &nack : std::as_const(m_nacks)) {
            if (fenced.contains(nack.id)) {
                qCInfo(lcDispatchEvents) << core::LogLine("nack_fenced_out")
                                                .add("id", core::uuidText(nack.id))
                                                .add("reason", "lease_lost");
                continue;
            }
            if (dead.contains(nack.id)) {
                ++stats.dead;
                qCInfo(lcDispatchEvents)
                    << core::LogLine("dead")
                           .add("id", core::uuidText(nack.id))
                           .add("attempts", nack.attempts)
                           .add("reason", nack.permanent ? QLatin1String("permanent")
                                                         : QLatin1String("max_attempts"));
            } else {
                ++stats.retried;
                flushed.soonestRetry =
                    flushed.soonestRetry ? std::min(*flushed.soonestRetry, nack.delay) : nack.delay;
            }
        }
        stats.fencedOut += fenced.size();
        m_nacks.clear();
    }
    if (!m_returns.isEmpty()) {
        const auto result = store.release(workerId, m_returns, maxAttempts);
        if (!result)
            return result.error();
        stats.released += result->applied;
        stats.fencedOut += result->fencedOut.size();
        m_returns.clear();
    }
    return flushed;
}

} // namespace outbox::dispatch
