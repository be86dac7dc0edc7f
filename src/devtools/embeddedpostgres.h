#pragma once

#include "core/result.h"

#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <memory>

namespace outbox::devtools {

// A throwaway PostgreSQL cluster built from the system's binaries, for tests,
// benchmarks and demo mode. Everything lives in one temporary directory that
// is removed when the object is destroyed (also when a test fails).
// When the process runs as root the server runs as the `postgres` user
// (PostgreSQL refuses root).
// Other local users cannot connect: the socket directory is entered only by
// the cluster's account (and root), and over TCP the superuser needs a
// random password (password(), part of uri()).
class EmbeddedPostgres final {
public:
    struct Options {
        bool tcp = false;                             // also listen on 127.0.0.1 on a free port
        QString database = QStringLiteral("outbox");  // created after initdb
        QString superuser = QStringLiteral("outbox"); // bootstrap superuser name
        QStringList serverSettings; // extra "-c name=value" settings, e.g. "fsync=off"
        bool fastAndUnsafe = true;  // fsync=off, synchronous_commit=off, full_page_writes=off
    };

    EmbeddedPostgres();
    ~EmbeddedPostgres();
    Q_DISABLE_COPY_MOVE(EmbeddedPostgres)

    // Creates and starts the cluster and creates Options::database.
    // Error message names the missing binary/permission and the fix.
    core::Result<void> start(const Options &options);
    core::Result<void> start() { return start(Options{}); }
    // Fast shutdown; start() may be called again afterwards (same data dir).
    core::Result<void> stop();
    // Stop then start the same cluster (data kept); for fault tests.
    core::Result<void> restart();
    // SIGKILL the postmaster (crash simulation); restart() recovers.
    void kill();
    bool isRunning() const;

    QString socketDirectory() const; // unix socket directory (the libpq "host")
    int port() const;                // the port number (also used for the socket name)
    QString host() const;            // socketDirectory(), or 127.0.0.1 when tcp
    QString superuser() const;
    QString database() const;
    // libpq key=value connection string for `database` (or another db).
    QString connInfo(const QString &database = {}) const;
    // postgresql:// URI over TCP (only when Options::tcp), with the password,
    // for tests of URI parsing.
    QString uri(const QString &database = {}) const;
    // The superuser's password: needed over TCP only (the socket trusts
    // whoever may enter its directory). New at every initdb.
    QString password() const;
    QString dataDirectory() const;
    QString binDirectory() const;

    // Where the system's PostgreSQL server binaries are (pg_config --bindir,
    // then /usr/lib/postgresql/<highest>/bin); empty with an error if none.
    static core::Result<QString> findBinDirectory();

private:
    struct Private;
    std::unique_ptr<Private> d;
};

} // namespace outbox::devtools
