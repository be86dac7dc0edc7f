#include "store/errorclass.h"

#include <QDeadlineTimer>
#include <QRegularExpression>

#include <algorithm>
#include <cerrno>
#include <libpq-fe.h>
#include <poll.h>

namespace outbox::store {

namespace {

// Without a connect_timeout libpq would wait as long as the kernel does.
constexpr int kDefaultDiagnosisSeconds = 10;
// libpq measures connect_timeout in whole seconds (time()): an attempt that
// timed out may have taken up to a second less.
constexpr qint64 kTimeoutGranularityMs = 1000;

bool isOneOf(QStringView code, std::initializer_list<const char *> codes) {
    for (const char *c : codes) {
        if (code == QLatin1String(c))
            return true;
    }
    return false;
}

// The code of the last server error in a verbose libpq message. The
// severity word before it is translated; the layout "<severity>:  <CODE>: "
// is not.
QString lastSqlState(const QString &verboseMessage) {
    static const QRegularExpression code(QStringLiteral(":  ([0-9A-Z]{5}): "));
    QString found;
    auto it = code.globalMatch(verboseMessage);
    while (it.hasNext())
        found = it.next().captured(1);
    return found;
}

// A state libpq reaches only once a socket to a server is connected.
bool isPastConnect(ConnStatusType status) {
    return status != CONNECTION_BAD && status != CONNECTION_STARTED && status != CONNECTION_NEEDED;
}

// The connect_timeout libpq applies to `info` (its option, else
// PGCONNECT_TIMEOUT; 1 counts as 2, as in libpq), or the default.
int diagnosisSeconds(const core::ConnInfo &info) {
    QString text = info.option(QStringLiteral("connect_timeout"));
    if (text.isEmpty())
        text = qEnvironmentVariable("PGCONNECT_TIMEOUT");
    const int seconds = text.trimmed().toInt();
    return seconds > 0 ? std::max(seconds, 2) : kDefaultDiagnosisSeconds;
}

} // namespace

ErrorClass classifySqlState(QStringView sqlState) {
    if (sqlState.startsWith(QLatin1String("08")) ||
        isOneOf(sqlState, {"57P01", "57P02", "57P03", "57P04", "57P05", "53300"}))
        return ErrorClass::Transient;
    if (sqlState == QLatin1String("28P01"))
        return ErrorClass::Authentication;
    if (sqlState == QLatin1String("28000"))
        return ErrorClass::LoginRefused;
    if (sqlState == QLatin1String("3D000"))
        return ErrorClass::NoSuchDatabase;
    if (sqlState == QLatin1String("42501"))
        return ErrorClass::PermissionDenied;
    return ErrorClass::Other;
}

core::ErrorKind errorKindFor(ErrorClass errorClass) {
    switch (errorClass) {
    case ErrorClass::LoginRefused:
    case ErrorClass::NoSuchDatabase:
        return core::ErrorKind::Invalid; // the caller must change user= or dbname=
    case ErrorClass::Transient:
        return core::ErrorKind::Unavailable;
    case ErrorClass::Authentication:
        return core::ErrorKind::AuthenticationFailed;
    case ErrorClass::PermissionDenied:
        return core::ErrorKind::PermissionDenied;
    case ErrorClass::Other:
        break;
    }
    return core::ErrorKind::Failed;
}

ConnectDiagnosis diagnoseConnect(const core::ConnInfo &info, qint64 failedAfterMs) {
    const qint64 timeoutMs = diagnosisSeconds(info) * qint64(1000);
    if (failedAfterMs >= timeoutMs - kTimeoutGranularityMs)
        return {}; // timed out: nobody answered
    PGconn *conn = PQconnectStart(info.toKeyValue().toUtf8().constData());
    if (!conn)
        return {}; // out of memory: nothing to learn, try again later
    PQsetErrorVerbosity(conn, PQERRORS_VERBOSE);
    const QDeadlineTimer deadline(timeoutMs);
    bool pastConnect = isPastConnect(PQstatus(conn));
    bool timedOut = false;
    // libpq's protocol for a non-blocking connect: start as if the last
    // poll had asked to write, wait for the socket, poll again.
    PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
    while (PQstatus(conn) != CONNECTION_BAD && polling != PGRES_POLLING_OK &&
           polling != PGRES_POLLING_FAILED) {
        const qint64 remaining = deadline.remainingTime();
        pollfd socket{PQsocket(conn), short(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT),
                      0};
        const int ready = remaining > 0 ? ::poll(&socket, 1, int(remaining)) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            timedOut = true; // or poll() failed: no answer either way
            break;
        }
        polling = PQconnectPoll(conn);
        pastConnect = pastConnect || isPastConnect(PQstatus(conn));
    }
    ConnectDiagnosis diagnosis;
    diagnosis.sqlState = lastSqlState(QString::fromUtf8(PQerrorMessage(conn)));
    diagnosis.serverAnswered = pastConnect && !timedOut;
    const bool connected = PQstatus(conn) == CONNECTION_OK;
    const bool needsPassword = PQconnectionNeedsPassword(conn) != 0;
    PQfinish(conn);

    if (connected)
        diagnosis.errorClass = ErrorClass::Transient; // it works now: the next try will do
    else if (!diagnosis.sqlState.isEmpty())
        diagnosis.errorClass = classifySqlState(diagnosis.sqlState);
    else if (needsPassword)
        diagnosis.errorClass = ErrorClass::Authentication;
    else
        // No code and no password wanted: no server answered (refused, no
        // socket, unknown host, timed out), or libpq ended the attempt on
        // its own account after connecting (TLS, a connection closed
        // halfway), which a later try may also get past.
        diagnosis.errorClass = ErrorClass::Transient;
    return diagnosis;
}

} // namespace outbox::store
