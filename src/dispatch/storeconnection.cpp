#include "dispatch/storeconnection.h"

#include "store/migrator.h"
#include "store/queries.h"

namespace outbox::dispatch {

store::Session::Options dispatcherSessionOptions(const QString &applicationName) {
    store::Session::Options options;
    options.applicationName = applicationName;
    options.keepalivesIdleSeconds = 10;
    options.keepalivesIntervalSeconds = 5;
    options.keepalivesCount = 3;
    options.tcpUserTimeout = core::Millis(30000);
    options.statementTimeout = core::Millis(60000);
    return options;
}

core::Result<void> checkDispatchPrivileges(store::Session &session) {
    const auto privileges = store::EventQueries(session).privileges();
    if (!privileges)
        return privileges.error();
    if (privileges->canDispatch)
        return {};
    return core::Error{core::ErrorKind::PermissionDenied,
                       QStringLiteral("this database login may not dispatch: it needs SELECT and "
                                      "UPDATE of the delivery columns on outbox_events and INSERT "
                                      "on outbox_attempts — grant it the outbox_dispatcher role "
                                      "(GRANT outbox_dispatcher TO <login>; the roles come with "
                                      "`outboxctl migrate --with-roles`)")};
}

StoreConnection::StoreConnection(core::ConnInfo connInfo, const QString &applicationName)
    : m_session(std::move(connInfo), [&applicationName] {
        auto options = dispatcherSessionOptions(applicationName);
        options.genericPlans = true;
        return options;
    }()) {}

StoreConnection::~StoreConnection() {
    close();
}

core::Result<void> StoreConnection::open(bool checkSchema) {
    close();
    if (auto opened = m_session.open(); !opened)
        return opened;
    if (checkSchema) {
        // Privileges first: without them the schema check itself would fail
        // with a bare "permission denied".
        if (const auto allowed = checkDispatchPrivileges(m_session); !allowed) {
            m_session.close();
            return allowed.error();
        }
        if (const auto current = store::Migrator(m_session).checkCurrent(); !current) {
            m_session.close();
            return current.error();
        }
    }
    m_store = std::make_unique<store::OutboxStore>(m_session);
    return {};
}

void StoreConnection::close() {
    m_store.reset(); // before the session: it holds the connection
    m_session.close();
}

bool StoreConnection::probe() const {
    return m_store && m_session.probe().ok();
}

} // namespace outbox::dispatch
