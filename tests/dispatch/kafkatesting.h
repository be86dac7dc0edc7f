#pragma once

// Helpers of the Kafka delivery tests: librdkafka's mock cluster
// (devtools/kafkamock.h), a dispatcher whose publisher produces to it, and the
// records read back, by event id.

#include "core/kafkasettings.h"
#include "devtools/kafkamock.h"
#include "dispatch/kafkapublisher.h"
#include "dispatch/kafkarecord.h"
#include "dispatchtesting.h"

#include <QHash>

namespace outbox::testing {

inline const QString kKafkaTopic = QStringLiteral("outbox.events");

// brokers = the cluster's, topic = outbox.events, then `more`.
inline core::KafkaSettings kafkaSettings(const devtools::KafkaMockCluster &cluster,
                                         const QList<QPair<QString, QString>> &more = {}) {
    QList<QPair<QString, QString>> properties{
        {QStringLiteral("brokers"), cluster.bootstrapServers()}};
    if (std::none_of(more.begin(), more.end(), [](const auto &property) {
            return property.first == QLatin1String("topic-from-event");
        }))
        properties.append({QStringLiteral("topic"), kKafkaTopic});
    properties += more;
    auto settings = core::KafkaSettings::fromProperties(properties);
    if (!settings)
        qWarning("%s", qPrintable(settings.errorMessage()));
    return settings ? settings.value() : core::KafkaSettings();
}

inline dispatch::PublisherFactory kafkaFactory(const core::KafkaSettings &settings) {
    return [settings]() -> std::unique_ptr<dispatch::Publisher> {
        auto made = dispatch::makeKafkaPublisher(settings);
        if (!made)
            qWarning("%s", qPrintable(made.errorMessage()));
        return made ? std::move(made).value() : nullptr;
    };
}

// baseConfig() for Kafka: the runner URL is not used; a short request
// timeout (the message timeout) so that failures come back quickly, and
// room for many attempts.
inline core::DispatcherConfig kafkaConfig() {
    auto config = baseConfig(QUrl(QStringLiteral("http://kafka.invalid/")));
    config.requestTimeout = core::Millis(2000);
    config.maxAttempts = 100;
    return config;
}

// The records by their id header, in the order read (per partition: the
// order written).
inline QHash<QByteArray, QList<devtools::KafkaReadRecord>>
recordsById(const QList<devtools::KafkaReadRecord> &records) {
    QHash<QByteArray, QList<devtools::KafkaReadRecord>> byId;
    for (const auto &record : records)
        byId[record.header(dispatch::kKafkaIdHeader)].append(record);
    return byId;
}

// Events 1..count of `aggregates` aggregates "order:<g % aggregates>", one
// transaction, payload {"n": g}.
inline bool enqueueAggregates(QSqlDatabase db, int count, int aggregates) {
    return sqlExec(db,
                   QStringLiteral("SELECT outbox_enqueue('test', 'order.changed', "
                                  "jsonb_build_object('n', g), NULL, NULL, 'order', "
                                  "(g % ?::int)::text) FROM generate_series(1, ?::int) g"),
                   {aggregates, count});
}

} // namespace outbox::testing
