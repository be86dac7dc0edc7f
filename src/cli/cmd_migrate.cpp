#include "cli/commands.h"
#include "cli/output.h"
#include "store/migrator.h"

#include <QJsonArray>

namespace outbox::cli {

int runMigrate(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Create the outbox tables and functions, or upgrade them to "
                                "the version this outboxctl knows. Each migration runs in "
                                "its own transaction; running it again is a no-op."));
    const auto withRoles = option(
        "with-roles", "Also create the NOLOGIN group roles outbox_producer, outbox_dispatcher, "
                      "outbox_operator and outbox_viewer and grant them their privileges "
                      "(needs CREATEROLE).");
    const auto dryRun = option("dry-run", "Show what would be applied; change nothing.");
    const auto json = option("json", "Print the result as one JSON object.");
    parser.addOptions({withRoles, dryRun, json});
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
    if (parser.isSet(json)) {
        out << jsonText(QJsonObject{
                   {QStringLiteral("dry_run"), parser.isSet(dryRun)},
                   {QStringLiteral("from_version"), report->fromVersion},
                   {QStringLiteral("to_version"), report->toVersion},
                   {QStringLiteral("latest_version"), store::Migrator::latestVersion()},
                   {QStringLiteral("applied"), QJsonArray::fromStringList(report->applied)},
                   {QStringLiteral("roles_applied"), report->rolesApplied},
               })
            << '\n';
        return ExitOk;
    }

    const bool dry = parser.isSet(dryRun);
    if (report->applied.isEmpty() && !report->rolesApplied) {
        out << "The schema is up to date (version " << report->toVersion
            << "); nothing to apply.\n";
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
    return ExitOk;
}

} // namespace outbox::cli
