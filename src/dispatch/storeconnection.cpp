#include "dispatch/storeconnection.h"

#include "store/database.h"
#include "store/migrator.h"

#include <QSqlQuery>

namespace outbox::dispatch {

StoreConnection::StoreConnection(core::ConnInfo connInfo, const QString &applicationName)
    : m_connInfo(std::move(connInfo)) {
    if (m_connInfo.option(QStringLiteral("application_name")).isEmpty())
        m_connInfo.setOption(QStringLiteral("application_name"), applicationName);
    // libpq waits forever by default; a dispatcher must notice a dead host.
    if (m_connInfo.option(QStringLiteral("connect_timeout")).isEmpty())
        m_connInfo.setOption(QStringLiteral("connect_timeout"), QStringLiteral("5"));
}

StoreConnection::~StoreConnection() {
    close();
}

core::Result<void> StoreConnection::open(bool checkSchema) {
    close();
    m_connectionName = store::uniqueConnectionName(QStringLiteral("outbox-dispatch"));
    core::Result<void> outcome;
    {
        auto db = store::openDatabase(m_connInfo, m_connectionName);
        if (!db) {
            outcome = core::Result<void>(db.error());
        } else if (checkSchema) {
            if (const auto current = store::Migrator(db.value()).checkCurrent(); !current)
                outcome = core::Result<void>(current.error());
        }
        if (outcome) {
            // The dispatcher's statements are prepared once and run thousands
            // of times; PostgreSQL would otherwise re-plan the claim on every
            // run (a custom plan beats the generic one's LIMIT guess), which
            // costs more than executing it when few rows are due.
            QSqlQuery set(db.value());
            if (!set.exec(QStringLiteral("SET plan_cache_mode = force_generic_plan")))
                outcome = core::Result<void>(
                    store::toError(set.lastError(), QStringLiteral("setting plan_cache_mode")));
        }
        if (outcome)
            m_store = std::make_unique<store::OutboxStore>(db.value());
    }
    if (!outcome)
        close(); // every handle of the connection is gone by now
    return outcome;
}

void StoreConnection::close() {
    m_store.reset();
    if (!m_connectionName.isEmpty()) {
        store::closeDatabase(m_connectionName);
        m_connectionName.clear();
    }
}

bool StoreConnection::probe() const {
    if (!m_store)
        return false;
    QSqlQuery query(m_store->database());
    return query.exec(QStringLiteral("SELECT 1"));
}

} // namespace outbox::dispatch
