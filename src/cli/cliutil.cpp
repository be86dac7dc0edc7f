#include "cli/cliutil.h"

#include "store/database.h"
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

namespace {

// A command line tool must not hang forever on a black-holed host, and the
// server's pg_stat_activity should say who is connected.
core::ConnInfo withCliDefaults(core::ConnInfo info) {
    if (info.option(QStringLiteral("connect_timeout")).isEmpty())
        info.setOption(QStringLiteral("connect_timeout"), QStringLiteral("10"));
    if (info.option(QStringLiteral("application_name")).isEmpty() &&
        info.option(QStringLiteral("fallback_application_name")).isEmpty())
        info.setOption(QStringLiteral("fallback_application_name"), QStringLiteral("outboxctl"));
    return info;
}

} // namespace

Connection::Connection(QString name, QSqlDatabase db, core::ConnInfo info)
    : m_name(std::move(name))
    , m_db(std::move(db))
    , m_info(std::move(info)) {}

Connection::~Connection() {
    m_db = QSqlDatabase();
    store::closeDatabase(m_name);
}

core::Result<std::unique_ptr<Connection>> Connection::open(const core::ConnInfo &info) {
    const QString name = store::uniqueConnectionName(QStringLiteral("outboxctl"));
    auto db = store::openDatabase(info, name);
    if (!db) {
        store::closeDatabase(name);
        return db.error();
    }
    return std::unique_ptr<Connection>(new Connection(name, db.value(), info));
}

int connect(CommandParser &parser, std::unique_ptr<Connection> &connection, SchemaCheck check) {
    auto info = resolveConnInfo(parser.databaseOption());
    if (!info)
        return parser.usageError(info.errorMessage());
    auto opened = Connection::open(withCliDefaults(info.value()));
    // The store's message already names the server (never the password) and
    // says "cannot connect" when it is unreachable.
    if (!opened)
        return parser.fail(opened.error());
    if (check == SchemaCheck::Required) {
        store::Migrator migrator(opened.value()->db());
        auto current = migrator.checkCurrent();
        if (!current)
            return parser.fail(current.error());
    }
    connection = std::move(opened.value());
    return ExitOk;
}

} // namespace outbox::cli
