#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "store/session.h"

#include <QObject>
#include <QRandomGenerator>
#include <QString>
#include <QTimer>

namespace outbox::store {

// Keeps a Session connected for an owner that lives long: connects, probes
// the idle connection now and then, and after a failed connect or a lost
// connection (server restart, pg_terminate_backend) reconnects with
// exponential backoff. Optionally LISTENs on kNotifyChannel and folds bursts
// of notifications into one notified(); after every reconnect it emits
// notified() once too, because what was sent while it was away is lost.
//
// The owner runs its statements on session() between connected() and
// retrying()/gaveUp(). Lives in and is used from one thread (the one it was
// created in or moved to, with its owner).
class SessionKeeper final : public QObject {
    Q_OBJECT
public:
    enum class Listen {
        Off,
        IfPossible, // a failed LISTEN is logged; the session is used without it
        Required,   // a failed LISTEN fails the connect (retried like any other)
    };

    struct Options {
        Session::Options session;
        Listen listen = Listen::Off;
        // Notifications within this window fold into one notified(): the
        // first one arms the timer, the rest of the burst rides along.
        core::Millis debounce{3};
        // An idle connection is probed this often, so a dead server is noticed
        // without waiting for the owner's next statement.
        core::Millis healthCheckInterval{2000};
        // Backoff between attempts: doubles from the first to the cap.
        core::Millis reconnectMin{100};
        core::Millis reconnectMax{5000};
        // Equal jitter on the backoff (core::RetryPolicy), so that many
        // processes cut off together do not come back in step.
        bool jitter = true;
        // A connect that fails with ErrorKind::Invalid, AuthenticationFailed
        // or PermissionDenied (a missing database, a wrong password) is not
        // retried: gaveUp(). The kinds are the store's classification of the
        // server's error code (store/errorclass.h), whatever its language.
        bool giveUpOnInvalid = false;
    };

    SessionKeeper(core::ConnInfo info, Options options, QObject *parent = nullptr);
    ~SessionKeeper() override;
    Q_DISABLE_COPY_MOVE(SessionKeeper)

    void start(); // connects now; a failure is retried with backoff
    void stop();  // closes the session; no more attempts
    // Connects again at once, from the start of the backoff: also when
    // connected, and after gaveUp().
    void reconnectNow();
    // Probes the session now. When it is gone it counts as lost (closed,
    // retrying(), reconnected with backoff) and this returns false: for an
    // owner whose statement failed without saying why.
    bool check();

    bool isConnected() const { return m_connected; }
    // Successful connects since start() that came after an earlier one.
    int reconnects() const { return m_reconnects; }
    Session &session() { return m_session; }

Q_SIGNALS:
    // Connected (and subscribed, with Listen::Required); `reconnected` after
    // an earlier connection of this run.
    void connected(bool reconnected);
    // A connect failed or the connection was lost; the next attempt is in `delay`.
    void retrying(const QString &reason, outbox::core::Millis delay);
    // A connect failed in a way that retrying cannot fix (giveUpOnInvalid);
    // `kind` says which (AuthenticationFailed: ask for a password).
    void gaveUp(const QString &reason, outbox::core::ErrorKind kind);
    void notified();

private:
    void connectNow();
    void closeSession(); // not connected, no health checks
    void lost(const QString &reason);
    void onNotification();

    Session m_session;
    Options m_options;
    QRandomGenerator m_rng;
    QTimer m_debounce;
    QTimer m_health;
    QTimer m_reconnect;
    int m_failures = 0; // failed attempts since the last connect
    int m_reconnects = 0;
    bool m_running = false;
    bool m_connected = false;
    bool m_hadConnection = false; // this run connected before: the next connect is a reconnect
};

} // namespace outbox::store
