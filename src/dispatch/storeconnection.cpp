#include "dispatch/storeconnection.h"

#include "store/migrator.h"

namespace outbox::dispatch {

StoreConnection::StoreConnection(core::ConnInfo connInfo, const QString &applicationName)
    : m_session(std::move(connInfo), {.applicationName = applicationName, .genericPlans = true}) {}

StoreConnection::~StoreConnection() {
    close();
}

core::Result<void> StoreConnection::open(bool checkSchema) {
    close();
    if (auto opened = m_session.open(); !opened)
        return opened;
    if (checkSchema) {
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
