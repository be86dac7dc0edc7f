#pragma once

#include "core/conninfo.h"
#include "core/duration.h"

#include <QObject>
#include <QRandomGenerator>
#include <QString>
#include <QTimer>

namespace outbox::dispatch {

// LISTENs for the outbox's wake-up hint on a dedicated, otherwise idle
// connection (QPSQL's subscribeToNotification), coalesces bursts into one
// notified() per debounce window, and keeps the subscription alive: a health
// check notices a dropped connection (server restart, pg_terminate_backend)
// and reconnects with exponential backoff. After every (re)subscription it
// emits notified() once, because hints sent while it was away are lost.
//
// Notifications are hints only; the dispatcher's watchdog poll covers gaps.
// Lives in and is used from one thread (the one it was created or moved to).
class Notifier final : public QObject {
    Q_OBJECT
public:
    static constexpr const char *DefaultChannel = "outbox_events";

    struct Options {
        QString channel = QLatin1String(DefaultChannel);
        core::Millis debounce{3};
        core::Millis healthCheckInterval{2000};
        core::Millis reconnectBaseDelay{100};
        core::Millis reconnectMaxDelay{5000};
        // application_name of the connection unless the ConnInfo sets one.
        QString applicationName = QStringLiteral("outbox-listen");
    };

    explicit Notifier(core::ConnInfo connInfo, QObject *parent = nullptr);
    Notifier(core::ConnInfo connInfo, Options options, QObject *parent = nullptr);
    ~Notifier() override;
    Q_DISABLE_COPY_MOVE(Notifier)

    void start(); // connects and subscribes; failures are retried with backoff
    void stop();  // unsubscribes and closes the connection
    bool isListening() const { return m_listening; }
    int backendPid() const { return m_backendPid; } // 0 when not connected
    int reconnects() const { return m_reconnects; }

Q_SIGNALS:
    void notified();
    // Lost or (re)gained the subscription; `detail` is a readable reason.
    void listeningChanged(bool listening, const QString &detail);

private:
    void connectNow();
    void onNotification(const QString &name);
    void checkHealth();
    void connectionLost(const QString &reason);
    void closeConnection();

    core::ConnInfo m_connInfo;
    Options m_options;
    QString m_connectionName;
    QRandomGenerator m_rng;
    QTimer m_debounce;
    QTimer m_health;
    QTimer m_reconnect;
    int m_failures = 0;
    int m_reconnects = 0;
    int m_backendPid = 0;
    bool m_running = false;
    bool m_listening = false;
    bool m_hadConnection = false; // this run connected before: the next connect is a reconnect
};

} // namespace outbox::dispatch
