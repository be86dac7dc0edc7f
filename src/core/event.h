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

    friend bool operator==(const OutboxEvent &, const OutboxEvent &) = default;
};

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
