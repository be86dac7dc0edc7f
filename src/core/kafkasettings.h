#pragma once

#include "core/result.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringView>

namespace outbox::core {

// Where a Kafka (or Redpanda) destination delivers, read from name = value
// properties (a route's, or outboxctl dispatch's --kafka-* flags):
//   brokers            bootstrap servers, host:port[,host:port...] (required)
//   topic              the Kafka topic every event goes to, or
//   topic-from-event   true: each event goes to the Kafka topic named by its
//                      own topic
//   kafka.<property>   any librdkafka producer property, passed through
//                      (security.protocol, ssl.ca.location, sasl.mechanisms,
//                      sasl.username, ...)
//   sasl.password-file a file whose first line is the SASL password, or
//   sasl.password-env  the environment variable that holds it.
// A password is never taken as a value (kafka.sasl.password is refused):
// command lines and route files are read by others. The properties the
// delivery guarantee rests on (idempotence, acks, the message timeout) are
// set by the publisher and refused here.
struct KafkaSettings {
    QString brokers;
    QString topic; // empty when topicFromEvent
    bool topicFromEvent = false;
    QList<QPair<QString, QString>> properties; // librdkafka names, without "kafka."
    QString saslPassword;                      // from the file or variable; never shown

    static Result<KafkaSettings> fromProperties(const QList<QPair<QString, QString>> &props);

    // Kafka's rule: 1 to 249 of [a-zA-Z0-9._-], not "." or "..".
    static bool isValidTopicName(QStringView name);
    // Why `name` is not a topic name and what to do, or empty when it is one.
    static QString topicNameProblem(QStringView name);

    // Brokers, topic and properties on one line, without the password.
    QString describe() const;
};

} // namespace outbox::core
