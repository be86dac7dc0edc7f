#pragma once

#include "core/result.h"

#include <QList>
#include <QPair>
#include <QString>

namespace outbox::core {

// A PostgreSQL connection description, parsed from a libpq key=value string
// ("host=/run/pg dbname=app user=me") or a URI ("postgresql://me@host:5432/app
// ?sslmode=require"). Empty fields are left to libpq's own defaults (PG*
// environment variables, .pgpass, the default socket).
class ConnInfo final {
public:
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
    // sslrootcert. Keys are validated against libpq's known keywords.
    QList<QPair<QString, QString>> options;

    QString option(const QString &key) const;
    void setOption(const QString &key, const QString &value);

    // key=value string with the password masked, for logs and the UI.
    QString redacted() const;
    // Full key=value string (with password) for libpq; never log it.
    QString toKeyValue() const;
    // The QPSQL driver's connect options (setConnectOptions()): every
    // option except host/port/dbname/user/password (which QPSQL takes
    // separately), separated by ';'.
    QString qtConnectOptions() const;

    friend bool operator==(const ConnInfo &, const ConnInfo &) = default;
};

} // namespace outbox::core
