#include "cli/filteroptions.h"

namespace outbox::cli {

namespace {

core::Result<void> readIds(const CommandParser &parser, store::EventFilter &filter) {
    const QStringList texts = parser.values(QStringLiteral("id"));
    for (const QString &text : texts) {
        auto id = parseUuid(text);
        if (!id)
            return usage(QStringLiteral("--id: '%1' is not an event id (a UUID)").arg(text));
        filter.ids.append(*id);
    }
    return {};
}

core::Result<void> readStatus(const CommandParser &parser, store::EventFilter &filter) {
    if (!parser.isSet(QStringLiteral("status")))
        return {};
    const QString text = parser.value(QStringLiteral("status")).trimmed();
    if (text.compare(QLatin1String("retrying"), Qt::CaseInsensitive) == 0) {
        filter.status = core::Status::Pending;
        filter.retrying = true;
    } else if (auto status = core::statusFromName(text)) {
        filter.status = *status;
    } else {
        return usage(QStringLiteral("--status: unknown status '%1' (use pending, retrying, "
                                    "processing, delivered or dead)")
                         .arg(text));
    }
    return {};
}

// --created-before, read after --created-after.
core::Result<void> readCreatedBefore(const CommandParser &parser, store::EventFilter &filter) {
    auto before = parser.dateTime(QStringLiteral("created-before"));
    if (!before)
        return before.error();
    filter.createdTo = before.value().value_or(QDateTime());
    if (filter.createdFrom.isValid() && filter.createdTo.isValid() &&
        filter.createdFrom >= filter.createdTo)
        return usage(QStringLiteral("--created-after must be earlier than --created-before"));
    return {};
}

// --payload: a JSON object or array the payload must contain.
core::Result<void> readPayload(const CommandParser &parser, store::EventFilter &filter) {
    if (!parser.isSet(QStringLiteral("payload")))
        return {};
    filter.payloadContains = parser.value(QStringLiteral("payload")).trimmed();
    if (filter.payloadContains.isEmpty())
        return usage(QStringLiteral("--payload must not be empty"));
    if (const QString problem = store::payloadFilterProblem(filter.payloadContains);
        !problem.isEmpty())
        return usage(QStringLiteral("--payload: ") + problem);
    return {};
}

// --trace-id: the 32 hex digits of a W3C trace id.
core::Result<void> readTraceId(const CommandParser &parser, store::EventFilter &filter) {
    if (!parser.isSet(QStringLiteral("trace-id")))
        return {};
    const QString text = parser.value(QStringLiteral("trace-id"));
    if (text.trimmed().isEmpty())
        return usage(QStringLiteral("--trace-id must not be empty"));
    if (const QString problem = store::traceIdProblem(text); !problem.isEmpty())
        return usage(QStringLiteral("--trace-id: ") + problem);
    filter.traceId = store::normalizedTraceId(text);
    return {};
}

} // namespace

OptionTable filterOptions(store::EventFilter &filter) {
    return {
        customOption("id <uuid>", "Only this event (repeat for several).", filter, readIds),
        customOption("status <status>",
                     "pending (includes retrying), retrying, processing, delivered or dead.",
                     filter, readStatus),
        textOption("namespace <ns>", "Exact namespace.", filter.nameSpace),
        textOption("topic <topic>", "Exact topic.", filter.topic),
        uuidOption("tenant <uuid>", "Tenant id (a UUID).", filter.tenantId),
        textOption("dedupe-key <key>", "Exact dedupe key.", filter.dedupeKey),
        textOption("error-contains <text>", "Last error contains this text (case-insensitive).",
                   filter.errorContains),
        textOption("text <text>", "Free text in the id, dedupe key, topic or last error.",
                   filter.text),
        dateTimeOption("created-after <time>",
                       "Created at or after this ISO 8601 time, e.g. 2024-05-01T12:00:00Z (no "
                       "offset: local time).",
                       filter.createdFrom),
        customOption("created-before <time>", "Created before this ISO 8601 time.", filter,
                     readCreatedBefore),
        durationOption("older-than <duration>", "Last changed longer ago than this, e.g. 30m, 7d.",
                       filter.olderThan),
        customOption("payload <json>", "Payload contains this JSON, e.g. '{\"invoice_id\": 42}'.",
                     filter, readPayload),
        customOption("trace-id <id>",
                     "Events of this W3C trace: the 32 hex digits of the trace id in their "
                     "traceparent.",
                     filter, readTraceId),
    };
}

} // namespace outbox::cli
