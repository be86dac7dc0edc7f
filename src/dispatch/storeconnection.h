#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "store/outboxstore.h"
#include "store/session.h"

#include <QString>

#include <memory>

namespace outbox::dispatch {

// The dispatcher's own database session (with OutboxStore's planner
// settings) and the OutboxStore on it. Opened and used in one thread;
// reopened after a loss. Dispatcher-internal.
class StoreConnection final {
public:
    // `applicationName` is used unless the ConnInfo names one.
    StoreConnection(core::ConnInfo connInfo, const QString &applicationName);
    ~StoreConnection();
    Q_DISABLE_COPY_MOVE(StoreConnection)

    // Closes any previous connection first. With `checkSchema` a database
    // whose schema this binary does not know is refused (the error says to
    // run `outboxctl migrate`).
    core::Result<void> open(bool checkSchema);
    void close();

    store::OutboxStore *store() const { return m_store.get(); } // null while closed
    // True when the server still answers on this connection.
    bool probe() const;

private:
    store::Session m_session;
    std::unique_ptr<store::OutboxStore> m_store;
};

} // namespace outbox::dispatch
