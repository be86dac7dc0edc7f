#include "cli/commands.h"
#include "cli/output.h"
#include "store/migrator.h"

#include <QJsonArray>

#include <optional>

namespace outbox::cli {

int runMigrate(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Create the outbox tables and functions, or upgrade them to "
                                "the version this outboxctl knows. Each migration runs in "
                                "its own transaction; running it again is a no-op."));
    const auto withRoles = option(
        "with-roles", "Also create the NOLOGIN group roles outbox_producer, outbox_dispatcher, "
                      "outbox_operator and outbox_viewer, grant them their privileges, and give "
                      "every login in the last three a statement timeout, an idle-in-transaction "
                      "timeout and a connection limit unless it has its own (needs CREATEROLE; "
                      "run it again after granting a role to a new login).");
    const auto aggregateOrder =
        option("aggregate-order",
               "Also turn on delivery in aggregate order (`dispatch --ordering aggregate`): build "
               "the index it needs with CREATE INDEX CONCURRENTLY, which reads the whole table but "
               "does not block producers or dispatchers. Off by default: the index costs every "
               "claim of an event that has an aggregate.");
    const auto dryRun = option("dry-run", "Show what would be applied; change nothing.");
    const auto json = option("json", "Print the result as one JSON object.");
    parser.addOptions({withRoles, aggregateOrder, dryRun, json});
    if (auto exit = parser.parseOptionsOnly())
        return *exit;

    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection, SchemaCheck::Skip); exit != ExitOk)
        return exit;

    store::Migrator migrator(*connection);
    auto report = migrator.migrate(parser.isSet(withRoles), parser.isSet(dryRun));
    if (!report)
        return parser.fail(report.error());

    auto &out = context.console.out();
    const bool dry = parser.isSet(dryRun);
    // Whether it was built now; what the database says otherwise (a dry run
    // of a database without the schema cannot ask).
    bool built = false;
    std::optional<bool> ordered;
    if (parser.isSet(aggregateOrder) && !dry) {
        if (!parser.isSet(json))
            context.console.err() << "Building outbox_events_aggregate_idx (reads the whole "
                                     "table; producers and dispatchers keep running)...\n";
        const auto enabled = migrator.enableAggregateOrder();
        if (!enabled)
            return parser.fail(enabled.error());
        built = enabled.value();
    }
    if (!dry || report->fromVersion == store::Migrator::latestVersion()) {
        const auto on = migrator.aggregateOrderOn();
        if (!on)
            return parser.fail(on.error());
        ordered = on.value();
    }
    if (parser.isSet(json)) {
        out << jsonText(QJsonObject{
                   {QStringLiteral("dry_run"), parser.isSet(dryRun)},
                   {QStringLiteral("from_version"), report->fromVersion},
                   {QStringLiteral("to_version"), report->toVersion},
                   {QStringLiteral("latest_version"), store::Migrator::latestVersion()},
                   {QStringLiteral("applied"), QJsonArray::fromStringList(report->applied)},
                   {QStringLiteral("roles_applied"), report->rolesApplied},
                   {QStringLiteral("aggregate_order"),
                    ordered ? QJsonValue(*ordered) : QJsonValue()},
                   {QStringLiteral("aggregate_order_built"), built},
               })
            << '\n';
        return ExitOk;
    }

    const auto printOrder = [&] {
        if (dry && parser.isSet(aggregateOrder) && !ordered.value_or(false))
            out << "  would build outbox_events_aggregate_idx (delivery in aggregate order)\n";
        else if (built)
            out << "  built outbox_events_aggregate_idx: delivery in aggregate order is on\n";
        else if (ordered)
            out << "  delivery in aggregate order is "
                << (*ordered ? "on" : "off (`outboxctl migrate --aggregate-order` turns it on)")
                << '\n';
    };
    if (report->applied.isEmpty() && !report->rolesApplied) {
        out << "The schema is up to date (version " << report->toVersion
            << "); nothing to apply.\n";
        printOrder();
        return ExitOk;
    }
    if (report->fromVersion != report->toVersion) {
        out << (dry ? "Would migrate" : "Migrated") << " the schema from version "
            << report->fromVersion << " to " << report->toVersion << ".\n";
    } else {
        out << "The schema is at version " << report->toVersion << ".\n";
    }
    for (const QString &file : std::as_const(report->applied))
        out << (dry ? "  would apply " : "  applied ") << file << '\n';
    if (report->rolesApplied)
        out << (dry ? "  would apply " : "  applied ")
            << "roles.sql (outbox_producer, outbox_dispatcher, outbox_operator, outbox_viewer)\n";
    printOrder();
    return ExitOk;
}

} // namespace outbox::cli
