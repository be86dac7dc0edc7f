#pragma once

#include "cli/commandparser.h"
#include "core/conninfo.h"
#include "core/result.h"
#include "store/session.h"

#include <QString>

#include <memory>
#include <optional>

namespace outbox::cli {

// The connection description: --db, else OUTBOX_DB, else libpq defaults
// (PG* variables, ~/.pgpass, the default socket).
core::Result<core::ConnInfo> resolveConnInfo(const std::optional<QString> &db);

// A command's connection: one store session for the command's lifetime. The
// store objects made on it must be destroyed first.
using Connection = store::Session;

enum class SchemaCheck { Required, Skip };

// Resolves the connection info, connects (connect_timeout=10 and the
// application name outboxctl unless given) and (by default) checks that the
// schema is migrated. On failure prints why, naming the server without its
// password, and returns the exit code; on success stores the connection in
// `connection` and returns ExitOk.
int connect(CommandParser &parser, std::unique_ptr<Connection> &connection,
            SchemaCheck check = SchemaCheck::Required);

} // namespace outbox::cli
