#pragma once

#include "core/kafkasettings.h"
#include "store/outboxstore.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace outbox::dispatch {

// One outbox event as a Kafka record (docs/OPERATING.md, "Delivering to
// Kafka"). The value is the payload exactly as stored.
struct KafkaRecord {
    QByteArray topic;
    // "aggregate_type:aggregate_id" when both are set, so that an aggregate
    // stays in one partition and in order; else the event id.
    QByteArray key;
    // outbox-id (the event id: the value runners get as webhook-id; consumers
    // deduplicate on it), outbox-namespace, outbox-topic, outbox-created-at
    // (ISO 8601 UTC), outbox-attempt, outbox-tenant and outbox-dedupe-key when
    // set, traceparent / tracestate when the producer attached trace context.
    QList<QPair<QByteArray, QByteArray>> headers;
};

// The name of the id header consumers deduplicate on.
inline constexpr char kKafkaIdHeader[] = "outbox-id";

// The record of `event` for `settings`, or why it cannot be one (its topic is
// not a Kafka topic name when the Kafka topic is taken from the event).
core::Result<KafkaRecord> kafkaRecord(const core::KafkaSettings &settings,
                                      const store::ClaimedEvent &event);

} // namespace outbox::dispatch
