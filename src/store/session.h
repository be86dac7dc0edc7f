#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "core/result.h"
#include "store/database.h"

#include <QLatin1String>
#include <QPointer>
#include <QSocketNotifier>
#include <QSqlDatabase>
#include <QString>

#include <functional>
#include <utility>

namespace outbox::store {

// The channel of the outbox's wake-up hints: the trigger in sql/001_init.sql
// NOTIFYs it when a row becomes due.
inline constexpr QLatin1String kNotifyChannel("outbox_events");

// One named QPSQL connection, opened, used and closed in one thread (Qt's
// rule for a QSqlDatabase). Everything above src/store reaches PostgreSQL
// through one: the store classes take a Session in their constructors, so no
// caller names a QSqlDatabase or runs a statement of its own. Store objects
// made on a session keep its connection: destroy them before it closes.
class Session final {
public:
    struct Options {
        // application_name unless the connection string names one (as
        // application_name or fallback_application_name; libpq lets
        // PGAPPNAME win over it), so pg_stat_activity shows who is who. Also
        // the prefix of the connection's name in Qt's registry.
        QString applicationName = QStringLiteral("outbox");
        // connect_timeout unless the connection string sets one: libpq waits
        // forever by default, and a connect that hangs blocks its thread.
        int connectTimeoutSeconds = 5;
        // plan_cache_mode = force_generic_plan and the planner settings of
        // OutboxStore::sessionSettings(), for the sessions that run
        // OutboxStore's statements (see Session::open).
        bool genericPlans = false;
        // Client-side limits for connections that must notice a dead peer
        // instead of waiting on it forever (the dispatcher's). Each applies
        // unless the connection string sets the keyword itself; 0 leaves
        // libpq's and the kernel's defaults (no keepalive probes for hours,
        // no limit on unacknowledged data, no statement limit).
        //  - keepalives=1, keepalives_idle, keepalives_interval and
        //    keepalives_count: an idle connection to a vanished host is
        //    declared dead after idle + interval * count seconds;
        //  - tcp_user_timeout: data sent but not acknowledged for this long
        //    (a host that vanished mid-statement) closes the connection;
        //  - statement_timeout (SET after connecting): the server cancels a
        //    statement that runs this long, e.g. one stuck behind a lock.
        int keepalivesIdleSeconds = 0;
        int keepalivesIntervalSeconds = 0;
        int keepalivesCount = 0;
        core::Millis tcpUserTimeout{0};
        core::Millis statementTimeout{0};
    };

    Session(core::ConnInfo info, Options options);
    ~Session();
    Q_DISABLE_COPY_MOVE(Session)

    // Opens the connection (closing any previous one first) and applies the
    // session settings. Errors are classified as openDatabase() does.
    core::Result<void> open();
    void close();
    // Open, and not closed by the driver since (QPSQL closes the connection
    // itself when reading a notification finds the server gone).
    bool isOpen() const;
    // Ok while the server still answers on this connection (SELECT 1).
    core::Result<void> probe() const;
    // LISTEN on kNotifyChannel: `onNotify` runs in this thread for every
    // notification on it, until the connection closes; `onLost` as soon as
    // the socket shows the server has closed the connection (close the
    // session then).
    core::Result<void> listen(std::function<void()> onNotify, std::function<void()> onLost = {});
    // The server process of this connection (pg_backend_pid()); 0 while closed.
    int backendPid();

    // The connection itself, for the store classes' constructors.
    QSqlDatabase database() const { return m_db; }

private:
    core::Result<void> applySettings();

    core::ConnInfo m_info;
    Options m_options;
    QString m_connectionName;
    QSqlDatabase m_db;
    QPointer<QSocketNotifier> m_watch; // see listen()
    int m_backendPid = 0;
};

// `info` with every transaction of its sessions read-only, enforced by the
// server (default_transaction_read_only through libpq's `options`, after any
// options the connection string has, so that it wins): a client that only
// disables its buttons would still be one bug away from a write.
core::ConnInfo readOnlySession(core::ConnInfo info);

// CREATE DATABASE `name` on the session's server unless it has one by that
// name (for the throwaway clusters of the tests, benchmarks and demo mode).
core::Result<void> createDatabaseIfMissing(Session &session, const QString &name);

// inTransaction() on the session's connection.
template <typename Body>
auto inTransaction(Session &session, const QString &context, Body &&body) -> decltype(body()) {
    return inTransaction(session.database(), context, std::forward<Body>(body));
}

} // namespace outbox::store
