#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QString>
#include <QStringView>

namespace outbox::store {

// What a failed connect or statement means for whoever would retry it,
// read from PostgreSQL's error code (SQLSTATE) or, where the server never
// answered, from libpq's state — never from the message, which the server
// writes in its lc_messages language and libpq in the client's. The store
// owns this classification; everything above reads it as a core::ErrorKind
// (errorKindFor): the session keeper and the dispatcher retry only
// Unavailable, the CLI's exit codes follow the kind, and the console asks
// for a password on AuthenticationFailed.
enum class ErrorClass {
    // No answer (refused, no socket, unknown host, timed out), a server that
    // cannot take the connection now or ended it: 08xxx, 57P01-57P05
    // (shutting down, starting up, database dropped, idle timeout), 53300
    // (too many connections). Reconnect and retry.
    Transient,
    // 28P01 (wrong password), or libpq needed a password it was not given.
    Authentication,
    // 28000: no such role, the role may not log in, pg_hba.conf rejects it.
    LoginRefused,
    NoSuchDatabase,   // 3D000
    PermissionDenied, // 42501
    Other,            // a code that says nothing about retrying
};

ErrorClass classifySqlState(QStringView sqlState);
core::ErrorKind errorKindFor(ErrorClass errorClass);

// Why a connection attempt failed, as libpq tells it.
struct ConnectDiagnosis {
    ErrorClass errorClass = ErrorClass::Transient;
    QString sqlState; // the server's code; empty when it did not send one
    // A server took the connection and answered in time. False for refused,
    // no socket, unknown host and timed out: libpq's state, not its words.
    bool serverAnswered = false;
};

// Why a connect through the Qt driver failed after `failedAfterMs`: QPSQL
// (Qt 6.4) reports a failed connect in words only, without the code. Connects
// once more with libpq itself, asking for verbose errors (which carry the
// SQLSTATE: "FATAL:  28P01: ..."), bounded by the connection's
// connect_timeout (10 s without one). An attempt that took that long
// already timed out: Transient with no answer, without a second wait.
ConnectDiagnosis diagnoseConnect(const core::ConnInfo &info, qint64 failedAfterMs);

} // namespace outbox::store
