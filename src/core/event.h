#pragma once

#include "core/status.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::core {

// One row of outbox_events as the console and outboxctl see it.
struct OutboxEvent {
    QUuid id;
    QString nameSpace; // "namespace" is a keyword
    QString topic;
    std::optional<QString> aggregateType;
    std::optional<QString> aggregateId;
    std::optional<QUuid> tenantId;
    std::optional<QString> dedupeKey;
    QByteArray payload; // JSON text, exactly as stored
    Status status = Status::Pending;
    int attempts = 0;
    QDateTime nextAttemptAt;
    std::optional<QUuid> lockedBy;
    QDateTime lockedUntil; // null when not leased
    std::optional<QString> lastError;
    QDateTime deliveredAt;
    QDateTime createdAt;
    QDateTime updatedAt;
    std::optional<QUuid> replayOf; // set on events made by replay
    // The event's own limit of delivery attempts; none: the dispatcher's.
    std::optional<int> maxAttempts;
    // W3C trace context the producer attached (validated by the database).
    std::optional<QString> traceparent;
    std::optional<QString> tracestate;

    friend bool operator==(const OutboxEvent &, const OutboxEvent &) = default;
};

// The trace id of a W3C traceparent ("00-<trace id>-<parent id>-<flags>"):
// its 32 hex digits; empty without one.
inline QString traceIdOf(const std::optional<QString> &traceparent) {
    return traceparent && traceparent->size() >= 35 ? traceparent->mid(3, 32) : QString();
}

// "attempt 3 of 5" with the event's own limit, "attempt 3" without one (the
// limit is then the dispatcher's --max-attempts, which the event does not
// know).
inline QString attemptOfText(int attempt, const std::optional<int> &maxAttempts) {
    return maxAttempts ? QStringLiteral("attempt %1 of %2").arg(attempt).arg(*maxAttempts)
                       : QStringLiteral("attempt %1").arg(attempt);
}

// One failed delivery attempt (outbox_attempts).
struct AttemptRecord {
    QUuid eventId;
    int attempt = 0;
    QDateTime at;
    std::optional<QUuid> workerId;
    std::optional<int> httpStatus;
    qint64 durationMs = 0;
    QString error;

    friend bool operator==(const AttemptRecord &, const AttemptRecord &) = default;
};

// One operator action (outbox_audit).
struct AuditRecord {
    qint64 id = 0;
    QDateTime at;
    QString dbUser;
    QString osUser;
    QString host;
    QString action; // requeue, retry, cancel, purge, replay
    QString filter; // human-readable description of what was targeted
    qint64 affected = 0;
    qint64 skipped = 0;

    friend bool operator==(const AuditRecord &, const AuditRecord &) = default;
};

} // namespace outbox::core
