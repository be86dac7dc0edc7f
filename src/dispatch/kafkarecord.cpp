#include "dispatch/kafkarecord.h"

#include "core/uuidtext.h"

namespace outbox::dispatch {

core::Result<KafkaRecord> kafkaRecord(const core::KafkaSettings &settings,
                                      const store::ClaimedEvent &event) {
    KafkaRecord record;
    if (settings.topicFromEvent) {
        if (const QString problem = core::KafkaSettings::topicNameProblem(event.topic);
            !problem.isEmpty())
            return core::Error{core::ErrorKind::Invalid,
                               QStringLiteral("the event's topic \"%1\" cannot be a Kafka topic "
                                              "(%2); deliver it with a fixed topic (topic = NAME) "
                                              "or enqueue it under a valid topic name")
                                   .arg(event.topic, problem)};
        record.topic = event.topic.toUtf8();
    } else {
        record.topic = settings.topic.toUtf8();
    }
    const QByteArray id = core::uuidText(event.id).toLatin1();
    record.key = event.aggregateType && event.aggregateId
                     ? (*event.aggregateType + u':' + *event.aggregateId).toUtf8()
                     : id;
    auto &headers = record.headers;
    headers.append({kKafkaIdHeader, id});
    headers.append({"outbox-namespace", event.nameSpace.toUtf8()});
    headers.append({"outbox-topic", event.topic.toUtf8()});
    headers.append(
        {"outbox-created-at", event.createdAt.toUTC().toString(Qt::ISODateWithMs).toLatin1()});
    headers.append({"outbox-attempt", QByteArray::number(event.attempts)});
    if (event.tenantId)
        headers.append({"outbox-tenant", core::uuidText(*event.tenantId).toLatin1()});
    if (event.dedupeKey)
        headers.append({"outbox-dedupe-key", event.dedupeKey->toUtf8()});
    if (event.traceparent)
        headers.append({"traceparent", event.traceparent->toLatin1()});
    if (event.tracestate)
        headers.append({"tracestate", event.tracestate->toLatin1()});
    return record;
}

} // namespace outbox::dispatch
