#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QStringList>

#include <type_traits>
#include <utility>

namespace outbox::store {

// QPSQL connections and statements, the store layer's own plumbing: the
// rest of the code opens a store::Session (session.h). A QSqlDatabase may
// only be used in the thread that opened it: every worker opens its own with
// a unique connection name.

// Adds and opens a QPSQL connection named `connectionName`. Errors are
// classified (Unavailable for refused/unreachable/timeout, Invalid for a
// bad database/user/password, PermissionDenied) and never echo the password.
core::Result<QSqlDatabase> openDatabase(const core::ConnInfo &info, const QString &connectionName);
// Closes and removes the named connection (safe if it does not exist).
void closeDatabase(const QString &connectionName);
// A unique connection name with the given prefix, e.g. "dispatcher-3".
QString uniqueConnectionName(const QString &prefix);

// Turns a QSqlError into a core::Error with a readable message and kind.
core::Error toError(const QSqlError &error, const QString &context);
// True when the error means the connection is gone (reconnect, then retry).
bool isConnectionLost(const QSqlError &error);

// True for the warnings the QPSQL driver prints on its own (not through a
// QSqlError) that say nothing new: "Unable to free statement" after the
// connection was lost or the transaction aborted, which the error of the
// statement itself already reported. Loggers show them only when verbose.
bool isDriverNoise(QStringView message);

// Runs a prepared query (bound values already added) and maps failures.
core::Result<void> execPrepared(QSqlQuery &query, const QString &context);
// Prepares and runs `sql` with positional values. Without values it runs as
// a simple query. One statement per call: QPSQL (Qt 6.4) reports only the
// first statement's outcome of a multi-statement text and silently drops
// later errors — use execScript() for scripts.
core::Result<QSqlQuery> exec(QSqlDatabase db, const QString &sql, const QVariantList &values = {},
                             const QString &context = {});
// exec() for a statement that always returns one row, stepped onto; no row
// is a Failed error.
core::Result<QSqlQuery> execOneRow(QSqlDatabase db, const QString &sql, const QVariantList &values,
                                   const QString &context);
// Reads every row of a query that ran (or passes its error on): `read` turns
// the current row into one element.
template <typename Read>
auto readRows(core::Result<QSqlQuery> query, Read &&read)
    -> core::Result<QList<std::invoke_result_t<Read &, const QSqlQuery &>>>;

// Splits an SQL script into statements at top-level semicolons, honouring
// quotes, E'' strings, quoted identifiers, $tag$ bodies and comments.
// Statements that are only whitespace/comments are dropped.
// Timestamps travel as whole milliseconds since the epoch: independent of
// the session's TimeZone and DateStyle and of how the driver parses text.
// epochMsSql("created_at") is the SQL expression, timeFromEpochMs() reads it
// (an invalid QDateTime for NULL).
QString epochMsSql(const QString &column);
QDateTime timeFromEpochMs(const QVariant &value);

QStringList splitSqlScript(const QString &script);
// Runs every statement of `script` in order; stops at the first error, whose
// message names the statement's first line.
core::Result<void> execScript(QSqlDatabase db, const QString &script, const QString &context);

// Runs `body` inside BEGIN/COMMIT; rolls back when it returns an error.
template <typename Body>
auto inTransaction(QSqlDatabase db, const QString &context, Body &&body) -> decltype(body());

} // namespace outbox::store

#include "store/database_impl.h"
