#include "cli/kafkaflags.h"

#include "cli/serviceutil.h"
#include "dispatch/kafkapublisher.h"

namespace outbox::cli {

namespace {

const QString kBrokers = QStringLiteral("kafka-brokers");
const QString kTopic = QStringLiteral("kafka-topic");
const QString kTopicFromEvent = QStringLiteral("kafka-topic-from-event");
const QString kProperty = QStringLiteral("kafka-property");
const QString kPasswordFile = QStringLiteral("kafka-password-file");

core::Result<void> readKafkaFlags(const CommandParser &parser,
                                  std::optional<core::KafkaSettings> &target) {
    if (!parser.isSet(kBrokers)) {
        for (const QString &flag : {kTopic, kTopicFromEvent, kProperty, kPasswordFile}) {
            if (parser.isSet(flag))
                return usage(QStringLiteral("--%1 needs --kafka-brokers; give the broker list, "
                                            "e.g. --kafka-brokers kafka-1:9092,kafka-2:9092")
                                 .arg(flag));
        }
        return {};
    }
    QList<QPair<QString, QString>> properties{{QStringLiteral("brokers"), parser.value(kBrokers)}};
    if (parser.isSet(kTopic)) {
        const QString topic = parser.value(kTopic).trimmed();
        if (const QString problem = core::KafkaSettings::topicNameProblem(topic);
            !problem.isEmpty())
            return usage(QStringLiteral("--kafka-topic \"%1\": %2; give e.g. --kafka-topic "
                                        "outbox.events")
                             .arg(topic, problem));
        properties.append({QStringLiteral("topic"), topic});
    }
    if (parser.isSet(kTopicFromEvent))
        properties.append({QStringLiteral("topic-from-event"), QStringLiteral("true")});
    // Else the systemd credential kafka-password, as the unit loads it.
    if (const QString file = parser.isSet(kPasswordFile)
                                 ? parser.value(kPasswordFile)
                                 : credentialFile(QStringLiteral("kafka-password"));
        !file.isEmpty())
        properties.append({QStringLiteral("sasl.password-file"), file});
    for (const QString &property : parser.values(kProperty)) {
        const qsizetype equals = property.indexOf(u'=');
        if (equals <= 0)
            return usage(QStringLiteral("--kafka-property \"%1\" is not NAME=VALUE; give e.g. "
                                        "--kafka-property security.protocol=SASL_SSL")
                             .arg(property));
        const QString name = property.left(equals).trimmed();
        if (name == QLatin1String("sasl.password"))
            return usage(QStringLiteral("--kafka-property sasl.password: a password never goes on "
                                        "the command line, where ps shows it; put it in a file "
                                        "readable only by the dispatcher and give "
                                        "--kafka-password-file FILE"));
        properties.append({QStringLiteral("kafka.") + name, property.mid(equals + 1)});
    }
    auto settings = core::KafkaSettings::fromProperties(properties);
    if (!settings)
        return usage(QStringLiteral("Kafka (--kafka-*): ") % settings.errorMessage());
    // The librdkafka properties, before anything starts.
    if (auto made = dispatch::KafkaPublisher::create(settings.value()); !made)
        return usage(QStringLiteral("Kafka (--kafka-property): ") % made.errorMessage());
    target = std::move(settings).value();
    return {};
}

} // namespace

OptionTable kafkaFlags(std::optional<core::KafkaSettings> &target) {
    return {
        customOption(
            "kafka-brokers <list>",
            "Deliver to Kafka or Redpanda instead of a runner: the bootstrap servers, "
            "host:port,... (docs/OPERATING.md, \"Delivering to Kafka\").",
            [&target](const CommandParser &parser) { return readKafkaFlags(parser, target); }),
        Option(option("kafka-topic", "With --kafka-brokers: the Kafka topic of every event.",
                      "topic")),
        Option(option("kafka-topic-from-event",
                      "With --kafka-brokers: each event goes to the Kafka topic named by its "
                      "topic.")),
        Option(option("kafka-property",
                      "With --kafka-brokers: a librdkafka property, NAME=VALUE (repeatable), e.g. "
                      "security.protocol=SASL_SSL.",
                      "name=value")),
        Option(option("kafka-password-file",
                      "With --kafka-brokers: the file whose first line is the SASL password "
                      "(default: the systemd credential kafka-password, if any).",
                      "file")),
    };
}

dispatch::PublisherFactory kafkaPublisherFactory(const core::KafkaSettings &settings) {
    return [settings]() -> std::unique_ptr<dispatch::Publisher> {
        auto made = dispatch::makeKafkaPublisher(settings);
        return made ? std::move(made).value() : nullptr; // checked when the flags were read
    };
}

} // namespace outbox::cli
