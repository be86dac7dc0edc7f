#include "dispatch/registration.h"

#include "core/displaytext.h"
#include "core/logline.h"
#include "dispatch/logging.h"
#include "dispatch/routingreport.h"
#include "store/destinationstore.h"
#include "store/historystore.h"
#include "store/queuegauges.h"

#include <QCoreApplication>
#include <QSysInfo>

#ifndef OUTBOX_VERSION
#define OUTBOX_VERSION "unknown"
#endif

namespace outbox::dispatch {

namespace {

store::Session::Options sessionOptions(const QString &application) {
    store::Session::Options options;
    options.applicationName = application + QStringLiteral("-registry");
    return options;
}

} // namespace

Registration::Registration(core::ConnInfo connInfo, core::DispatcherConfig config,
                           QString application, core::Millis heartbeatInterval, QObject *parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_application(std::move(application))
    , m_interval(heartbeatInterval)
    , m_session(std::move(connInfo), sessionOptions(m_application))
    , m_timer(this) {
    connect(&m_timer, &QTimer::timeout, this, &Registration::beat);
}

Registration::~Registration() {
    m_session.close();
}

QString Registration::publicUrl(const QUrl &url) {
    return core::urlWithoutCredentials(url).toString();
}

void Registration::onStarted(const QUuid &workerId) {
    m_workerId = workerId;
    m_token = store::RegistryStore::newToken();
    m_startedAt = QDateTime::currentDateTimeUtc();
    m_registered = false;
    m_lastDelivered = 0;
    m_lastFailed = 0;
    m_recordedDelivered = 0;
    m_recordedFailed = 0;
    m_recordedDead = 0;
    m_historyFailing = false;
    m_stats = DispatcherStats();
    m_sinceLastBeat.start();
    beat();
    m_timer.start(m_interval);
}

void Registration::onStats(const DispatcherStats &stats) {
    m_stats = stats;
}

void Registration::setConfig(const core::DispatcherConfig &config) {
    m_config = config;
    if (!m_workerId.isNull() && ensureOpen())
        registerNow(); // the namespace or concurrency may have changed
}

void Registration::onStopped() {
    m_timer.stop();
    if (m_workerId.isNull())
        return;
    if (m_registered && ensureOpen()) {
        recordHistory(); // the last few seconds' deliveries
        store::RegistryStore registry(m_session);
        if (auto removed = registry.unregister(m_workerId, m_token); !removed)
            qCWarning(lcDispatch)
                << core::LogLine("unregister_failed").add("error", removed.errorMessage());
    }
    m_workerId = QUuid();
    m_registered = false;
    m_session.close();
}

bool Registration::ensureOpen() {
    if (m_session.isOpen())
        return true;
    if (auto opened = m_session.open(); !opened) {
        qCWarning(lcDispatch)
            << core::LogLine("registry_unavailable").add("error", opened.errorMessage());
        return false;
    }
    return true;
}

bool Registration::registerNow() {
    store::DispatcherRegistration r;
    r.workerId = m_workerId;
    r.token = m_token;
    r.host = QSysInfo::machineHostName();
    r.pid = QCoreApplication::applicationPid();
    r.version = QStringLiteral(OUTBOX_VERSION);
    r.application = m_application;
    r.nameSpace = m_config.nameSpace;
    // A routing dispatcher's destinations are reported on every beat.
    r.runnerUrl = m_config.routes ? QStringLiteral("routes ") + m_config.routesFile
                                  : publicUrl(m_config.runnerUrl);
    r.concurrency = m_config.concurrency;
    r.heartbeatInterval = m_interval;
    r.startedAt = m_startedAt;
    // Store handles are temporaries: none may still hold the connection
    // when a failure closes the session (Qt warns "still in use").
    if (auto registered = store::RegistryStore(m_session).registerDispatcher(r); !registered) {
        qCWarning(lcDispatch)
            << core::LogLine("register_failed").add("error", registered.errorMessage());
        m_session.close(); // reopened and registered again at the next beat
        m_registered = false;
        return false;
    }
    m_registered = true;
    return true;
}

store::DispatcherHeartbeat Registration::nextHeartbeat() {
    store::DispatcherHeartbeat beat;
    beat.state = stateName(m_stats.state);
    beat.inFlight = m_stats.inFlight;
    beat.deliveredTotal = m_stats.delivered;
    const qint64 failed = m_stats.retried + m_stats.dead;
    const double seconds = std::max<qint64>(m_sinceLastBeat.restart(), 1) / 1000.0;
    beat.deliveredPerSecond =
        double(std::max<qint64>(m_stats.delivered - m_lastDelivered, 0)) / seconds;
    beat.failedPerSecond = double(std::max<qint64>(failed - m_lastFailed, 0)) / seconds;
    m_lastDelivered = m_stats.delivered;
    m_lastFailed = failed;
    return beat;
}

void Registration::beat() {
    if (m_workerId.isNull() || !ensureOpen())
        return;
    if (!m_registered) {
        registerNow();
        return;
    }
    auto beaten = store::RegistryStore(m_session).heartbeat(m_workerId, m_token, nextHeartbeat());
    if (!beaten) {
        qCWarning(lcDispatch)
            << core::LogLine("heartbeat_failed").add("error", beaten.errorMessage());
        m_session.close();
        return;
    }
    if (!beaten.value()) {
        registerNow(); // the row was removed meanwhile
        return;
    }
    reportDestinations();
    recordHistory();
}

void Registration::reportDestinations() {
    if (m_stats.destinations.isEmpty())
        return;
    // Logged like a failed heartbeat, and tried again at the next beat.
    if (auto reported = store::DestinationStore(m_session).report(
            m_workerId, m_token, destinationsJson(m_stats.destinations));
        !reported)
        qCWarning(lcDispatch)
            << core::LogLine("destinations_report_failed").add("error", reported.errorMessage());
}

void Registration::recordHistory() {
    // The history store is gone when writeHistory() returns, so the session
    // may be closed here.
    auto written = writeHistory();
    if (!written) {
        if (!m_historyFailing)
            qCWarning(lcDispatch)
                << core::LogLine("history_failed").add("error", written.errorMessage());
        m_historyFailing = true;
        if (written.error().kind == core::ErrorKind::Unavailable)
            m_session.close(); // reopened at the next beat
        return;
    }
    if (m_historyFailing)
        qCInfo(lcDispatch) << core::LogLine("history_recovered");
    m_historyFailing = false;
}

core::Result<void> Registration::writeHistory() {
    const qint64 failed = m_stats.retried + m_stats.dead;
    // Counters restart with a new run (onStarted resets both sides).
    const qint64 delivered = std::max<qint64>(m_stats.delivered - m_recordedDelivered, 0);
    const qint64 failedDelta = std::max<qint64>(failed - m_recordedFailed, 0);
    const qint64 dead = std::max<qint64>(m_stats.dead - m_recordedDead, 0);
    store::HistoryStore history(m_session);
    auto recorded = history.record(m_workerId, m_token, delivered, failedDelta, dead);
    if (!recorded)
        return recorded.error();
    m_recordedDelivered += delivered;
    m_recordedFailed += failedDelta;
    m_recordedDead += dead;
    if (!recorded.value())
        return {};
    // This minute has no backlog sample yet: the gauges' bounded counts.
    auto gauges = store::readQueueGauges(m_session);
    if (!gauges)
        return gauges.error();
    if (auto sampled = history.recordBacklog(m_workerId, m_token, gauges.value()); !sampled)
        return sampled.error();
    return {};
}

} // namespace outbox::dispatch
