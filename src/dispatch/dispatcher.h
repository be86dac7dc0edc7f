#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "core/retrypolicy.h"
#include "dispatch/ackbuffer.h"
#include "dispatch/claimwindow.h"
#include "dispatch/dispatchersignals.h"
#include "dispatch/dispatcherstats.h"
#include "dispatch/housekeepingoptions.h"
#include "dispatch/leasereleases.h"
#include "dispatch/publisher.h"
#include "dispatch/reconnectbackoff.h"
#include "dispatch/storeconnection.h"

#include <QElapsedTimer>
#include <QObject>
#include <QRandomGenerator>
#include <QSet>
#include <QTimer>

#include <limits>
#include <memory>

namespace outbox::dispatch {

class Notifier;

// Tuning that is not part of the user-facing configuration.
struct DispatcherOptions {
    core::Millis statsInterval{500};  // statsSnapshot period
    core::Millis notifyDebounce{3};   // coalescing window for NOTIFY bursts
    core::Millis flushDelay{2};       // longest an ack/nack waits in the buffer
    core::Millis sweepInterval{5000}; // dead sweep period
    core::Millis reconnectBaseDelay{100};
    core::Millis reconnectMaxDelay{5000};
    // After stop, how long to keep trying to reach the database to write the
    // buffered acks and releases before giving up (rows are then redelivered
    // when their leases expire).
    core::Millis stopFlushTimeout{5000};
    bool listen = true; // false: no LISTEN connection, wake-ups by polling only
    // application_name of the connections ("<name>" and "<name>-listen"),
    // so operators can spot dispatchers in pg_stat_activity. A name set in
    // the ConnInfo wins.
    QString applicationName = QStringLiteral("outbox-dispatch");
    // Added to the nice value of the dispatcher's thread (and so of the HTTP
    // threads Qt starts from it) when it starts: the console embeds the
    // dispatcher with a positive value so that, on a busy machine, its GUI
    // thread gets the CPU first. 0 leaves the priority alone.
    int threadNiceIncrement = 0;
    // Registry and retention, run beside the dispatcher by DispatcherHost.
    HousekeepingOptions housekeeping;
};

// The dispatcher claims due rows from outbox_events,
// hands them to a Publisher (HTTP by default), and acks/nacks the outcomes.
//
// Threading: create it, move it to a worker QThread (or use DispatcherHost,
// which does exactly that), and talk to it ONLY through queued signals/slots.
// It opens its own database connections in its thread on start().
//
// Slots (call queued, e.g. QMetaObject::invokeMethod(d, &Dispatcher::start)):
//   start()      validate the configuration, connect, check the schema
//                version, LISTEN, run. Emits stateChanged(Starting), then
//                stateChanged(Running) and started(workerId). A database that
//                cannot be reached is retried with backoff (state
//                Reconnecting); bad configuration, credentials or schema emit
//                failed(message), stateChanged(Failed) and stopped().
//   stop()       graceful: stop claiming, let in-flight requests finish within
//                shutdown_grace, abandon the rest, write every buffered
//                ack/nack, release unfinished leases (rows pending again, due
//                now), close the connections, emit stateChanged(Stopped) and
//                stopped(). start() may be called again afterwards.
//   abort()      the same without the grace period, synchronously (for
//                destructors; DispatcherHost calls it blocking).
//   setConfig()  live reconfiguration; validated first: configRejected(message)
//                and nothing changes, or configApplied(description). The worker
//                id cannot change while running.
//
// Signals: statsSnapshot(DispatcherStats) every DispatcherOptions::
// statsInterval while not Stopped, and once more on stop; stateChanged;
// started; stopped (always the last signal of a run); failed; configApplied;
// configRejected.
//
// Algorithm: claim only free slots (eventsInFlightLimit() - inFlight, capped by
// batch_size); a full batch claims again as soon as slots free up; otherwise
// wait for NOTIFY (debounced), the watchdog poll (poll_interval), or the
// earliest due time. Acks and nacks are buffered and written in batches, one
// statement each. A lost connection keeps the buffers and reconnects with
// backoff; acks are never dropped (at worst an event is delivered again).
//
// The Dispatcher is the state machine and the timers; the parts with state
// of their own are ClaimWindow (rows in flight, claim sizing, the claim
// statement), AckBuffer (outcomes waiting to be written), LeaseReleases
// (leases handed back on stop) and ReconnectBackoff.
class Dispatcher final : public DispatcherSignals {
    Q_OBJECT
public:
    // An empty factory means HttpPublisher.
    Dispatcher(core::ConnInfo connInfo, core::DispatcherConfig config,
               PublisherFactory publisherFactory = {}, DispatcherOptions options = {},
               QObject *parent = nullptr);
    ~Dispatcher() override;
    Q_DISABLE_COPY_MOVE(Dispatcher)

    // HttpPublisher in a thread of its own (ThreadedPublisher).
    static PublisherFactory httpPublisherFactory();

public Q_SLOTS:
    void start();
    void stop();
    void abort();
    void setConfig(const outbox::core::DispatcherConfig &config);

private:
    // Lifecycle.
    void setState(DispatcherState state);
    void fail(const QString &message);
    void noteError(const QString &message); // lastError, for the stats
    void startListening();
    void stopListening();
    void stopTimers();
    void disposePublisher(); // aborts what is in flight, deleted later

    // The connection: reconnects with backoff, keeping the buffers.
    void onConnected();
    void reconnect();
    // Records the error; returns true when it meant a lost connection (the
    // connection is closed then and a reconnect scheduled).
    bool handleStoreError(const core::Error &error, const QString &what);
    void enterReconnecting();

    // Claims, outcomes and the periodic work while running.
    void scheduleClaim(core::Millis in);
    void claimSoon(); // there is probably work: claim as soon as a slot is free
    void claim();
    void refreshClaimFloor();
    // One claim of a round: the routes it tests, its most rows, and the
    // destination it is for (empty: every destination that may take events).
    struct RoundClaim {
        QList<store::ClaimRoute> routes;
        int limit = std::numeric_limits<int>::max();
        QString destination;
    };
    // The claims one round makes with a routing publisher's `routes`: one
    // for all, or one per destination with room.
    QList<RoundClaim> claimsFor(const QList<store::ClaimRoute> &routes) const;
    void onPublished(const PublishOutcome &outcome);
    void scheduleFlush();
    bool flush(); // false when a statement failed (the buffers are kept)
    void sweep(store::SweepScope scope);
    void emitStats();

    // Shutdown: grace period, then the buffers and releases are written
    // (retrying a lost connection for stopFlushTimeout), then Stopped.
    void onGraceExpired();
    void abandonInFlight();
    void finishStop();
    void finalizeStop();

    core::ConnInfo m_connInfo;
    core::DispatcherConfig m_config;
    PublisherFactory m_factory;
    DispatcherOptions m_options;
    core::RetryPolicy m_retry;
    QRandomGenerator m_rng;

    StoreConnection m_connection;
    std::unique_ptr<Publisher> m_publisher;
    std::unique_ptr<Notifier> m_notifier;

    QTimer m_claimTimer;    // next claim (due time, NOTIFY, backlog)
    QTimer m_watchdogTimer; // poll_interval
    QTimer m_flushTimer;
    QTimer m_sweepTimer;
    QTimer m_statsTimer;
    QTimer m_graceTimer;
    ReconnectBackoff m_reconnect;
    QElapsedTimer m_stopClock; // bounds the final flush when the database is away

    ClaimWindow m_window;
    // Destinations whose own claim found nothing (Dispatcher::claimsFor).
    QSet<QString> m_emptyDestinations;
    AckBuffer m_buffer;
    LeaseReleases m_releases;

    DispatcherStats m_stats;
    DispatcherState m_state = DispatcherState::Stopped;
    bool m_everConnected = false; // in this run
    bool m_niced = false;         // threadNiceIncrement applied (once per thread)
    bool m_stopRequested = false;
    bool m_pauseWorkFailed = false; // the last continuePauseWork() failed (logged)
};

} // namespace outbox::dispatch
