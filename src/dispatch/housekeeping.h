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
    // Unregisters and stops the thread, blocking until both are done,
    // unless shutDown() has finished() already.
    ~Housekeeping() override;
    Q_DISABLE_COPY_MOVE(Housekeeping)

    void setConfig(const core::DispatcherConfig &config);
    // Unregisters, stops retention and ends the thread, all in that thread:
    // returns at once, finished() follows. After the dispatcher's stopped().
    void shutDown();

Q_SIGNALS:
    void finished();

private:
    QThread m_thread;
    Registration *m_registration = nullptr; // live in m_thread, deleted there
    Retention *m_retention = nullptr;
    bool m_shutDown = false;
};

} // namespace outbox::dispatch
