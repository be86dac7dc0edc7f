#pragma once

#include "core/result.h"

#include <QList>
#include <QPair>
#include <QString>

namespace outbox::core {

// A PostgreSQL connection description, read by libpq's own parser
// (PQconninfoParse) from a key=value string ("host=/run/pg dbname=app
// user=me") or a URI ("postgresql://me@host:5432/app?sslmode=require").
// Empty fields are left to libpq's own defaults (PG* environment variables,
// service files, .pgpass, the default socket).
class ConnInfo final {
public:
    // Errors name the problem and the fix, and never quote any part of a
    // password, also when the text is malformed.
    static Result<ConnInfo> parse(QStringView text);
    // OUTBOX_DB when set, else an empty ConnInfo (pure libpq defaults).
    static Result<ConnInfo> fromEnvironment();

    QString host; // host name, IP or unix socket directory
    int port = 0; // 0 = libpq default
    QString dbname;
    QString user;
    QString password; // never printed
    QString sslmode;
    // Every other libpq keyword, e.g. connect_timeout, application_name,
    // sslrootcert, each at most once. Keys are libpq's keywords.
    QList<QPair<QString, QString>> options;

    QString option(const QString &key) const;
    void setOption(const QString &key, const QString &value);

    // key=value string with the password masked, for logs and the UI.
    QString redacted() const;
    // Full key=value string (with password) for libpq; never log it.
    QString toKeyValue() const;
    // The QPSQL driver's connect options (setConnectOptions()): every
    // option except host/port/dbname/user/password (which QPSQL takes
    // separately and quotes itself), each value in single quotes. Refuses
    // what could not reach libpq as written: a ';' in an option value (QPSQL
    // turns every ';' of its options into a space), a NUL character in any
    // field (QPSQL hands libpq a C string, which would end there and drop
    // the options behind it, sslmode included), a keyword libpq does not
    // know or a key given twice, and values libpq would refuse.
    Result<QString> qtConnectOptions() const;

    friend bool operator==(const ConnInfo &, const ConnInfo &) = default;
};

} // namespace outbox::core
