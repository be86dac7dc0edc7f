#include "cli/filteroptions.h"

namespace outbox::cli {

void addFilterOptions(CommandParser &parser) {
    parser.addOptions({
        option("id", "Only this event (repeat for several).", "uuid"),
        option("status",
               "pending (includes retrying), retrying, processing, "
               "delivered or dead.",
               "status"),
        option("namespace", "Exact namespace.", "ns"),
        option("topic", "Exact topic.", "topic"),
        option("tenant", "Tenant id (a UUID).", "uuid"),
        option("dedupe-key", "Exact dedupe key.", "key"),
        option("error-contains", "Last error contains this text (case-insensitive).", "text"),
        option("text", "Free text in the id, dedupe key, topic or last error.", "text"),
        option("created-after",
               "Created at or after this ISO 8601 time, e.g. "
               "2024-05-01T12:00:00Z (no offset: local time).",
               "time"),
        option("created-before", "Created before this ISO 8601 time.", "time"),
        option("older-than", "Last changed longer ago than this, e.g. 30m, 7d.", "duration"),
        option("payload", "Payload contains this JSON, e.g. '{\"invoice_id\": 42}'.", "json"),
    });
}

core::Result<store::EventFilter> filterFromOptions(const CommandParser &parser) {
    store::EventFilter filter;
    const QStringList ids = parser.values(QStringLiteral("id"));
    for (const QString &text : ids) {
        auto id = parseUuid(text);
        if (!id)
            return usage(QStringLiteral("--id: '%1' is not an event id (a UUID)").arg(text));
        filter.ids.append(*id);
    }
    if (parser.isSet(QStringLiteral("status"))) {
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
    }
    filter.nameSpace = parser.value(QStringLiteral("namespace"));
    filter.topic = parser.value(QStringLiteral("topic"));
    filter.dedupeKey = parser.value(QStringLiteral("dedupe-key"));
    filter.errorContains = parser.value(QStringLiteral("error-contains"));
    filter.text = parser.value(QStringLiteral("text"));
    for (const QString &name :
         {QStringLiteral("namespace"), QStringLiteral("topic"), QStringLiteral("dedupe-key"),
          QStringLiteral("error-contains"), QStringLiteral("text")}) {
        if (parser.isSet(name) && parser.value(name).isEmpty())
            return usage(QStringLiteral("--%1 must not be empty").arg(name));
    }

    auto tenant = parser.uuid(QStringLiteral("tenant"));
    if (!tenant)
        return tenant.error();
    filter.tenantId = tenant.value();

    auto after = parser.dateTime(QStringLiteral("created-after"));
    if (!after)
        return after.error();
    filter.createdFrom = after.value();
    auto before = parser.dateTime(QStringLiteral("created-before"));
    if (!before)
        return before.error();
    filter.createdTo = before.value();
    if (filter.createdFrom.isValid() && filter.createdTo.isValid() &&
        filter.createdFrom >= filter.createdTo)
        return usage(QStringLiteral("--created-after must be earlier than --created-before"));

    auto olderThan = parser.duration(QStringLiteral("older-than"));
    if (!olderThan)
        return olderThan.error();
    filter.olderThan = olderThan.value();
    filter.payloadContains = parser.value(QStringLiteral("payload")).trimmed();
    if (parser.isSet(QStringLiteral("payload")) && filter.payloadContains.isEmpty())
        return usage(QStringLiteral("--payload must not be empty"));
    if (const QString problem = store::payloadFilterProblem(filter.payloadContains);
        !problem.isEmpty())
        return usage(QStringLiteral("--payload: ") + problem);
    return filter;
}

} // namespace outbox::cli
