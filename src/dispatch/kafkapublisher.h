#pragma once

#include "core/kafkasettings.h"
#include "dispatch/publisher.h"

#include <QHash>
#include <QList>
#include <QTimer>

#include <chrono>
#include <memory>

struct rd_kafka_s;
struct rd_kafka_queue_s;
struct rd_kafka_topic_s;
struct rd_kafka_message_s;

class QSocketNotifier;

namespace outbox::dispatch {

// Delivers claimed events to Kafka or Redpanda (librdkafka): one record per
// event (kafkarecord.h), produced by an idempotent producer with acks=all, so
// that librdkafka's own retries neither duplicate nor reorder a partition.
//
// The outcome of an event is its delivery report:
//  - persisted: Delivered (the row is acked only then);
//  - not persisted: Retry, with the usual backoff;
//  - possibly persisted (a timeout while the produce was in flight): Retry,
//    marked maybeDuplicated, with the error "may be duplicated: consumers
//    deduplicate on the id header";
//  - a record too large for the producer or broker: Permanent.
// Delivery reports are served in the thread the publisher lives in (the
// dispatcher's) when librdkafka signals its queue through a pipe
// (QSocketNotifier), never by a blocking poll or flush.
//
// message.timeout.ms is the dispatcher's request timeout, so a report comes
// before the lease ends; an event without one by half-way between the
// request timeout and the lease is given up as "may be duplicated". A
// fatal producer error (e.g. of the idempotent producer) rebuilds the
// producer: the events still in flight on the old one are retried, as
// "may be duplicated", and none is acked.
class KafkaPublisher final : public Publisher {
    Q_OBJECT
public:
    // Checks every librdkafka property (name and value) and refuses with the
    // property's name and librdkafka's reason; no connection is made yet.
    static core::Result<std::unique_ptr<KafkaPublisher>> create(core::KafkaSettings settings,
                                                                QObject *parent = nullptr);
    ~KafkaPublisher() override;
    Q_DISABLE_COPY_MOVE(KafkaPublisher)

    // Makes the producer on the first call (a TLS file that cannot be read
    // and the like are refused here). A changed request timeout applies when
    // the producer is next idle.
    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void abortAll() override;
    int inFlight() const override { return int(m_pending.size()); }

    // Producers made so far (the first, and one per rebuild).
    int producersMade() const { return m_producersMade; }

private:
    explicit KafkaPublisher(core::KafkaSettings settings, QObject *parent);

    struct Pending {
        store::ClaimedEvent event;
        std::chrono::steady_clock::time_point started;
        std::chrono::steady_clock::time_point deadline;
        std::optional<PublishOutcome> outcome; // decided, not emitted yet
    };

    core::Result<void> makeProducer();
    void destroyProducer();
    void rebuild(const QString &reason);
    void serve(); // delivery reports and errors, then the outcomes
    void checkDeadlines();
    void onDeliveryReport(const rd_kafka_message_s *message);
    void onError(int error, const char *reason);
    // Records the outcome of `token`, emitted by emitReady() (never from
    // inside librdkafka's callbacks or publish()).
    void decide(quint64 token, PublishOutcome outcome);
    void emitReady();
    void emitSoon();

    static void deliveryReportCallback(rd_kafka_s *rk, const rd_kafka_message_s *message,
                                       void *opaque);
    static void errorCallback(rd_kafka_s *rk, int error, const char *reason, void *opaque);

    core::KafkaSettings m_settings;
    core::DispatcherConfig m_config;
    std::chrono::milliseconds m_producerTimeout{0}; // message.timeout.ms of m_producer
    rd_kafka_s *m_producer = nullptr;
    rd_kafka_queue_s *m_queue = nullptr; // its main queue, signalling m_wakeFds
    rd_kafka_topic_s *m_topic = nullptr; // the fixed topic, known before the first produce
    int m_wakeFds[2] = {-1, -1};
    std::unique_ptr<QSocketNotifier> m_wake;
    QTimer m_tick; // deadlines, and a poll in case a wake-up was missed
    QTimer m_emitTimer;
    QString m_producerError; // why there is no producer
    QString m_fatal;         // set by the error callback
    int m_producersMade = 0;

    QHash<quint64, Pending> m_pending;
    QList<quint64> m_ready;
    quint64 m_nextToken = 1;
};

// What a route of kind kafka (and outboxctl dispatch --kafka-*) makes.
core::Result<std::unique_ptr<Publisher>> makeKafkaPublisher(const core::KafkaSettings &settings,
                                                            QObject *parent = nullptr);

} // namespace outbox::dispatch
