#pragma once

#include "cli/commandparser.h"
#include "core/kafkasettings.h"
#include "dispatch/publisher.h"

#include <optional>

namespace outbox::cli {

// `outboxctl dispatch`'s one-destination Kafka form, bound to `target` (set
// when --kafka-brokers is given): --kafka-brokers, --kafka-topic or
// --kafka-topic-from-event, --kafka-property NAME=VALUE (repeatable, any
// librdkafka property), --kafka-password-file. Errors name the flag and the
// fix; librdkafka properties are checked here too.
OptionTable kafkaFlags(std::optional<core::KafkaSettings> &target);

// The dispatcher's publisher for `settings`.
dispatch::PublisherFactory kafkaPublisherFactory(const core::KafkaSettings &settings);

} // namespace outbox::cli
