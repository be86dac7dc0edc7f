#include "console/model/alertmonitor.h"

#include <QLocale>

#include <algorithm>

namespace outbox::console {

namespace {

using std::chrono::seconds;

// "45 s", "12 min", "3 h 5 min".
QString span(qint64 s) {
    if (s < 60) {
        return AlertMonitor::tr("%1 s").arg(s);
    }
    if (s < 3600) {
        return AlertMonitor::tr("%1 min").arg(s / 60);
    }
    return AlertMonitor::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

constexpr qint64 kRateWindowMs = 60000;

} // namespace

AlertMonitor::AlertMonitor(QObject *parent)
    : QObject(parent) {}

void AlertMonitor::setThresholds(const AlertThresholds &thresholds) {
    m_thresholds = thresholds;
    if (m_last) {
        const store::StatusCounts last = *m_last;
        m_last.reset();
        m_samples.clear();
        addCounts(last);
    }
}

void AlertMonitor::reset() {
    m_samples.clear();
    m_last.reset();
    m_lastActivity = {};
    m_oldSince = {};
    m_wasConnected = false;
    m_active.clear();
}

bool AlertMonitor::isActive(AlertKind kind) const {
    return std::any_of(m_active.cbegin(), m_active.cend(),
                       [kind](const Alert &a) { return a.kind == kind; });
}

void AlertMonitor::update(AlertKind kind, std::optional<Alert> alert) {
    const bool active = isActive(kind);
    if (alert && !active) {
        alert->kind = kind;
        m_active.append(*alert);
        Q_EMIT raised(*alert);
    } else if (alert && active) {
        // Still holding: its figures follow the live ones ("28 died" must not
        // stay while 600 more die), without notifying again.
        alert->kind = kind;
        for (Alert &shown : m_active) {
            if (shown.kind == kind && (shown.title != alert->title || shown.text != alert->text)) {
                shown = *alert;
                Q_EMIT updated(*alert);
            }
        }
    } else if (!alert && active) {
        m_active.removeIf([kind](const Alert &a) { return a.kind == kind; });
        Q_EMIT cleared(kind);
    }
}

void AlertMonitor::addCounts(const store::StatusCounts &counts) {
    const QDateTime now = counts.serverTime;
    if (!now.isValid()) {
        return;
    }
    const qint64 waiting = counts.pending + counts.retrying;
    // Anything claimed, delivered or failed is activity.
    if (!m_last || counts.processing > 0 || counts.delivered != m_last->delivered ||
        counts.dead != m_last->dead || !m_lastActivity.isValid()) {
        m_lastActivity = now;
    }

    // Deaths per minute over the last minute. A fall (requeue, purge)
    // restarts the window: the deaths behind it cannot be told apart.
    if (!m_samples.empty() && counts.dead < m_samples.back().dead) {
        m_samples.clear();
    }
    m_samples.push_back({now, counts.dead});
    while (m_samples.size() > 2 && m_samples[1].at.msecsTo(now) >= kRateWindowMs) {
        m_samples.pop_front();
    }
    std::optional<Alert> dying;
    const qint64 windowMs = m_samples.front().at.msecsTo(now);
    if (m_thresholds.deathsPerMinute > 0 && windowMs >= kRateWindowMs) {
        const qint64 died = counts.dead - m_samples.front().dead;
        const double perMinute = double(died) * 60000.0 / double(windowMs);
        if (perMinute > m_thresholds.deathsPerMinute) {
            dying = Alert{AlertKind::DeathRate, tr("Events are dying"),
                          tr("%1 events died in the last %2 on %3 (alert above %4 a minute).")
                              .arg(formatCount(died), span(windowMs / 1000), m_target,
                                   QLocale().toString(m_thresholds.deathsPerMinute)),
                          core::Status::Dead};
        }
    }
    update(AlertKind::DeathRate, dying);

    std::optional<Alert> old;
    const qint64 ageS = counts.oldestDueAt.isValid() ? counts.oldestDueAt.secsTo(now) : -1;
    const bool over =
        m_thresholds.oldestDueAge.count() > 0 && ageS >= m_thresholds.oldestDueAge.count();
    if (!over) {
        m_oldSince = {};
    } else if (!m_oldSince.isValid()) {
        m_oldSince = now;
    }
    if (over && m_oldSince.secsTo(now) >= m_thresholds.oldestDueFor.count()) {
        old = Alert{AlertKind::OldestDue, tr("Events are waiting too long"),
                    tr("The oldest due event on %1 has waited %2 since it was due (alert "
                       "after %3).")
                        .arg(m_target, span(ageS), span(m_thresholds.oldestDueAge.count())),
                    core::Status::Pending};
    }
    update(AlertKind::OldestDue, old);

    std::optional<Alert> unclaimed;
    const qint64 idleS = m_lastActivity.secsTo(now);
    const qint64 limit = m_thresholds.unclaimedFor.count();
    if (limit > 0 && waiting > 0 && counts.processing == 0 && idleS >= limit && ageS >= limit) {
        unclaimed = Alert{AlertKind::Unclaimed, tr("Nothing is delivering"),
                          tr("%1 events wait on %2 and none was claimed, delivered or failed "
                             "for %3: is a dispatcher running?")
                              .arg(formatCount(waiting), m_target, span(idleS)),
                          core::Status::Pending};
    }
    update(AlertKind::Unclaimed, unclaimed);
    m_last = counts;
}

void AlertMonitor::setConnectionState(ConnectionState state, const QString &message) {
    if (state == ConnectionState::Connected) {
        m_wasConnected = true;
        update(AlertKind::ConnectionLost, std::nullopt);
        return;
    }
    if (!m_wasConnected || !m_thresholds.connectionLost ||
        (state != ConnectionState::Reconnecting && state != ConnectionState::Disconnected)) {
        return;
    }
    update(AlertKind::ConnectionLost,
           Alert{AlertKind::ConnectionLost, tr("Connection lost"),
                 message.isEmpty() ? tr("The console lost its connection to %1.").arg(m_target)
                                   : tr("The console lost its connection to %1: %2")
                                         .arg(m_target, firstLine(message)),
                 std::nullopt});
}

void AlertMonitor::setOpenCircuits(const QStringList &circuits) {
    if (circuits.isEmpty())
        return update(AlertKind::CircuitOpen, std::nullopt);
    update(AlertKind::CircuitOpen,
           Alert{AlertKind::CircuitOpen,
                 circuits.size() == 1 ? tr("A destination is failing")
                                      : tr("%1 destinations are failing").arg(circuits.size()),
                 tr("Circuit open on %1 (its events wait, their attempts kept): %2")
                     .arg(m_target, circuits.join(QStringLiteral("; "))),
                 std::nullopt});
}

} // namespace outbox::console
