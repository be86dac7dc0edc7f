#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "store/outboxstore.h"
#include "store/session.h"

#include <QString>

#include <memory>

namespace outbox::dispatch {

// The session settings of every dispatcher connection (its store and its
// LISTEN connection): besides `applicationName`, keepalives and
// tcp_user_timeout so that a server or network that vanishes is noticed in
// well under a minute (the connection closes, the dispatcher reconnects),
// and a statement_timeout so that no claim, ack or release waits forever
// behind a lock. None of them helps against a server process that is alive
// but frozen (its kernel still acknowledges every packet): `outboxctl
// dispatch` bounds its own shutdown for that case.
store::Session::Options dispatcherSessionOptions(const QString &applicationName);

// Refuses (PermissionDenied, naming the fix) a login that cannot claim,
// acknowledge or record attempts: checked once at start, because every
// statement would otherwise fail the same way forever.
core::Result<void> checkDispatchPrivileges(store::Session &session);

// Everything a dispatcher needs of the database, checked before it starts:
// the privileges (above), the schema this binary knows, and with aggregate
// order the index it needs. The errors name the fix.
core::Result<void> checkDispatchSetup(store::Session &session, core::Ordering ordering);

// The dispatcher's own database session (with OutboxStore's planner
// settings) and the OutboxStore on it. Opened and used in one thread;
// reopened after a loss. Dispatcher-internal.
class StoreConnection final {
public:
    // `applicationName` is used unless the ConnInfo names one.
    StoreConnection(core::ConnInfo connInfo, const QString &applicationName,
                    core::Ordering ordering);
    ~StoreConnection();
    Q_DISABLE_COPY_MOVE(StoreConnection)

    // Closes any previous connection first. With `checkSchema` a database
    // that checkDispatchSetup() refuses is refused.
    core::Result<void> open(bool checkSchema);
    void close();

    store::OutboxStore *store() const { return m_store.get(); } // null while closed
    // True when the server still answers on this connection.
    bool probe() const;

private:
    store::Session m_session;
    core::Ordering m_ordering;
    std::unique_ptr<store::OutboxStore> m_store;
};

} // namespace outbox::dispatch
