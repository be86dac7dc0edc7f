#pragma once

#include "core/duration.h"
#include "core/result.h"
#include "store/outboxstore.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::dispatch {

// The batch format of the delivery contract (docs/RUNNER-CONTRACT.md): a body
// {"events": [ {...}, ... ]} whose elements carry an event's id, namespace,
// topic, tenant_id, aggregate_type, aggregate_id, idempotency_key, attempt,
// created_at, traceparent and tracestate (W3C trace context, null when the
// producer attached none) and payload (the stored JSON as is), and the
// runner's optional
// answer {"failed": [{"id", "error", "retry_after", "permanent"}]}.

// The header that marks a request as a batch; its value is the number of
// events in the body.
inline constexpr char kBatchHeader[] = "Outbox-Batch";

struct Batch {
    QList<store::ClaimedEvent> events;
    QByteArray body;
};

// One event as an element of the "events" array.
QByteArray batchElement(const store::ClaimedEvent &event);

// Packs `events` in their order into batches of at most `maxEvents` events
// and `maxBytes` bytes of body; an event whose element alone passes
// `maxBytes` travels in a batch of its own.
QList<Batch> packBatches(const QList<store::ClaimedEvent> &events, int maxEvents, qint64 maxBytes);

// An event the runner listed as failed in a 2xx answer.
struct BatchFailure {
    QUuid id;
    QString error;
    std::optional<core::Millis> retryAfter;
    bool permanent = false;
};

// Reads a 2xx answer: an empty body, or one that is not a JSON object, means
// every event was delivered; an object lists the failed ones (none when it
// has no "failed"). A body that starts like an object but is not valid JSON,
// or a "failed" that is not an array of objects with an "id", is an error:
// the caller then retries the whole batch rather than guess.
core::Result<QList<BatchFailure>> parseBatchReply(const QByteArray &body);

} // namespace outbox::dispatch
