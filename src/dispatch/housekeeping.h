#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/housekeepingoptions.h"

#include <QObject>
#include <QThread>

namespace outbox::dispatch {

class Dispatcher;
class Registration;
class Retention;

// A dispatcher's work beside delivery, in a thread of its own: its row in
// the registry (Registration) and retention (Retention). DispatcherHost
// makes one per dispatcher and wires it to the dispatcher's signals.
class Housekeeping final : public QObject {
    Q_OBJECT
public:
    Housekeeping(const core::ConnInfo &connInfo, const core::DispatcherConfig &config,
                 const HousekeepingOptions &options, const QString &application,
                 Dispatcher *dispatcher, QObject *parent = nullptr);
    // Unregisters (blocking until the row is deleted) and stops the thread.
    ~Housekeeping() override;
    Q_DISABLE_COPY_MOVE(Housekeeping)

    void setConfig(const core::DispatcherConfig &config);

private:
    QThread m_thread;
    Registration *m_registration = nullptr; // live in m_thread, deleted there
    Retention *m_retention = nullptr;
};

} // namespace outbox::dispatch
