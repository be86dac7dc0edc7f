#pragma once

#include "cli/commandparser.h"
#include "core/conninfo.h"
#include "core/result.h"

#include <QSqlDatabase>
#include <QString>

#include <memory>
#include <optional>

namespace outbox::cli {

// The connection description: --db, else OUTBOX_DB, else libpq defaults
// (PG* variables, ~/.pgpass, the default socket). Adds connect_timeout=10
// and fallback_application_name=outboxctl unless given.
core::Result<core::ConnInfo> resolveConnInfo(const std::optional<QString> &db);

// One named QPSQL connection for the lifetime of a command. Everything that
// holds a copy of db() (stores, queries) must be destroyed first.
class Connection final {
public:
    static core::Result<std::unique_ptr<Connection>> open(const core::ConnInfo &info);
    ~Connection();
    Q_DISABLE_COPY_MOVE(Connection)

    QSqlDatabase db() const { return m_db; }
    const core::ConnInfo &info() const { return m_info; }

private:
    Connection(QString name, QSqlDatabase db, core::ConnInfo info);
    QString m_name;
    QSqlDatabase m_db;
    core::ConnInfo m_info;
};

enum class SchemaCheck { Required, Skip };

// Resolves the connection info, connects and (by default) checks that the
// schema is migrated. On failure prints why, naming the server without its
// password, and returns the exit code; on success stores the connection in
// `connection` and returns ExitOk.
int connect(CommandParser &parser, std::unique_ptr<Connection> &connection,
            SchemaCheck check = SchemaCheck::Required);

} // namespace outbox::cli
