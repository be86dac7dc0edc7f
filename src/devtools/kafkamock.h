#pragma once

// librdkafka's mock cluster (a real Kafka protocol server on loopback ports,
// in this process) and a consumer that reads a topic back, for the Kafka
// delivery tests and the benchmark's kafka phase.

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

#include <cstdint>

struct rd_kafka_s;
struct rd_kafka_mock_cluster_s;

namespace outbox::devtools {

// One record as a consumer reads it.
struct KafkaReadRecord {
    QString topic;
    int partition = -1;
    qint64 offset = -1;
    QByteArray key;
    QByteArray value;
    QList<QPair<QByteArray, QByteArray>> headers;

    QByteArray header(const QByteArray &name) const; // null when absent
};

class KafkaMockCluster final {
public:
    explicit KafkaMockCluster(int brokers = 1);
    ~KafkaMockCluster();
    KafkaMockCluster(const KafkaMockCluster &) = delete;
    KafkaMockCluster &operator=(const KafkaMockCluster &) = delete;

    bool isRunning() const { return m_cluster != nullptr; }
    QString error() const { return m_error; }
    // host:port,... for bootstrap.servers
    QString bootstrapServers() const;

    bool createTopic(const QString &topic, int partitions, int replicationFactor = 1);
    // The next `errors.size()` requests of `apiKey` (0: Produce) fail with
    // these errors, in order.
    static constexpr int16_t Produce = 0;
    void pushRequestErrors(int16_t apiKey, const QList<int> &errors);
    // The next request of `apiKey` to broker `brokerId` (ids start at 1) is
    // answered with `error` after `rttMs`: a produce that times out in
    // flight yet is written.
    bool delayNextRequest(int brokerId, int16_t apiKey, int rttMs, int error = 0);
    // Every answer of broker `brokerId` (-1: all) is delayed by `rttMs`.
    bool setBrokerRtt(int brokerId, int rttMs);
    // -1: every broker.
    bool setBrokerDown(int brokerId = -1);
    bool setBrokerUp(int brokerId = -1);

    // Every record of `topic` up to the end of each partition as it is
    // now; empty, with `error` set, when the topic cannot be read in
    // `timeoutMs`.
    QList<KafkaReadRecord> readAll(const QString &topic, QString *error = nullptr,
                                   int timeoutMs = 30000) const;

private:
    rd_kafka_s *m_handle = nullptr; // the dummy producer that owns the cluster
    rd_kafka_mock_cluster_s *m_cluster = nullptr;
    QString m_error;
};

} // namespace outbox::devtools
