#include "devtools/kafkamock.h"

#include <QElapsedTimer>
#include <QUuid>

#include <array>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <memory>
#include <vector>

namespace outbox::devtools {

namespace {

struct HandleDeleter {
    void operator()(rd_kafka_t *rk) const { rd_kafka_destroy(rk); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

void quiet(const rd_kafka_t *, int, const char *, const char *) {}

// A client of the cluster: `properties` on top of the bootstrap servers.
Handle client(rd_kafka_type_t type, const QString &bootstrap,
              const QList<QPair<const char *, QByteArray>> &properties, QString *error) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    std::array<char, 512> reason{};
    auto set = [&](const char *name, const QByteArray &value) {
        return rd_kafka_conf_set(conf, name, value.constData(), reason.data(), reason.size()) ==
               RD_KAFKA_CONF_OK;
    };
    bool ok = bootstrap.isEmpty() || set("bootstrap.servers", bootstrap.toUtf8());
    for (const auto &[name, value] : properties)
        ok = ok && set(name, value);
    rd_kafka_conf_set_log_cb(conf, quiet);
    rd_kafka_t *rk = ok ? rd_kafka_new(type, conf, reason.data(), reason.size()) : nullptr;
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        if (error)
            *error = QString::fromUtf8(reason.data());
    }
    return Handle(rk);
}

} // namespace

QByteArray KafkaReadRecord::header(const QByteArray &name) const {
    for (const auto &[headerName, headerValue] : headers) {
        if (headerName == name)
            return headerValue.isNull() ? QByteArray("") : headerValue;
    }
    return {};
}

KafkaMockCluster::KafkaMockCluster(int brokers) {
    Handle handle = client(RD_KAFKA_PRODUCER, {}, {}, &m_error);
    if (!handle)
        return;
    m_cluster = rd_kafka_mock_cluster_new(handle.get(), brokers);
    if (!m_cluster) {
        m_error = QStringLiteral("rd_kafka_mock_cluster_new failed");
        return;
    }
    m_handle = handle.release();
}

KafkaMockCluster::~KafkaMockCluster() {
    if (m_cluster)
        rd_kafka_mock_cluster_destroy(m_cluster);
    if (m_handle)
        rd_kafka_destroy(m_handle);
}

QString KafkaMockCluster::bootstrapServers() const {
    return m_cluster ? QString::fromUtf8(rd_kafka_mock_cluster_bootstraps(m_cluster)) : QString();
}

bool KafkaMockCluster::createTopic(const QString &topic, int partitions, int replicationFactor) {
    return m_cluster &&
           rd_kafka_mock_topic_create(m_cluster, topic.toUtf8().constData(), partitions,
                                      replicationFactor) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

void KafkaMockCluster::pushRequestErrors(int16_t apiKey, const QList<int> &errors) {
    std::vector<rd_kafka_resp_err_t> codes;
    for (int error : errors)
        codes.push_back(rd_kafka_resp_err_t(error));
    rd_kafka_mock_push_request_errors_array(m_cluster, apiKey, codes.size(), codes.data());
}

bool KafkaMockCluster::delayNextRequest(int brokerId, int16_t apiKey, int rttMs, int error) {
    return rd_kafka_mock_broker_push_request_error_rtts(m_cluster, brokerId, apiKey, 1,
                                                        rd_kafka_resp_err_t(error),
                                                        rttMs) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaMockCluster::setBrokerRtt(int brokerId, int rttMs) {
    return rd_kafka_mock_broker_set_rtt(m_cluster, brokerId, rttMs) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaMockCluster::setBrokerDown(int brokerId) {
    return rd_kafka_mock_broker_set_down(m_cluster, brokerId) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

bool KafkaMockCluster::setBrokerUp(int brokerId) {
    return rd_kafka_mock_broker_set_up(m_cluster, brokerId) == RD_KAFKA_RESP_ERR_NO_ERROR;
}

QList<KafkaReadRecord> KafkaMockCluster::readAll(const QString &topic, QString *error,
                                                 int timeoutMs) const {
    QString failure;
    const auto fail = [&](const QString &message) {
        if (error)
            *error = message;
        return QList<KafkaReadRecord>();
    };
    Handle consumer = client(RD_KAFKA_CONSUMER, bootstrapServers(),
                             {{"group.id", QUuid::createUuid().toByteArray(QUuid::WithoutBraces)},
                              {"enable.auto.commit", "false"},
                              {"enable.partition.eof", "false"}},
                             &failure);
    if (!consumer)
        return fail(failure);
    const QByteArray name = topic.toUtf8();

    // The partitions, and where each ends now.
    int partitions = 0;
    {
        rd_kafka_topic_t *handle = rd_kafka_topic_new(consumer.get(), name.constData(), nullptr);
        const rd_kafka_metadata_t *metadata = nullptr;
        const rd_kafka_resp_err_t err =
            rd_kafka_metadata(consumer.get(), 0, handle, &metadata, timeoutMs);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR && metadata->topic_cnt == 1)
            partitions = metadata->topics[0].partition_cnt;
        if (metadata)
            rd_kafka_metadata_destroy(metadata);
        rd_kafka_topic_destroy(handle);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR || partitions == 0)
            return fail(QStringLiteral("no metadata for %1: %2")
                            .arg(topic, QString::fromUtf8(rd_kafka_err2str(err))));
    }
    std::vector<int64_t> ends(size_t(partitions), 0);
    rd_kafka_topic_partition_list_t *assignment = rd_kafka_topic_partition_list_new(partitions);
    qint64 remaining = 0;
    for (int p = 0; p < partitions; ++p) {
        int64_t low = 0;
        if (const auto err = rd_kafka_query_watermark_offsets(consumer.get(), name.constData(), p,
                                                              &low, &ends[size_t(p)], timeoutMs);
            err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_topic_partition_list_destroy(assignment);
            return fail(QStringLiteral("no offsets for %1/%2: %3")
                            .arg(topic)
                            .arg(p)
                            .arg(QString::fromUtf8(rd_kafka_err2str(err))));
        }
        remaining += ends[size_t(p)] - low;
        rd_kafka_topic_partition_list_add(assignment, name.constData(), p)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_assign(consumer.get(), assignment);
    rd_kafka_topic_partition_list_destroy(assignment);

    QList<KafkaReadRecord> records;
    QElapsedTimer clock;
    clock.start();
    while (remaining > 0) {
        if (clock.elapsed() > timeoutMs)
            return fail(
                QStringLiteral("%1 records of %2 not read in time").arg(remaining).arg(topic));
        rd_kafka_message_t *message = rd_kafka_consumer_poll(consumer.get(), 200);
        if (!message)
            continue;
        if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
            message->offset < ends[size_t(message->partition)]) {
            KafkaReadRecord record;
            record.topic = topic;
            record.partition = message->partition;
            record.offset = message->offset;
            record.key =
                QByteArray(static_cast<const char *>(message->key), qsizetype(message->key_len));
            record.value =
                QByteArray(static_cast<const char *>(message->payload), qsizetype(message->len));
            rd_kafka_headers_t *headers = nullptr;
            if (rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
                const char *headerName = nullptr;
                const void *value = nullptr;
                size_t size = 0;
                for (size_t i = 0; rd_kafka_header_get_all(headers, i, &headerName, &value,
                                                           &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
                     ++i)
                    record.headers.append(
                        {QByteArray(headerName),
                         QByteArray(static_cast<const char *>(value), qsizetype(size))});
            }
            records.append(record);
            --remaining;
        }
        rd_kafka_message_destroy(message);
    }
    rd_kafka_consumer_close(consumer.get());
    return records;
}

} // namespace outbox::devtools
