#include "cli/commands.h"
#include "cli/output.h"
#include "core/uuidtext.h"
#include "store/outboxstore.h"

#include <QFile>

#include <limits>

namespace outbox::cli {

namespace {

struct PayloadSource {
    QByteArray text;
    QString origin; // for messages: "--payload", "--payload-file x.json", "stdin"
};

core::Result<PayloadSource> readPayload(CommandParser &parser) {
    const bool inline_ = parser.isSet(QStringLiteral("payload"));
    const bool file = parser.isSet(QStringLiteral("payload-file"));
    if (inline_ && file)
        return usage(QStringLiteral("give the payload with either --payload or --payload-file, "
                                    "not both"));
    if (!inline_ && !file)
        return usage(QStringLiteral("no payload: give --payload JSON, --payload-file FILE, or "
                                    "--payload - to read it from stdin"));
    const QString value =
        parser.value(inline_ ? QStringLiteral("payload") : QStringLiteral("payload-file"));
    if (value == QLatin1String("-")) {
        if (parser.console().stdinIsTerminal())
            parser.console().err() << "Reading the payload from stdin (end with Ctrl-D)...\n"
                                   << Qt::flush;
        return PayloadSource{parser.console().readAllStdin(),
                             QStringLiteral("the payload on stdin")};
    }
    if (inline_)
        return PayloadSource{value.toUtf8(), QStringLiteral("--payload")};
    QFile input(value);
    if (!input.open(QIODevice::ReadOnly))
        return usage(
            QStringLiteral("--payload-file: cannot read '%1': %2").arg(value, input.errorString()));
    return PayloadSource{input.readAll(), QStringLiteral("--payload-file '%1'").arg(value)};
}

} // namespace

int runEnqueue(CommandContext &context) {
    CommandParser parser(context,
                         QStringLiteral("Add one event to the outbox with outbox_enqueue(), as a "
                                        "producer would. With a dedupe key, enqueueing the same "
                                        "event twice keeps the first (\"already enqueued\")."));
    const auto nameSpace = option("namespace", "Producing module, e.g. billing (required).", "ns");
    const auto topic = option("topic", "Event type, e.g. invoice.paid (required).", "topic");
    const auto payload =
        option("payload", "The payload as JSON text; '-' reads it from stdin.", "json");
    const auto payloadFile =
        option("payload-file", "Read the JSON payload from a file; '-' reads stdin.", "file");
    const auto dedupeKey =
        option("dedupe-key",
               "Idempotency key, unique per namespace and topic. With --tenant it must "
               "start with '<tenant>/'.",
               "key");
    const auto tenant = option("tenant", "Tenant id (a UUID).", "uuid");
    const auto aggregateType = option("aggregate-type", "Aggregate type, e.g. invoice.", "type");
    const auto aggregateId = option("aggregate-id", "Aggregate id, e.g. 42.", "id");
    const auto maxAttempts =
        option("max-attempts",
               "This event's own limit of delivery attempts (1 to 1000); without it the "
               "dispatcher's --max-attempts applies.",
               "n");
    const auto traceparent = option(
        "traceparent",
        "W3C trace context to deliver with the event, e.g. "
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01; dispatchers send it as the "
        "traceparent header.",
        "value");
    const auto tracestate = option(
        "tracestate", "W3C tracestate to go with --traceparent, e.g. vendor=value.", "value");
    const auto json = option("json", "Print {\"id\": ..., \"inserted\": ...}.");
    parser.addOptions({nameSpace, topic, payload, payloadFile, dedupeKey, tenant, aggregateType,
                       aggregateId, maxAttempts, traceparent, tracestate, json});
    parser.setEpilog(QStringLiteral(
        "Examples:\n"
        "  outboxctl enqueue --namespace billing --topic invoice.paid \\\n"
        "      --payload '{\"invoice_id\": 42}' --dedupe-key invoice-42-paid\n"
        "  outboxctl enqueue --namespace billing --topic invoice.paid --payload '{}' \\\n"
        "      --max-attempts 3 --traceparent "
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n"
        "  jq -c . event.json | outboxctl enqueue --namespace billing --topic x --payload -"));
    if (auto exit = parser.parseOptionsOnly(QStringLiteral("give the payload with --payload")))
        return *exit;

    for (const QCommandLineOption *required : {&nameSpace, &topic}) {
        const QString name = required->names().first();
        if (parser.value(name).trimmed().isEmpty())
            return parser.usageError(QStringLiteral("--%1 is required").arg(name));
    }
    if (parser.isSet(aggregateType) != parser.isSet(aggregateId))
        return parser.usageError(QStringLiteral("give --aggregate-type and --aggregate-id "
                                                "together"));
    if (parser.isSet(dedupeKey) && parser.value(dedupeKey).isEmpty())
        return parser.usageError(QStringLiteral("--dedupe-key must not be empty"));
    auto tenantId = parser.uuid(QStringLiteral("tenant"));
    if (!tenantId)
        return parser.usageError(tenantId.errorMessage());
    // Any whole number: the database owns the bounds and says what they are.
    const auto limit =
        parser.integer(QStringLiteral("max-attempts"), 0, std::numeric_limits<int>::min(),
                       std::numeric_limits<int>::max());
    if (!limit)
        return parser.usageError(limit.errorMessage());

    auto source = readPayload(parser);
    if (!source)
        return parser.usageError(source.errorMessage());
    // Checked here, before connecting, so the message can say where the
    // mistake is; the database would only say "invalid input syntax".
    QString jsonError;
    const auto value = parseJsonValue(source->text, &jsonError);
    if (!value)
        return parser.usageError(source->origin + QStringLiteral(" is not valid JSON: ") +
                                 jsonError);
    if (value->isNull())
        return parser.usageError(source->origin +
                                 QStringLiteral(" is JSON null; the payload must be a value such "
                                                "as {\"invoice_id\": 42}"));

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;

    store::EnqueueRequest request;
    request.nameSpace = parser.value(nameSpace);
    request.topic = parser.value(topic);
    request.payload = source->text.trimmed();
    if (parser.isSet(dedupeKey))
        request.dedupeKey = parser.value(dedupeKey);
    request.tenantId = tenantId.value();
    if (parser.isSet(maxAttempts))
        request.maxAttempts = int(limit.value());
    if (parser.isSet(traceparent))
        request.traceparent = parser.value(traceparent);
    if (parser.isSet(tracestate))
        request.tracestate = parser.value(tracestate);
    if (parser.isSet(aggregateType)) {
        request.aggregateType = parser.value(aggregateType);
        request.aggregateId = parser.value(aggregateId);
    }

    store::OutboxStore store(*connection);
    auto result = store.enqueue(request);
    if (!result)
        return parser.fail(result.error());

    const QString id = core::uuidText(result->id);
    auto &out = context.console.out();
    if (parser.isSet(json)) {
        out << jsonText(QJsonObject{{QStringLiteral("id"), id},
                                    {QStringLiteral("inserted"), result->inserted}})
            << '\n';
    } else if (result->inserted) {
        out << id << " inserted\n";
    } else {
        out << id
            << " already enqueued (same namespace, topic and dedupe key); kept the "
               "existing event\n";
    }
    return ExitOk;
}

} // namespace outbox::cli
