#include "cli/cliutil.h"

#include "store/migrator.h"

namespace outbox::cli {

// --- connection --------------------------------------------------------------

core::Result<core::ConnInfo> resolveConnInfo(const std::optional<QString> &db) {
    if (db) {
        auto parsed = core::ConnInfo::parse(*db);
        if (!parsed)
            return usage(QStringLiteral("--db: ") + parsed.errorMessage());
        return parsed;
    }
    auto fromEnvironment = core::ConnInfo::fromEnvironment();
    if (!fromEnvironment)
        return usage(fromEnvironment.errorMessage());
    return fromEnvironment;
}

int connect(CommandParser &parser, std::unique_ptr<Connection> &connection, SchemaCheck check) {
    auto info = resolveConnInfo(parser.databaseOption());
    if (!info)
        return parser.usageError(info.errorMessage());
    // A command line tool must not hang forever on a black-holed host, and
    // the server's pg_stat_activity should say who is connected.
    auto session = std::make_unique<Connection>(
        info.value(), store::Session::Options{.applicationName = QStringLiteral("outboxctl"),
                                              .connectTimeoutSeconds = 10});
    // The store's message already names the server (never the password) and
    // says "cannot connect" when it is unreachable.
    if (auto opened = session->open(); !opened)
        return parser.fail(opened.error());
    if (check == SchemaCheck::Required) {
        auto current = store::Migrator(*session).checkCurrent();
        if (!current)
            return parser.fail(current.error());
    }
    connection = std::move(session);
    return ExitOk;
}

} // namespace outbox::cli
