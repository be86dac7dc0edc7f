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

core::Result<void> checkDispatchSetup(store::Session &session, core::Ordering ordering) {
    // Privileges first: without them the schema check itself would fail
    // with a bare "permission denied".
    if (const auto allowed = checkDispatchPrivileges(session); !allowed)
        return allowed;
    const store::Migrator migrator(session);
    if (const auto current = migrator.checkCurrent(); !current)
        return current;
    if (ordering == core::Ordering::Aggregate)
        return migrator.checkAggregateOrder();
    return {};
}

StoreConnection::StoreConnection(core::ConnInfo connInfo, const QString &applicationName,
                                 core::Ordering ordering)
    : m_session(std::move(connInfo),
                [&applicationName] {
                    auto options = dispatcherSessionOptions(applicationName);
                    options.genericPlans = true;
                    return options;
                }())
    , m_ordering(ordering) {}

StoreConnection::~StoreConnection() {
    close();
}

core::Result<void> StoreConnection::open(bool checkSchema) {
    close();
    if (auto opened = m_session.open(); !opened)
        return opened;
    if (checkSchema) {
        if (const auto ready = checkDispatchSetup(m_session, m_ordering); !ready) {
            m_session.close();
            return ready;
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
