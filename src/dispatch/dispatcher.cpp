#include "dispatch/dispatcher.h"

#include "core/logline.h"
#include "core/uuidtext.h"
#include "core/uuidv7.h"
#include "dispatch/logging.h"
#include "dispatch/notifier.h"
#include "dispatch/routingpublisher.h"
#include "dispatch/threadpriority.h"
#include "store/outboxstore.h"

#include <QMap>

#include <algorithm>
#include <limits>

namespace outbox::dispatch {

Dispatcher::Dispatcher(core::ConnInfo connInfo, core::DispatcherConfig config,
                       PublisherFactory publisherFactory, DispatcherOptions options,
                       QObject *parent)
    : DispatcherSignals(parent)
    , m_connInfo(std::move(connInfo))
    , m_config(std::move(config))
    , m_factory(std::move(publisherFactory))
    , m_options(std::move(options))
    , m_rng(QRandomGenerator::securelySeeded())
    , m_connection(m_connInfo, m_options.applicationName, m_config.ordering)
    // Parented so that moveToThread() takes the timers along.
    , m_claimTimer(this)
    , m_watchdogTimer(this)
    , m_flushTimer(this)
    , m_sweepTimer(this)
    , m_statsTimer(this)
    , m_graceTimer(this)
    , m_reconnect(this, m_options.reconnectBaseDelay, m_options.reconnectMaxDelay,
                  [this] { reconnect(); }) {
    qRegisterMetaType<outbox::dispatch::DispatcherStats>();
    qRegisterMetaType<outbox::dispatch::DispatcherState>();
    qRegisterMetaType<outbox::dispatch::PublishOutcome>();
    qRegisterMetaType<outbox::core::DispatcherConfig>();

    if (!m_factory)
        m_factory = [this]() -> std::unique_ptr<Publisher> {
            if (m_config.routes)
                return std::make_unique<RoutingPublisher>();
            return httpPublisherFactory()();
        };

    m_claimTimer.setSingleShot(true);
    connect(&m_claimTimer, &QTimer::timeout, this, &Dispatcher::claim);
    connect(&m_watchdogTimer, &QTimer::timeout, this, [this] {
        refreshClaimFloor();
        m_emptyDestinations.clear();
        claim();
    });
    m_flushTimer.setSingleShot(true);
    connect(&m_flushTimer, &QTimer::timeout, this, [this] { flush(); });
    // Often: the cheap look at expired last leases. Pending rows at max
    // attempts only appear when max_attempts goes down: swept in full on
    // (re)connecting and when the configuration lowers the limit.
    connect(&m_sweepTimer, &QTimer::timeout, this,
            [this] { sweep(store::SweepScope::ExpiredLeases); });
    connect(&m_statsTimer, &QTimer::timeout, this, &Dispatcher::emitStats);
    m_graceTimer.setSingleShot(true);
    connect(&m_graceTimer, &QTimer::timeout, this, &Dispatcher::onGraceExpired);
}

Dispatcher::~Dispatcher() {
    if (m_state != DispatcherState::Stopped && m_state != DispatcherState::Failed)
        abort();
    m_connection.close();
}

// ---------------------------------------------------------------- lifecycle

void Dispatcher::start() {
    if (m_state != DispatcherState::Stopped && m_state != DispatcherState::Failed) {
        qCDebug(lcDispatch) << core::LogLine("start_ignored").add("reason", "already_running");
        return;
    }
    m_stats = DispatcherStats();
    m_stats.startedAt = QDateTime::currentDateTimeUtc();
    m_stats.concurrency = m_config.eventsInFlightLimit(); // events, as inFlight
    m_window.clear();
    m_buffer.clear();
    m_releases.clear();
    m_stopRequested = false;
    m_everConnected = false;
    m_reconnect.reset();

    if (const auto valid = m_config.validate(); !valid) {
        fail(valid.errorMessage());
        return;
    }
    m_stats.workerId = m_config.workerId.isNull() ? core::createUuidV7() : m_config.workerId;
    m_retry = core::RetryPolicy{m_config.baseDelay, m_config.maxDelay};
    setState(DispatcherState::Starting);
    qCInfo(lcDispatch) << core::LogLine("start")
                              .add("worker_id", core::uuidText(m_stats.workerId))
                              .add(m_config.logFields());

    if (m_options.threadNiceIncrement > 0 && !m_niced) {
        if (const auto lowered = lowerThreadPriority(m_options.threadNiceIncrement); lowered)
            m_niced = true;
        else
            qCWarning(lcDispatch)
                << core::LogLine("nice_failed").add("error", lowered.errorMessage());
    }
    m_publisher = m_factory();
    if (!m_publisher) {
        fail(QStringLiteral("no publisher could be created (internal error)"));
        return;
    }
    if (const auto configured = m_publisher->configure(m_config); !configured) {
        fail(configured.errorMessage());
        return;
    }
    connect(m_publisher.get(), &Publisher::finished, this, &Dispatcher::onPublished);
    // What the claims may take changed: so did their floor.
    connect(m_publisher.get(), &Publisher::claimRoutesChanged, this, [this] {
        m_window.clearFloor();
        refreshClaimFloor();
        claimSoon();
    });
    m_statsTimer.start(m_options.statsInterval);

    if (const auto opened = m_connection.open(!m_everConnected); !opened) {
        if (opened.errorKind() != core::ErrorKind::Unavailable) {
            fail(opened.errorMessage());
            return;
        }
        noteError(opened.errorMessage());
        qCWarning(lcDispatch) << core::LogLine("connect_failed")
                                     .add("will_retry", true)
                                     .add("error", opened.errorMessage());
        setState(DispatcherState::Reconnecting);
        m_reconnect.schedule();
        return;
    }
    onConnected();
}

void Dispatcher::setState(DispatcherState state) {
    m_stats.state = state;
    if (state == m_state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void Dispatcher::noteError(const QString &message) {
    m_stats.lastError = message;
    m_stats.lastErrorAt = QDateTime::currentDateTimeUtc();
}

void Dispatcher::startListening() {
    Notifier::Options options;
    options.debounce = m_options.notifyDebounce;
    options.reconnectBaseDelay = m_options.reconnectBaseDelay;
    options.reconnectMaxDelay = m_options.reconnectMaxDelay;
    options.applicationName = m_options.applicationName + QStringLiteral("-listen");
    m_notifier = std::make_unique<Notifier>(m_connInfo, options);
    connect(m_notifier.get(), &Notifier::notified, this, &Dispatcher::claimSoon);
    connect(m_notifier.get(), &Notifier::listeningChanged, this,
            [this](bool listening, const QString &) { m_stats.listening = listening; });
    m_notifier->start();
}

void Dispatcher::stopListening() {
    if (m_notifier) {
        m_notifier->stop();
        m_notifier.reset();
    }
    m_stats.listening = false;
}

void Dispatcher::stopTimers() {
    m_claimTimer.stop();
    m_watchdogTimer.stop();
    m_flushTimer.stop();
    m_sweepTimer.stop();
    m_statsTimer.stop();
    m_graceTimer.stop();
    m_reconnect.cancel();
}

void Dispatcher::disposePublisher() {
    if (!m_publisher)
        return;
    m_publisher->abortAll();
    disconnect(m_publisher.get(), nullptr, this, nullptr);
    // May be inside the publisher's own signal: delete it later.
    m_publisher.release()->deleteLater();
}

void Dispatcher::fail(const QString &message) {
    qCWarning(lcDispatch) << core::LogLine("failed").add("error", message);
    noteError(message);
    stopTimers();
    stopListening();
    disposePublisher();
    m_connection.close();
    Q_EMIT failed(message);
    setState(DispatcherState::Failed);
    emitStats();
    Q_EMIT stopped();
}

// --------------------------------------------------------------- connection

void Dispatcher::onConnected() {
    const bool first = !m_everConnected;
    m_everConnected = true;
    m_reconnect.reset();
    if (m_stopRequested) {
        // Reconnected only to write what was buffered before stopping.
        finishStop();
        return;
    }
    if (first) {
        qCInfo(lcDispatch)
            << core::LogLine("connected").add("worker_id", core::uuidText(m_stats.workerId));
        if (m_options.listen)
            startListening();
        setState(DispatcherState::Running);
        Q_EMIT started(m_stats.workerId);
    } else {
        ++m_stats.reconnects;
        qCInfo(lcDispatch) << core::LogLine("reconnected")
                                  .add("pending_acks", m_buffer.ackCount())
                                  .add("pending_nacks", m_buffer.nackCount());
        setState(DispatcherState::Running);
    }
    m_watchdogTimer.start(m_config.pollInterval);
    m_sweepTimer.start(m_options.sweepInterval);
    if (!flush())
        return;
    sweep(store::SweepScope::All);
    if (m_state == DispatcherState::Running)
        scheduleClaim(core::Millis(0));
}

void Dispatcher::enterReconnecting() {
    m_connection.close();
    m_window.clearFloor();
    m_claimTimer.stop();
    m_watchdogTimer.stop();
    m_flushTimer.stop();
    m_sweepTimer.stop();
    if (!m_stopRequested)
        setState(DispatcherState::Reconnecting);
    m_reconnect.schedule();
}

void Dispatcher::reconnect() {
    if (m_state == DispatcherState::Stopped || m_state == DispatcherState::Failed)
        return;
    if (const auto opened = m_connection.open(!m_everConnected); !opened) {
        noteError(opened.errorMessage());
        // Before the first connection a wrong password or a missing schema
        // will not fix itself: report it instead of retrying forever.
        if (!m_everConnected && opened.errorKind() != core::ErrorKind::Unavailable &&
            !m_stopRequested) {
            fail(opened.errorMessage());
            return;
        }
        if (m_stopRequested && m_stopClock.isValid() &&
            m_stopClock.elapsed() >= m_options.stopFlushTimeout.count()) {
            finalizeStop();
            return;
        }
        m_reconnect.schedule();
        return;
    }
    onConnected();
}

bool Dispatcher::handleStoreError(const core::Error &error, const QString &what) {
    ++m_stats.errors;
    noteError(what % QStringLiteral(": ") % error.message);

    // A privilege revoked while running does not come back by retrying.
    if (error.kind == core::ErrorKind::PermissionDenied && !m_stopRequested) {
        fail(what % QStringLiteral(": ") % error.message);
        return true;
    }
    bool lost = error.kind == core::ErrorKind::Unavailable;
    // The store's error may not say why; ask the connection itself.
    if (!lost && !m_connection.probe())
        lost = true;
    if (!lost) {
        qCWarning(lcDispatch)
            << core::LogLine("statement_failed").add("what", what).add("error", error.message);
        return false;
    }
    qCWarning(lcDispatch) << core::LogLine("connection_lost")
                                 .add("what", what)
                                 .add("pending_acks", m_buffer.ackCount())
                                 .add("pending_nacks", m_buffer.nackCount())
                                 .add("error", error.message);
    enterReconnecting();
    return true;
}

// ----------------------------------------------------------------- claiming

void Dispatcher::scheduleClaim(core::Millis in) {
    if (m_state != DispatcherState::Running || m_stopRequested)
        return;
    in = std::max(in, core::Millis(0));
    if (in.count() > 0)
        m_emptyDestinations.clear(); // a retry falls due: whose, the claim finds out
    if (m_claimTimer.isActive() && m_claimTimer.remainingTime() <= in.count())
        return;
    m_claimTimer.start(in);
}

void Dispatcher::claimSoon() {
    m_window.noteBacklog();
    m_emptyDestinations.clear(); // a NOTIFY, a circuit, a new configuration
    scheduleClaim(core::Millis(0));
}

void Dispatcher::claim() {
    if (m_state != DispatcherState::Running || m_stopRequested || !m_connection.store())
        return;
    if (std::min(m_window.freeSlots(m_config), m_config.batchSize) <= 0) {
        m_window.noteBacklog();
        return;
    }
    // `full`: more is probably waiting for room in the window; `waiting`:
    // or for room at a destination (the outcome that makes it claims again).
    bool full = false, waiting = false;
    const QList<store::ClaimRoute> routes = m_publisher->claimRoutes();
    for (const RoundClaim &round : claimsFor(routes)) {
        const int wanted = std::min(m_window.freeSlots(m_config), m_config.batchSize);
        if (wanted <= 0)
            break;
        auto claimed = m_window.claim(*m_connection.store(), m_stats.workerId, m_config,
                                      round.routes, m_stats, round.limit);
        if (!claimed) {
            handleStoreError(claimed.error(), QStringLiteral("claim"));
            return;
        }
        m_publisher->publishBatch(claimed->rows);
        if (!round.destination.isEmpty()) {
            if (claimed->rows.isEmpty())
                m_emptyDestinations.insert(round.destination);
            else
                m_emptyDestinations.remove(round.destination);
        }
        waiting = waiting || claimed->full;
        full = full || (claimed->full && round.limit >= wanted);
    }
    // A destination without room (full, or open) may have events waiting
    // for it: the outcomes that give it room claim again.
    const bool shortOfRoom = std::any_of(routes.cbegin(), routes.cend(),
                                         [](const auto &route) { return !route.claimable; });
    if (waiting || shortOfRoom)
        m_window.noteBacklog();
    if (!routes.isEmpty() && std::none_of(routes.cbegin(), routes.cend(),
                                          [](const auto &route) { return route.claimable; }))
        return; // every destination is full or open: an outcome or a circuit wakes us
    if (full) {
        // Probably more waiting: claim again as soon as there is room.
        if (m_window.freeSlots(m_config) > 0)
            scheduleClaim(core::Millis(0));
        return;
    }
    if (waiting)
        return; // a destination took all its room: its outcomes claim again
    // Nothing more is due now: sleep until the earliest retry (the watchdog
    // poll and NOTIFY cover everything else).
    auto due = m_connection.store()->timeUntilNextDue(m_config.nameSpace, m_config.ordering);
    if (!due) {
        handleStoreError(due.error(), QStringLiteral("next due time"));
        return;
    }
    // With routes, an event due now that the claim left is one no
    // destination may take now (an open circuit, a full or paused
    // destination): claiming again at once would spin until it may.
    const bool dueNow = due.value() && due.value()->count() <= 0;
    if (due.value() && *due.value() < m_config.pollInterval && !(dueNow && !routes.isEmpty()))
        scheduleClaim(*due.value() + core::Millis(1));
}

QList<Dispatcher::RoundClaim> Dispatcher::claimsFor(const QList<store::ClaimRoute> &routes) const {
    if (routes.isEmpty())
        return {RoundClaim{routes, std::numeric_limits<int>::max(), {}}};
    const int wanted = std::min(m_window.freeSlots(m_config), m_config.batchSize);
    QMap<QString, int> room; // of the destinations that may take events now
    for (const store::ClaimRoute &route : routes) {
        if (route.claimable)
            room.insert(route.destination, route.room);
    }
    // One claim for all while each destination can take a whole claim;
    // else one per destination, each up to its room, so that the oldest
    // events of a slow or rate-limited destination do not fill the window
    // (docs/DECISIONS.md, "Isolation between destinations").
    if (std::all_of(room.cbegin(), room.cend(), [wanted](int free) { return free >= wanted; }))
        return room.isEmpty() ? QList<RoundClaim>()
                              : QList{RoundClaim{routes, std::numeric_limits<int>::max(), {}}};
    QList<RoundClaim> claims;
    for (auto it = room.cbegin(); it != room.cend(); ++it) {
        // Found nothing to claim since the last poll, NOTIFY or due retry:
        // a statement a round for nothing would halve the others' claims.
        if (m_emptyDestinations.contains(it.key()))
            continue;
        QList<store::ClaimRoute> mine = routes;
        for (store::ClaimRoute &route : mine)
            route.claimable = route.claimable && route.destination == it.key();
        claims.append({mine, it.value(), it.key()});
    }
    return claims;
}

void Dispatcher::refreshClaimFloor() {
    if (m_state != DispatcherState::Running || !m_connection.store())
        return;
    m_window.refreshFloor(*m_connection.store(), m_config.nameSpace,
                          m_publisher ? m_publisher->claimRoutes() : QList<store::ClaimRoute>());
}

// ---------------------------------------------------------- acks and nacks

void Dispatcher::onPublished(const PublishOutcome &outcome) {
    const auto flight = m_window.complete(outcome);
    if (!flight)
        return; // abandoned at shutdown, or a stale completion

    if (outcome.kind != PublishOutcome::Kind::Returned) {
        m_stats.httpDuration.record(outcome.duration.count());
        m_stats.recentHttpDuration.record(outcome.duration.count());
    }
    m_stats.maybeDuplicated += outcome.maybeDuplicated ? 1 : 0;
    const core::Millis retryDelay =
        outcome.kind != PublishOutcome::Kind::Retry ? core::Millis(0)
        : outcome.backoff                           ? *outcome.backoff // the destination's own
                          : m_retry.nextDelay(outcome.attempts, m_rng, outcome.retryAfter);
    m_buffer.add(outcome, flight->createdAt, retryDelay);

    if (m_stopRequested) {
        if (m_window.isEmpty())
            finishStop();
        return;
    }
    if (m_state != DispatcherState::Running)
        return; // buffered until the connection is back

    if (m_buffer.size() >= m_config.batchSize || m_window.isEmpty()) {
        if (!flush())
            return;
    } else {
        scheduleFlush();
    }
    if (m_window.hasBacklog() && m_window.worthRefilling(m_config))
        scheduleClaim(core::Millis(0));
}

void Dispatcher::scheduleFlush() {
    if (!m_flushTimer.isActive())
        m_flushTimer.start(m_options.flushDelay);
}

bool Dispatcher::flush() {
    m_flushTimer.stop();
    if (!m_connection.store())
        return false;
    if (m_buffer.isEmpty())
        return true;
    const auto flushed =
        m_buffer.flush(*m_connection.store(), m_stats.workerId, m_config.maxAttempts, m_stats);
    if (!flushed) {
        // Kept for the next try: after the reconnect, or a poll interval
        // later when the connection itself is fine.
        if (!handleStoreError(flushed.error(), QStringLiteral("writing acks and nacks")))
            m_flushTimer.start(m_config.pollInterval);
        return false;
    }
    if (m_config.ordering == core::Ordering::Aggregate)
        scheduleClaim(core::Millis(0)); // the acks may have let later events of an aggregate go
    if (flushed->soonestRetry)
        scheduleClaim(*flushed->soonestRetry + core::Millis(1));
    return true;
}

void Dispatcher::sweep(store::SweepScope scope) {
    if (m_state != DispatcherState::Running || !m_connection.store())
        return;
    const auto swept =
        m_connection.store()->deadSweep(m_config.maxAttempts, m_config.nameSpace, scope);
    if (!swept) {
        handleStoreError(swept.error(), QStringLiteral("dead sweep"));
        return;
    }
    if (swept.value() > 0) {
        m_stats.swept += swept.value();
        qCInfo(lcDispatch) << core::LogLine("dead_sweep").add("rows", swept.value());
    }
    // Holding or releasing that a pause or resume left unfinished (its client
    // went away), one bounded step. Not delivery's own work: a failure (a role
    // without the grant fails every time) is logged once and does not stop it.
    const auto settled = m_connection.store()->continuePauseWork();
    if (!settled && !m_pauseWorkFailed)
        qCWarning(lcDispatch).noquote()
            << QLatin1String("event=pause_work_failed error=\"") % settled.errorMessage() % u'"';
    m_pauseWorkFailed = !settled;
    if (settled && settled.value() > 0)
        qCInfo(lcDispatch).noquote()
            << QLatin1String("event=pause_work events=") % QString::number(settled.value());
}

void Dispatcher::emitStats() {
    m_stats.at = QDateTime::currentDateTimeUtc();
    m_stats.inFlight = m_window.inFlight();
    m_stats.pendingAcks = m_buffer.ackCount();
    m_stats.pendingNacks = m_buffer.nackCount();
    m_stats.concurrency = m_config.eventsInFlightLimit(); // events, as inFlight
    if (m_publisher)                                      // after a stop: the last ones known
        m_stats.destinations = m_publisher->destinationStats();
    Q_EMIT statsSnapshot(m_stats);
    m_stats.recentCommitToDelivered.reset();
    m_stats.recentHttpDuration.reset();
}

// ------------------------------------------------------------ configuration

void Dispatcher::setConfig(const core::DispatcherConfig &config) {
    if (const auto valid = config.validate(); !valid) {
        qCWarning(lcDispatch)
            << core::LogLine("config_rejected").add("error", valid.errorMessage());
        Q_EMIT configRejected(valid.errorMessage());
        return;
    }
    const bool active = m_state != DispatcherState::Stopped && m_state != DispatcherState::Failed;
    core::DispatcherConfig next = config;
    if (active) {
        if (!config.workerId.isNull() && config.workerId != m_stats.workerId) {
            const QString message = QStringLiteral(
                "the worker id cannot change while the dispatcher runs; stop it first");
            Q_EMIT configRejected(message);
            return;
        }
        next.workerId = m_config.workerId;
        if (m_publisher) {
            if (const auto configured = m_publisher->configure(next); !configured) {
                Q_EMIT configRejected(configured.errorMessage());
                return;
            }
        }
    }
    // A lower limit can leave pending rows at or over it, which no claim
    // takes and the periodic sweep does not look at; another namespace needs
    // its own floor and its own full sweep.
    const bool namespaceChanged = next.nameSpace != m_config.nameSpace;
    const bool sweepAll = active && (next.maxAttempts < m_config.maxAttempts || namespaceChanged);
    if (namespaceChanged)
        m_window.clearFloor();
    m_config = std::move(next);
    m_retry = core::RetryPolicy{m_config.baseDelay, m_config.maxDelay};
    m_stats.concurrency = m_config.eventsInFlightLimit(); // events, as inFlight
    if (m_watchdogTimer.isActive())
        m_watchdogTimer.start(m_config.pollInterval);
    qCInfo(lcDispatch) << core::LogLine("config_applied").add(m_config.logFields());
    Q_EMIT configApplied(m_config.describe());
    if (sweepAll)
        sweep(store::SweepScope::All);
    if (active)
        claimSoon();
}

} // namespace outbox::dispatch
