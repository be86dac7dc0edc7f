#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "store/sessionkeeper.h"

#include <QObject>
#include <QString>

namespace outbox::dispatch {

// The dispatcher's LISTEN: a store::SessionKeeper on a dedicated, otherwise
// idle connection that LISTENs for the outbox's wake-up hint, folds bursts
// into one notified() per debounce window and reconnects with backoff after
// a loss. After every (re)subscription it emits notified() once, because
// hints sent while nobody listened are lost (also on the first: the
// dispatcher's first claim ran before the LISTEN began).
//
// Notifications are hints only; the dispatcher's watchdog poll covers gaps.
// Lives in and is used from one thread (the one it was created or moved to).
class Notifier final : public QObject {
    Q_OBJECT
public:
    struct Options {
        core::Millis debounce{3};
        core::Millis healthCheckInterval{2000};
        core::Millis reconnectBaseDelay{100};
        core::Millis reconnectMaxDelay{5000};
        // application_name of the connection unless the ConnInfo names one.
        QString applicationName = QStringLiteral("outbox-listen");
    };

    Notifier(core::ConnInfo connInfo, const Options &options, QObject *parent = nullptr);
    ~Notifier() override;
    Q_DISABLE_COPY_MOVE(Notifier)

    void start(); // connects and subscribes; failures are retried with backoff
    void stop();  // unsubscribes and closes the connection

Q_SIGNALS:
    void notified();
    // Lost or (re)gained the subscription; `detail` is a readable reason.
    void listeningChanged(bool listening, const QString &detail);

private:
    void onConnected(bool reconnected);
    void onRetrying(const QString &reason, core::Millis delay);
    void setListening(bool listening, const QString &detail);

    store::SessionKeeper m_keeper;
    bool m_listening = false;
};

} // namespace outbox::dispatch
