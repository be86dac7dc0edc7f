#include "dispatch/dispatcher.h"

#include "core/uuidv7.h"
#include "dispatch/httppublisher.h"
#include "dispatch/logging.h"
#include "dispatch/notifier.h"
#include "dispatch/threadedpublisher.h"
#include "store/outboxstore.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace outbox::dispatch {

namespace {

qint64 micros(std::chrono::microseconds value) {
    return value.count();
}

} // namespace

Dispatcher::Dispatcher(core::ConnInfo connInfo, core::DispatcherConfig config,
                       PublisherFactory publisherFactory, DispatcherOptions options,
                       QObject *parent)
    : QObject(parent)
    , m_connInfo(std::move(connInfo))
    , m_config(std::move(config))
    , m_factory(std::move(publisherFactory))
    , m_options(std::move(options))
    , m_rng(QRandomGenerator::securelySeeded())
    , m_connection(m_connInfo, m_options.applicationName)
    // Parented so that moveToThread() takes the timers along.
    , m_claimTimer(this)
    , m_watchdogTimer(this)
    , m_flushTimer(this)
    , m_sweepTimer(this)
    , m_statsTimer(this)
    , m_reconnectTimer(this)
    , m_graceTimer(this) {
    qRegisterMetaType<outbox::dispatch::DispatcherStats>();
    qRegisterMetaType<outbox::dispatch::DispatcherState>();
    qRegisterMetaType<outbox::dispatch::PublishOutcome>();
    qRegisterMetaType<outbox::core::DispatcherConfig>();

    if (!m_factory)
        m_factory = httpPublisherFactory();

    m_claimTimer.setSingleShot(true);
    connect(&m_claimTimer, &QTimer::timeout, this, &Dispatcher::claim);
    connect(&m_watchdogTimer, &QTimer::timeout, this, [this] {
        refreshClaimFloor();
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
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &Dispatcher::reconnect);
    m_graceTimer.setSingleShot(true);
    connect(&m_graceTimer, &QTimer::timeout, this, &Dispatcher::onGraceExpired);
}

Dispatcher::~Dispatcher() {
    if (m_state != DispatcherState::Stopped && m_state != DispatcherState::Failed)
        abort();
    m_connection.close();
}

PublisherFactory Dispatcher::httpPublisherFactory() {
    // Its own thread: claims and acks wait on the database, and requests and
    // replies should not wait for them (docs/PERFORMANCE.md).
    return ThreadedPublisher::inOwnThread([] { return std::make_unique<HttpPublisher>(); },
                                          QStringLiteral("outbox-http"));
}

// ---------------------------------------------------------------- lifecycle

void Dispatcher::start() {
    if (m_state != DispatcherState::Stopped && m_state != DispatcherState::Failed) {
        qCDebug(lcDispatch) << "event=start_ignored reason=already_running";
        return;
    }
    m_claimFloor.clear(); // a floor from an earlier run could hide requeued rows
    m_stats = DispatcherStats();
    m_stats.startedAt = QDateTime::currentDateTimeUtc();
    m_stats.concurrency = m_config.concurrency;
    m_buffer.clear();
    m_releases.clear();
    m_inFlight.clear();
    m_stopRequested = false;
    m_everConnected = false;
    m_moreWork = false;
    m_reconnectFailures = 0;

    if (const auto valid = m_config.validate(); !valid) {
        fail(valid.errorMessage());
        return;
    }
    m_stats.workerId = m_config.workerId.isNull() ? core::createUuidV7() : m_config.workerId;
    m_retry = core::RetryPolicy{m_config.baseDelay, m_config.maxDelay};
    setState(DispatcherState::Starting);
    qCInfo(lcDispatch).noquote() << QLatin1String("event=start worker_id=") %
                                        uuidText(m_stats.workerId) % u' ' % m_config.describe();

    if (m_options.threadNiceIncrement > 0 && !m_niced) {
        // Linux: nice is per thread; threads started from here inherit it.
        const auto tid = id_t(::syscall(SYS_gettid));
        errno = 0;
        const int current = ::getpriority(PRIO_PROCESS, tid);
        if ((current != -1 || errno == 0) &&
            ::setpriority(PRIO_PROCESS, tid, current + m_options.threadNiceIncrement) == 0) {
            m_niced = true;
        } else {
            qCWarning(lcDispatch).noquote() << QLatin1String("event=nice_failed error=\"") %
                                                   QString::fromLocal8Bit(std::strerror(errno)) %
                                                   u'"';
        }
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
    m_statsTimer.start(m_options.statsInterval);

    if (const auto opened = m_connection.open(!m_everConnected); !opened) {
        if (opened.errorKind() != core::ErrorKind::Unavailable) {
            fail(opened.errorMessage());
            return;
        }
        m_stats.lastError = opened.errorMessage();
        m_stats.lastErrorAt = QDateTime::currentDateTimeUtc();
        qCWarning(lcDispatch).noquote()
            << QLatin1String("event=connect_failed will_retry=true error=\"") %
                   opened.errorMessage() % u'"';
        setState(DispatcherState::Reconnecting);
        scheduleReconnect();
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
    m_reconnectTimer.stop();
    m_graceTimer.stop();
}

// --------------------------------------------------------------- connection

void Dispatcher::onConnected() {
    const bool first = !m_everConnected;
    m_everConnected = true;
    m_reconnectFailures = 0;
    if (m_stopRequested) {
        // Reconnected only to write what was buffered before stopping.
        finishStop();
        return;
    }
    if (first) {
        qCInfo(lcDispatch).noquote()
            << QLatin1String("event=connected worker_id=") % uuidText(m_stats.workerId);
        if (m_options.listen) {
            Notifier::Options options;
            options.debounce = m_options.notifyDebounce;
            options.reconnectBaseDelay = m_options.reconnectBaseDelay;
            options.reconnectMaxDelay = m_options.reconnectMaxDelay;
            options.applicationName = m_options.applicationName + QStringLiteral("-listen");
            m_notifier = std::make_unique<Notifier>(m_connInfo, options);
            connect(m_notifier.get(), &Notifier::notified, this, [this] {
                m_moreWork = true;
                scheduleClaim(core::Millis(0));
            });
            connect(m_notifier.get(), &Notifier::listeningChanged, this,
                    [this](bool listening, const QString &) { m_stats.listening = listening; });
            m_notifier->start();
        }
        setState(DispatcherState::Running);
        Q_EMIT started(m_stats.workerId);
    } else {
        ++m_stats.reconnects;
        qCInfo(lcDispatch).noquote() << QLatin1String("event=reconnected pending_acks=") %
                                            QString::number(m_buffer.ackCount()) %
                                            QLatin1String(" pending_nacks=") %
                                            QString::number(m_buffer.nackCount());
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
    m_claimFloor.clear();
    m_claimTimer.stop();
    m_watchdogTimer.stop();
    m_flushTimer.stop();
    m_sweepTimer.stop();
    if (!m_stopRequested)
        setState(DispatcherState::Reconnecting);
    scheduleReconnect();
}

void Dispatcher::scheduleReconnect() {
    if (m_reconnectTimer.isActive())
        return;
    const core::RetryPolicy backoff{m_options.reconnectBaseDelay, m_options.reconnectMaxDelay};
    const core::Millis delay = backoff.nextDelay(++m_reconnectFailures, m_rng);
    qCInfo(lcDispatch).noquote() << QLatin1String("event=reconnect_scheduled attempt=") %
                                        QString::number(m_reconnectFailures) %
                                        QLatin1String(" in_ms=") % QString::number(delay.count());
    m_reconnectTimer.start(delay);
}

void Dispatcher::reconnect() {
    if (m_state == DispatcherState::Stopped || m_state == DispatcherState::Failed)
        return;
    if (const auto opened = m_connection.open(!m_everConnected); !opened) {
        m_stats.lastError = opened.errorMessage();
        m_stats.lastErrorAt = QDateTime::currentDateTimeUtc();
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
        scheduleReconnect();
        return;
    }
    onConnected();
}

bool Dispatcher::handleStoreError(const core::Error &error, const QString &what) {
    ++m_stats.errors;
    m_stats.lastError = what % QStringLiteral(": ") % error.message;
    m_stats.lastErrorAt = QDateTime::currentDateTimeUtc();

    bool lost = error.kind == core::ErrorKind::Unavailable;
    // The store's error may not say why; ask the connection itself.
    if (!lost && !m_connection.probe())
        lost = true;
    if (!lost) {
        qCWarning(lcDispatch).noquote() << QLatin1String("event=statement_failed what=") % what %
                                               QLatin1String(" error=\"") % error.message % u'"';
        return false;
    }
    qCWarning(lcDispatch).noquote()
        << QLatin1String("event=connection_lost what=") % what % QLatin1String(" pending_acks=") %
               QString::number(m_buffer.ackCount()) % QLatin1String(" pending_nacks=") %
               QString::number(m_buffer.nackCount()) % QLatin1String(" error=\"") % error.message %
               u'"';
    enterReconnecting();
    return true;
}

// ----------------------------------------------------------------- claiming

int Dispatcher::freeSlots() const {
    return m_config.concurrency - int(m_inFlight.size());
}

int Dispatcher::minimumClaim() const {
    // Refilling one slot at a time would cost a statement per event; wait
    // until half of the window is free (or everything finished). Larger
    // claims and ack statements cost less per event (docs/DECISIONS.md).
    return std::max(1, std::min(m_config.batchSize, m_config.concurrency) / 2);
}

void Dispatcher::scheduleClaim(core::Millis in) {
    if (m_state != DispatcherState::Running || m_stopRequested)
        return;
    in = std::max(in, core::Millis(0));
    if (m_claimTimer.isActive() && m_claimTimer.remainingTime() <= in.count())
        return;
    m_claimTimer.start(in);
}

void Dispatcher::claim() {
    if (m_state != DispatcherState::Running || m_stopRequested || !m_connection.store())
        return;
    const int free = freeSlots();
    const int wanted = std::min(free, m_config.batchSize);
    if (wanted <= 0) {
        m_moreWork = true;
        return;
    }
    m_moreWork = false;
    store::ClaimOptions options;
    options.batchSize = wanted;
    options.lease = m_config.lease;
    options.maxAttempts = m_config.maxAttempts;
    options.nameSpace = m_config.nameSpace;
    options.createdFrom = m_claimFloor;
    auto claimed = m_connection.store()->claimBatch(m_stats.workerId, options);
    ++m_stats.claims;
    if (!claimed) {
        handleStoreError(claimed.error(), QStringLiteral("claim"));
        return;
    }
    const QList<store::ClaimedEvent> &rows = claimed.value();
    m_stats.claimed += rows.size();
    for (const store::ClaimedEvent &row : rows)
        m_inFlight.insert(row.id, Flight{row.attempts, row.createdAt});
    m_publisher->publishBatch(rows);
    qCDebug(lcDispatch).noquote() << QLatin1String("event=claim wanted=") %
                                         QString::number(wanted) % QLatin1String(" got=") %
                                         QString::number(rows.size());

    if (rows.size() == wanted) {
        // Probably more waiting: claim again as soon as there is room.
        m_moreWork = true;
        if (freeSlots() > 0)
            scheduleClaim(core::Millis(0));
        return;
    }
    // Nothing more is due now: sleep until the earliest retry (the watchdog
    // poll and NOTIFY cover everything else).
    auto due = m_connection.store()->timeUntilNextDue(m_config.nameSpace);
    if (!due) {
        handleStoreError(due.error(), QStringLiteral("next due time"));
        return;
    }
    if (due.value() && *due.value() < m_config.pollInterval)
        scheduleClaim(*due.value() + core::Millis(1));
}

void Dispatcher::refreshClaimFloor() {
    if (m_state != DispatcherState::Running || !m_connection.store())
        return;
    auto floor = m_connection.store()->claimFloor(m_config.nameSpace);
    if (!floor) {
        // Not worth a reconnect of its own: the claim right after notices a
        // lost connection; meanwhile claim without a bound.
        m_claimFloor.clear();
        return;
    }
    m_claimFloor = floor.value();
}

void Dispatcher::wake() {
    m_moreWork = true;
    scheduleClaim(core::Millis(0));
}

// ---------------------------------------------------------- acks and nacks

void Dispatcher::onPublished(const PublishOutcome &outcome) {
    const auto it = m_inFlight.constFind(outcome.id);
    if (it == m_inFlight.cend() || it->attempts != outcome.attempts)
        return; // abandoned at shutdown, or a stale completion
    const Flight flight = it.value();
    m_inFlight.erase(it);

    m_stats.httpDuration.record(micros(outcome.duration));
    m_stats.recentHttpDuration.record(micros(outcome.duration));

    if (outcome.kind == PublishOutcome::Kind::Delivered) {
        m_buffer.addAck(outcome.id, outcome.attempts, flight.createdAt);
    } else {
        store::Nack nack;
        nack.id = outcome.id;
        nack.attempts = outcome.attempts;
        nack.error = outcome.error;
        nack.permanent = outcome.kind == PublishOutcome::Kind::Permanent;
        nack.delay = nack.permanent
                         ? core::Millis(0)
                         : m_retry.nextDelay(outcome.attempts, m_rng, outcome.retryAfter);
        nack.httpStatus = outcome.httpStatus;
        nack.duration = std::chrono::duration_cast<core::Millis>(outcome.duration);
        qCDebug(lcDispatch).noquote()
            << QLatin1String("event=attempt_failed id=") % uuidText(outcome.id) %
                   QLatin1String(" attempt=") % QString::number(outcome.attempts) %
                   QLatin1String(" outcome=") % outcomeKindName(outcome.kind) %
                   QLatin1String(" status=") %
                   (outcome.httpStatus ? QString::number(*outcome.httpStatus)
                                       : QStringLiteral("-")) %
                   QLatin1String(" retry_in_ms=") % QString::number(nack.delay.count());
        m_buffer.addNack(std::move(nack));
    }

    if (m_stopRequested) {
        if (m_inFlight.isEmpty())
            finishStop();
        return;
    }
    if (m_state != DispatcherState::Running)
        return; // buffered until the connection is back

    if (m_buffer.size() >= m_config.batchSize || m_inFlight.isEmpty()) {
        if (!flush())
            return;
    } else {
        scheduleFlush();
    }
    if (m_moreWork && (freeSlots() >= minimumClaim() || m_inFlight.isEmpty()))
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
        qCInfo(lcDispatch).noquote()
            << QLatin1String("event=dead_sweep rows=") % QString::number(swept.value());
    }
}

// ------------------------------------------------------------ configuration

void Dispatcher::setConfig(const core::DispatcherConfig &config) {
    if (const auto valid = config.validate(); !valid) {
        qCWarning(lcDispatch).noquote()
            << QLatin1String("event=config_rejected error=\"") % valid.errorMessage() % u'"';
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
        m_claimFloor.clear();
    m_config = std::move(next);
    m_retry = core::RetryPolicy{m_config.baseDelay, m_config.maxDelay};
    m_stats.concurrency = m_config.concurrency;
    if (m_watchdogTimer.isActive())
        m_watchdogTimer.start(m_config.pollInterval);
    qCInfo(lcDispatch).noquote() << QLatin1String("event=config_applied ") % m_config.describe();
    Q_EMIT configApplied(m_config.describe());
    if (sweepAll)
        sweep(store::SweepScope::All);
    if (active) {
        m_moreWork = true;
        scheduleClaim(core::Millis(0));
    }
}

// -------------------------------------------------------------------- stats

void Dispatcher::requestStats() {
    emitStats();
}

void Dispatcher::emitStats() {
    m_stats.at = QDateTime::currentDateTimeUtc();
    m_stats.inFlight = int(m_inFlight.size());
    m_stats.pendingAcks = m_buffer.ackCount();
    m_stats.pendingNacks = m_buffer.nackCount();
    m_stats.concurrency = m_config.concurrency;
    Q_EMIT statsSnapshot(m_stats);
    m_stats.recentCommitToDelivered.reset();
    m_stats.recentHttpDuration.reset();
}

} // namespace outbox::dispatch
