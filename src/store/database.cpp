#include "store/database.h"

#include "store/errorclass.h"
#include "store/logging.h"

#include <QAtomicInteger>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSqlDriver>
#include <QStringList>
#include <QVariant>

namespace {} // namespace

namespace outbox::store {

namespace {

using core::ErrorKind;

const QString kDriver = QStringLiteral("QPSQL");

// The server's "LINE 1: <statement>" and caret lines, the "JSON data, line 1:
// <text>" context of a JSON error, and anything naming
// QPSQL's prepared statements ("EXECUTE qpsqlpstmt_1 (<values>)"): they echo
// the statement with its bound values (payloads) and mean nothing to a person.
bool isStatementEcho(const QString &line) {
    static const QRegularExpression lineEcho(
        QStringLiteral("^(LINE \\d+:|QUERY:|CONTEXT:\\s+JSON data|\\^$)"));
    return lineEcho.match(line).hasMatch() || line.contains(QLatin1String("qpsqlpstmt"));
}

// QPSQL appends "(SQLSTATE)" to the server's text and libpq ends messages
// with a newline; both are noise in a message meant for a person.
QString cleanText(const QSqlError &error) {
    QString text = error.databaseText().trimmed();
    if (text.isEmpty()) {
        text = error.driverText().trimmed();
    }
    const QString code = error.nativeErrorCode();
    if (!code.isEmpty()) {
        const QString suffix = QLatin1Char('(') + code + QLatin1Char(')');
        if (text.endsWith(suffix)) {
            text.chop(suffix.size());
            text = text.trimmed();
        }
    }
    // libpq: 'connection to server at "h", port 5432 failed: FATAL:  role "x"
    // does not exist' plus a second line guessing at the cause; the caller
    // already says where and what to check.
    static const QRegularExpression severity(QStringLiteral("^(ERROR|FATAL|PANIC):\\s+"));
    static const QString failed = QStringLiteral(" failed: ");
    QStringList lines;
    for (const QString &line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        QString l = line.trimmed();
        if (l.startsWith(QLatin1String("connection to server")) && l.contains(failed)) {
            l = l.mid(l.lastIndexOf(failed) + failed.size());
        }
        l.remove(severity);
        if (l.startsWith(QLatin1String("Is the server running")) || isStatementEcho(l)) {
            continue;
        }
        // "syntax error at or near \"<a piece of the statement>\"": the piece
        // may be a bound value (QPSQL sends them inside an EXECUTE text).
        const qsizetype near = l.indexOf(QLatin1String(" at or near \""));
        if (near > 0) {
            l.truncate(near);
        }
        if (!l.isEmpty()) {
            lines << l;
        }
    }
    return lines.join(QStringLiteral("; "));
}

bool containsAny(const QString &text, std::initializer_list<const char *> needles) {
    for (const char *needle : needles) {
        if (text.contains(QLatin1String(needle), Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

// Where libpq will connect, for the "cannot connect" message. Empty fields
// fall back to libpq's environment defaults, like libpq itself does.
QString describeServer(const core::ConnInfo &info) {
    QString host = info.host;
    if (host.isEmpty()) {
        host = qEnvironmentVariable("PGHOST");
    }
    QString port = info.port > 0 ? QString::number(info.port) : qEnvironmentVariable("PGPORT");
    if (port.isEmpty()) {
        port = QStringLiteral("5432");
    }
    if (host.isEmpty()) {
        return QStringLiteral("the local socket (port %1)").arg(port);
    }
    if (host.startsWith(QLatin1Char('/')) || host.startsWith(QLatin1Char('@'))) {
        return QStringLiteral("socket directory %1 (port %2)").arg(host, port);
    }
    return host + QLatin1Char(':') + port;
}

// The message for a connect that failed: QPSQL's text (the server's words,
// cleaned) with what to check, by the class of the failure.
core::Error connectError(const QSqlError &error, const core::ConnInfo &info,
                         const ConnectDiagnosis &diagnosis) {
    const QString reason = cleanText(error);
    const QString where = describeServer(info);
    const ErrorKind kind = errorKindFor(diagnosis.errorClass);
    const auto make = [kind](const QString &text) { return core::Error{kind, text}; };
    switch (diagnosis.errorClass) {
    case ErrorClass::Authentication:
        return make(QStringLiteral("PostgreSQL at %1 rejected the login: %2 — check the user and "
                                   "password in --db / OUTBOX_DB, PGPASSWORD or ~/.pgpass")
                        .arg(where, reason));
    case ErrorClass::LoginRefused:
        return make(QStringLiteral("PostgreSQL at %1 refused the login: %2 — set user= in --db / "
                                   "OUTBOX_DB to a role that exists and may log in from here "
                                   "(the server's pg_hba.conf)")
                        .arg(where, reason));
    case ErrorClass::NoSuchDatabase:
        return make(QStringLiteral("PostgreSQL at %1: %2 — create it (createdb) or set dbname= in "
                                   "--db / OUTBOX_DB")
                        .arg(where, reason));
    case ErrorClass::PermissionDenied:
    case ErrorClass::Other:
        return make(
            QStringLiteral("PostgreSQL at %1 refused the connection: %2").arg(where, reason));
    case ErrorClass::Transient:
        break;
    }
    if (diagnosis.serverAnswered) {
        return make(QStringLiteral("cannot connect to PostgreSQL at %1: %2").arg(where, reason));
    }
    return make(QStringLiteral("cannot connect to PostgreSQL at %1: %2 — is the server running, "
                               "and are the host and port of the connection string right?")
                    .arg(where, reason.isEmpty() ? QStringLiteral("no reason given") : reason));
}

} // namespace

core::Result<QSqlDatabase> openDatabase(const core::ConnInfo &info, const QString &connectionName) {
    if (!QSqlDatabase::isDriverAvailable(kDriver)) {
        return core::Error{ErrorKind::Unavailable,
                           QStringLiteral("the Qt PostgreSQL driver (QPSQL) is not installed — "
                                          "install the Qt 6 PostgreSQL plugin (Debian: "
                                          "libqt6sql6-psql)")};
    }
    // Refused before anything is opened: a value QPSQL could not hand to
    // libpq as written (see ConnInfo::qtConnectOptions).
    const auto connectOptions = info.qtConnectOptions();
    if (!connectOptions) {
        return connectOptions.error();
    }
    if (QSqlDatabase::contains(connectionName)) {
        closeDatabase(connectionName);
    }
    QSqlDatabase db = QSqlDatabase::addDatabase(kDriver, connectionName);
    if (!info.host.isEmpty()) {
        db.setHostName(info.host);
    }
    if (info.port > 0) {
        db.setPort(info.port);
    }
    if (!info.dbname.isEmpty()) {
        db.setDatabaseName(info.dbname);
    }
    if (!info.user.isEmpty()) {
        db.setUserName(info.user);
    }
    if (!info.password.isEmpty()) {
        db.setPassword(info.password);
    }
    db.setConnectOptions(connectOptions.value());
    QElapsedTimer took;
    took.start();
    if (!db.open()) {
        // QPSQL says why only in words, without the SQLSTATE: libpq tells.
        // Not logged: the caller reports it, once per change of state (a
        // server that is down would otherwise log every attempt).
        auto error = connectError(db.lastError(), info, diagnoseConnect(info, took.elapsed()));
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(connectionName);
        return error;
    }
    return db;
}

void closeDatabase(const QString &connectionName) {
    if (!QSqlDatabase::contains(connectionName)) {
        return;
    }
    {
        QSqlDatabase db = QSqlDatabase::database(connectionName, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(connectionName);
}

QString uniqueConnectionName(const QString &prefix) {
    // A process-wide counter is the one piece of shared state here: names
    // must be unique across threads, and QSqlDatabase's registry is global.
    static QAtomicInteger<quint64> counter;
    return prefix + QLatin1Char('-') + QString::number(counter.fetchAndAddRelaxed(1) + 1);
}

bool isConnectionLost(const QSqlError &error) {
    if (error.type() == QSqlError::NoError) {
        return false;
    }
    const QString code = error.nativeErrorCode();
    if (!code.isEmpty()) {
        return classifySqlState(code) == ErrorClass::Transient;
    }
    // No code: libpq's own words for a connection that went away (it has no
    // SQLSTATE for them), English only. A fallback: the dispatcher and the
    // console's worker also probe the connection after any failure.
    const QString text = error.databaseText() + QLatin1Char(' ') + error.driverText();
    return containsAny(text, {"server closed the connection", "no connection to the server",
                              "terminating connection", "connection not open",
                              "could not send data to server", "could not receive data from server",
                              "connection to server was lost", "database not open"});
}

bool isDriverNoise(QStringView message) {
    return message.startsWith(QLatin1String("Unable to free statement"));
}

core::Error toError(const QSqlError &error, const QString &context) {
    const QString prefix = context.isEmpty() ? QString() : context + QStringLiteral(": ");
    const QString text = cleanText(error);
    const QString code = error.nativeErrorCode();
    if (isConnectionLost(error)) {
        return {ErrorKind::Unavailable,
                prefix + QStringLiteral("lost the connection to PostgreSQL (%1) — check that the "
                                        "server is running; the connection must be re-opened")
                             .arg(text.isEmpty() ? QStringLiteral("connection closed") : text)};
    }
    if (classifySqlState(code) == ErrorClass::PermissionDenied) {
        return {
            ErrorKind::PermissionDenied,
            prefix + text +
                QStringLiteral(" — the database role lacks this privilege; grant it the "
                               "matching outbox_* role (see `outboxctl migrate --with-roles`)")};
    }
    if (error.type() == QSqlError::ConnectionError) {
        return {ErrorKind::Unavailable,
                prefix + QStringLiteral("cannot connect to PostgreSQL: ") + text +
                    QStringLiteral(" — is the server running, and are the host and port of the "
                                   "connection string right?")};
    }
    if (code == QLatin1String("22023") || code == QLatin1String("22P02") ||
        code == QLatin1String("23514") || code == QLatin1String("23502")) {
        // invalid_parameter_value, invalid text representation (e.g. bad
        // JSON), check and not-null violations: the input was wrong.
        return {ErrorKind::Invalid, prefix + text};
    }
    if (code == QLatin1String("42P01") || code == QLatin1String("42883")) {
        return {
            ErrorKind::Invalid,
            prefix + text +
                QStringLiteral(" — the outbox schema is missing or old: run `outboxctl migrate`")};
    }
    if (code == QLatin1String("40001") || code == QLatin1String("40P01")) {
        return {ErrorKind::Conflict, prefix + text + QStringLiteral(" — retry the operation")};
    }
    return {ErrorKind::Failed,
            prefix + (text.isEmpty() ? QStringLiteral("unknown database error") : text)};
}

core::Result<void> execPrepared(QSqlQuery &query, const QString &context) {
    if (!query.exec()) {
        return toError(query.lastError(), context);
    }
    return {};
}

core::Result<QSqlQuery> exec(QSqlDatabase db, const QString &sql, const QVariantList &values,
                             const QString &context) {
    QSqlQuery query(db);
    if (values.isEmpty()) {
        // The simple protocol: multi-statement text and no server-side
        // PREPARE round trip.
        if (!query.exec(sql)) {
            return toError(query.lastError(), context);
        }
        return query;
    }
    if (!query.prepare(sql)) {
        return toError(query.lastError(), context);
    }
    for (qsizetype i = 0; i < values.size(); ++i) {
        query.bindValue(int(i), values.at(i));
    }
    if (!query.exec()) {
        return toError(query.lastError(), context);
    }
    return query;
}

namespace {

bool isIdentifierChar(QChar c) {
    return c.isLetterOrNumber() || c == QLatin1Char('_') || c == QLatin1Char('$');
}

// Index just past the literal/identifier that starts at `start` with `quote`;
// a doubled quote is an escaped quote, and E'' strings also escape with '\'.
qsizetype skipQuoted(const QString &text, qsizetype start, QChar quote, bool backslashEscapes) {
    const qsizetype n = text.size();
    qsizetype i = start + 1;
    while (i < n) {
        const QChar c = text.at(i);
        if (backslashEscapes && c == QLatin1Char('\\')) {
            i += 2;
            continue;
        }
        if (c == quote) {
            if (i + 1 < n && text.at(i + 1) == quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        ++i;
    }
    return n;
}

// The $tag$ that opens a dollar-quoted string at `start`, or empty.
QString dollarTag(const QString &text, qsizetype start) {
    if (start > 0 && isIdentifierChar(text.at(start - 1))) {
        return {}; // part of an identifier such as a$b, not a quote
    }
    qsizetype i = start + 1;
    while (i < text.size() && text.at(i) != QLatin1Char('$')) {
        const QChar c = text.at(i);
        const bool valid = c == QLatin1Char('_') || c.isLetter() || (i > start + 1 && c.isDigit());
        if (!valid) {
            return {}; // e.g. $1, a positional parameter
        }
        ++i;
    }
    if (i >= text.size()) {
        return {};
    }
    return text.mid(start, i - start + 1);
}

} // namespace

QStringList splitSqlScript(const QString &script) {
    QStringList statements;
    QString current;
    bool meaningful = false;
    const auto flush = [&] {
        if (meaningful) {
            statements << current.trimmed();
        }
        current.clear();
        meaningful = false;
    };
    const qsizetype n = script.size();
    qsizetype i = 0;
    while (i < n) {
        const QChar c = script.at(i);
        const QChar next = i + 1 < n ? script.at(i + 1) : QChar();
        if (c == QLatin1Char('-') && next == QLatin1Char('-')) {
            const qsizetype end = script.indexOf(QLatin1Char('\n'), i);
            i = end < 0 ? n : end;
            current += QLatin1Char(' ');
        } else if (c == QLatin1Char('/') && next == QLatin1Char('*')) {
            int depth = 0; // PostgreSQL block comments nest
            while (i < n) {
                if (script.at(i) == QLatin1Char('/') && i + 1 < n &&
                    script.at(i + 1) == QLatin1Char('*')) {
                    ++depth;
                    i += 2;
                } else if (script.at(i) == QLatin1Char('*') && i + 1 < n &&
                           script.at(i + 1) == QLatin1Char('/')) {
                    i += 2;
                    if (--depth == 0) {
                        break;
                    }
                } else {
                    ++i;
                }
            }
            current += QLatin1Char(' ');
        } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
            const bool escaped =
                c == QLatin1Char('\'') && i > 0 &&
                (script.at(i - 1) == QLatin1Char('E') || script.at(i - 1) == QLatin1Char('e')) &&
                (i < 2 || !isIdentifierChar(script.at(i - 2)));
            const qsizetype end = skipQuoted(script, i, c, escaped);
            current += QStringView(script).mid(i, end - i);
            meaningful = true;
            i = end;
        } else if (c == QLatin1Char('$') && !dollarTag(script, i).isEmpty()) {
            const QString tag = dollarTag(script, i);
            const qsizetype close = script.indexOf(tag, i + tag.size());
            const qsizetype end = close < 0 ? n : close + tag.size();
            current += QStringView(script).mid(i, end - i);
            meaningful = true;
            i = end;
        } else if (c == QLatin1Char(';')) {
            flush();
            ++i;
        } else {
            current += c;
            meaningful = meaningful || !c.isSpace();
            ++i;
        }
    }
    flush();
    return statements;
}

core::Result<void> execScript(QSqlDatabase db, const QString &script, const QString &context) {
    for (const QString &statement : splitSqlScript(script)) {
        QSqlQuery query(db);
        if (!query.exec(statement)) {
            const QString firstLine = statement.section(QLatin1Char('\n'), 0, 0).trimmed();
            return toError(query.lastError(),
                           context + QStringLiteral(" (in the statement \"%1\")").arg(firstLine));
        }
    }
    return {};
}

QString epochMsSql(const QString &column) {
    return QLatin1String("floor(extract(epoch FROM ") + column + QLatin1String(") * 1000)::bigint");
}

QDateTime timeFromEpochMs(const QVariant &value) {
    if (value.isNull())
        return {};
    return QDateTime::fromMSecsSinceEpoch(value.toLongLong(), Qt::UTC);
}

core::Result<QSqlQuery> execOneRow(QSqlDatabase db, const QString &sql, const QVariantList &values,
                                   const QString &context) {
    auto row = exec(db, sql, values, context);
    if (!row)
        return row.error();
    if (!row->next())
        return core::Error{core::ErrorKind::Failed,
                           context + QStringLiteral(": the server returned no row")};
    return row;
}

} // namespace outbox::store
