#include "console/model/fleetwatcher.h"

#include "console/model/consoletypes.h"
#include "dispatch/threadpriority.h"
#include "store/session.h"

#include <QMetaObject>

#include <algorithm>

namespace outbox::console {

namespace {
constexpr int kStopWaitMs = 15000;
}

// One database's reader, in its own thread: a session opened on demand,
// closed after a failure and opened again at the next reading.
class FleetProbeWorker final : public QObject {
    Q_OBJECT

public:
    FleetProbeWorker(core::ConnInfo info, store::Session::Options options,
                     store::FleetProbe::Options probe)
        : m_info(std::move(info))
        , m_options(std::move(options))
        , m_probe(probe) {}

    void read() {
        if (!m_session) {
            // Below the GUI thread: fifty readers connecting at once must not
            // take the window's core (best effort; without it they only
            // compete as equals).
            if (auto lowered = dispatch::lowerThreadPriority(5); !lowered) {
                qCDebug(lcConsole).noquote()
                    << "fleet reader keeps its priority:" << lowered.errorMessage();
            }
            m_session = std::make_unique<store::Session>(store::readOnlySession(m_info), m_options);
        }
        if (!m_session->isOpen()) {
            if (auto opened = m_session->open(); !opened) {
                m_session->close();
                Q_EMIT failed(opened.errorMessage());
                return;
            }
        }
        auto snapshot = m_probe.read(m_session->database());
        if (!snapshot) {
            m_session->close();
            Q_EMIT failed(snapshot.errorMessage());
            return;
        }
        Q_EMIT ready(snapshot.value());
    }
    // Closes the connection in its own thread before the thread ends.
    void stop() { m_session.reset(); }

Q_SIGNALS:
    void ready(const outbox::store::FleetSnapshot &snapshot);
    void failed(const QString &message);

private:
    core::ConnInfo m_info;
    store::Session::Options m_options;
    store::FleetProbe m_probe;
    std::unique_ptr<store::Session> m_session;
};

FleetWatcher::FleetWatcher(QList<store::FleetEntry> entries, QObject *parent)
    : FleetWatcher(std::move(entries), Options{}, parent) {}

FleetWatcher::FleetWatcher(QList<store::FleetEntry> entries, Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options)) {
    qRegisterMetaType<outbox::store::FleetSnapshot>();
    const store::Session::Options session =
        store::fleetSessionOptions(m_options.applicationName, m_options.connectTimeoutSeconds,
                                   core::Millis(m_options.statementTimeout.count()));
    for (int i = 0; i < entries.size(); ++i) {
        auto slot = std::make_unique<Slot>();
        slot->member.entry = entries[i];
        slot->thread = new QThread;
        slot->thread->setObjectName(QStringLiteral("fleet-%1").arg(i));
        slot->worker = new FleetProbeWorker(entries[i].target, session, m_options.probe);
        slot->worker->moveToThread(slot->thread);
        connect(slot->thread, &QThread::finished, slot->worker, &QObject::deleteLater);
        connect(slot->worker, &FleetProbeWorker::ready, this,
                [this, i](const store::FleetSnapshot &s) { onSnapshot(i, s); });
        connect(slot->worker, &FleetProbeWorker::failed, this,
                [this, i](const QString &message) { onFailed(i, message); });
        slot->next.setSingleShot(true);
        connect(&slot->next, &QTimer::timeout, this, [this, i] { ask(i); });
        slot->patience.setSingleShot(true);
        slot->patience.setTimerType(Qt::PreciseTimer); // never early: it bounds a turn
        connect(&slot->patience, &QTimer::timeout, this, [this, i] { release(i); });
        slot->monitor.setTarget(entries[i].name);
        connect(&slot->monitor, &AlertMonitor::raised, this, [this, i](const Alert &alert) {
            Alert shown = alert;
            shown.title = named(i, alert.title);
            Q_EMIT alertRaised(i, shown);
        });
        connect(&slot->monitor, &AlertMonitor::cleared, this,
                [this, i](AlertKind kind) { Q_EMIT alertCleared(i, kind); });
        m_members.push_back(std::move(slot));
    }
    m_overdue.setInterval(1000);
    connect(&m_overdue, &QTimer::timeout, this, &FleetWatcher::checkOverdue);
}

FleetWatcher::~FleetWatcher() {
    m_overdue.stop();
    m_waiting.clear();
    for (auto &slot : m_members) {
        slot->next.stop();
        slot->patience.stop();
        FleetProbeWorker *worker = slot->worker;
        if (!slot->thread->isRunning()) {
            // Never asked (still waiting for its turn): nothing to stop.
            delete worker;
            continue;
        }
        QMetaObject::invokeMethod(
            worker, [worker] { worker->stop(); }, Qt::QueuedConnection);
        slot->thread->quit();
    }
    for (auto &slot : m_members) {
        if (slot->thread->wait(kStopWaitMs)) {
            delete slot->thread;
        } else {
            qCWarning(lcConsole).noquote()
                << "event=fleet_worker_stuck database=" << slot->member.entry.name;
        }
    }
}

void FleetWatcher::start() {
    // Fifty connections made in the same instant are a burst of work for
    // the machine the window runs on too (and, against one server, fifty
    // backends starting at once): maxConnecting go first, the others as
    // turns end.
    m_started = true;
    for (int i = 0; i < size(); ++i) {
        ask(i);
    }
    m_overdue.start();
}

std::chrono::milliseconds FleetWatcher::patience() const {
    const qint64 timeoutMs = qint64(m_options.connectTimeoutSeconds) * 1000;
    const qint64 share = timeoutMs * std::max(1, m_options.maxConnecting) / std::max(1, size());
    return std::chrono::milliseconds(std::clamp<qint64>(share, 1, timeoutMs));
}

void FleetWatcher::refreshNow() {
    for (int i = 0; i < size(); ++i) {
        if (!m_members[i]->inFlight) {
            ask(i);
        }
    }
}

void FleetWatcher::setThresholds(int index, const AlertThresholds &thresholds) {
    m_members[index]->monitor.setThresholds(thresholds);
    judge(index);
}

QList<Alert> FleetWatcher::activeAlerts(int index) const {
    QList<Alert> alerts = m_members[index]->monitor.activeAlerts();
    for (Alert &alert : alerts) {
        alert.title = named(index, alert.title);
    }
    return alerts;
}

QString FleetWatcher::named(int index, const QString &title) const {
    return m_members[index]->member.entry.name + QLatin1String(": ") + title;
}

void FleetWatcher::ask(int index) {
    Slot &slot = *m_members[index];
    if (slot.inFlight || slot.queued || !m_started) {
        return;
    }
    slot.next.stop();
    if (!slot.connected) {
        if (m_connecting >= std::max(1, m_options.maxConnecting)) {
            slot.queued = true;
            m_waiting.append(index);
            return;
        }
        slot.connecting = true;
        ++m_connecting;
        m_mostConnecting = std::max(m_mostConnecting, m_connecting);
        slot.patience.start(patience());
    }
    if (!slot.thread->isRunning()) {
        slot.thread->start();
    }
    slot.inFlight = true;
    slot.asked.start();
    FleetProbeWorker *worker = slot.worker;
    QMetaObject::invokeMethod(
        worker, [worker] { worker->read(); }, Qt::QueuedConnection);
}

void FleetWatcher::release(int index) {
    Slot &slot = *m_members[index];
    if (!slot.connecting) {
        return;
    }
    slot.connecting = false;
    slot.patience.stop();
    --m_connecting;
    while (m_connecting < std::max(1, m_options.maxConnecting) && !m_waiting.isEmpty()) {
        const int next = m_waiting.takeFirst();
        m_members[next]->queued = false;
        ask(next);
    }
}

void FleetWatcher::onSnapshot(int index, const store::FleetSnapshot &snapshot) {
    Slot &slot = *m_members[index];
    slot.inFlight = false;
    slot.connected = true;
    release(index);
    slot.member.snapshot = snapshot;
    slot.member.error.clear();
    slot.member.failures = 0;
    slot.monitor.setConnectionState(ConnectionState::Connected);
    slot.monitor.addCounts(snapshot.toStatusCounts());
    judge(index);
    slot.next.start(m_options.interval);
}

void FleetWatcher::onFailed(int index, const QString &message) {
    Slot &slot = *m_members[index];
    slot.inFlight = false;
    slot.connected = false; // the worker closed its session
    release(index);
    slot.member.error = firstLine(message, 300);
    ++slot.member.failures;
    slot.monitor.setConnectionState(ConnectionState::Reconnecting, slot.member.error);
    judge(index);
    // 1, 2, 4 ... intervals, at most maxBackoff.
    const int shift = std::min(slot.member.failures - 1, 10);
    const auto delay =
        std::min<std::chrono::milliseconds>(m_options.interval * (qint64(1) << shift),
                                            std::max(m_options.maxBackoff, m_options.interval));
    slot.next.start(delay);
}

void FleetWatcher::checkOverdue() {
    // A reading that outlasts the timeouts is a server that accepted the
    // connection and does not answer: the row says so while the worker
    // waits (its thread alone is held up).
    const qint64 limitMs =
        qint64(m_options.connectTimeoutSeconds) * 1000 + m_options.statementTimeout.count() + 2000;
    for (int i = 0; i < size(); ++i) {
        Slot &slot = *m_members[i];
        if (!slot.inFlight || slot.asked.elapsed() < limitMs) {
            continue;
        }
        const QString text = QStringLiteral("the server has not answered for %1")
                                 .arg(store::fleetSpan(slot.asked.elapsed() / 1000));
        if (slot.member.error != text) {
            slot.member.error = text;
            judge(i);
        }
    }
}

store::FleetThresholds FleetWatcher::thresholdsOf(int index) const {
    const AlertThresholds &t = m_members[index]->monitor.thresholds();
    return store::FleetThresholds{t.oldestDueAge.count(), t.deathsPerMinute,
                                  t.unclaimedFor.count()};
}

void FleetWatcher::judge(int index) {
    Slot &slot = *m_members[index];
    FleetMember &m = slot.member;
    store::FleetHealth health;
    if (!m.error.isEmpty()) {
        health.state = store::FleetState::Unreachable;
        health.reasons << m.error;
    } else if (m.snapshot) {
        health = store::assessFleet(*m.snapshot, thresholdsOf(index));
    } else {
        health.state = store::FleetState::Pending;
        health.reasons << tr("waiting for the first answer");
    }
    // The alert monitor's conditions hold for a while before they are
    // raised; once raised the row shows them as alerts too.
    QStringList raised;
    for (const Alert &alert : slot.monitor.activeAlerts()) {
        if (alert.kind != AlertKind::ConnectionLost) {
            raised << alert.text;
        }
    }
    if (!raised.isEmpty() && health.state != store::FleetState::Unreachable) {
        health.state = store::FleetState::Alert;
        for (const QString &reason : std::as_const(health.reasons)) {
            if (!raised.contains(reason)) {
                raised << reason;
            }
        }
        health.reasons = raised;
    }
    m.state = health.state;
    m.reasons = health.reasons;
    Q_EMIT memberChanged(index);
}

} // namespace outbox::console

#include "fleetwatcher.moc"
