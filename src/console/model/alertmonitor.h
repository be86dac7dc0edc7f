#pragma once

#include "console/model/consoletypes.h"
#include "console/model/databasesettings.h"
#include "core/status.h"
#include "store/queries.h"

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>

#include <deque>
#include <optional>

namespace outbox::console {

enum class AlertKind { OldestDue, DeathRate, Unclaimed, ConnectionLost, CircuitOpen };

struct Alert {
    AlertKind kind = AlertKind::OldestDue;
    QString title; // one line, for a notification's title
    QString text;  // what is wrong, with the numbers and the threshold
    // The page that shows it; none for a lost connection.
    std::optional<core::Status> view;
};

// Decides when the console tells the operator first, from the counts the
// live views fetch anyway (no query of its own) and the connection state:
//   - the oldest due event (pending, due, not paused: StatusCounts::
//     oldestDueAt) has waited longer than a threshold since it became due,
//     for a while (a requeue of old dead events that are delivered at once
//     is no alarm). Events waiting for their next attempt or held by a pause
//     are as intended and raise nothing;
//   - more events died in the last minute than a threshold;
//   - due events wait and nothing was claimed, delivered or failed for a
//     while;
//   - the connection to the database was lost;
//   - a destination of a routing dispatcher has its circuit open (its
//     events wait: the registry says so, setOpenCircuits()).
// Edge-triggered: raised() once when a condition starts to hold, cleared()
// when it stops, and only then may it be raised again. Times are the
// server's (StatusCounts::serverTime), so a wrong local clock changes
// nothing. Pure logic: no timers, no widgets.
class AlertMonitor final : public QObject {
    Q_OBJECT

public:
    explicit AlertMonitor(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(AlertMonitor)

    void setThresholds(const AlertThresholds &thresholds);
    const AlertThresholds &thresholds() const { return m_thresholds; }
    // A name for the database in texts ("orders on db1").
    void setTarget(const QString &target) { m_target = target; }

    void addCounts(const store::StatusCounts &counts);
    void setConnectionState(ConnectionState state, const QString &message = {});
    // The destinations whose circuit is open now, one "name: reason" each
    // (DispatchersView::openCircuitsChanged); empty clears the alert.
    void setOpenCircuits(const QStringList &circuits);
    // Another database: forget the history and every active alert (without
    // signals).
    void reset();

    bool isActive(AlertKind kind) const;
    QList<Alert> activeAlerts() const { return m_active; }

Q_SIGNALS:
    void raised(const outbox::console::Alert &alert);
    // An active alert's figures changed (not raised again: no new notice).
    void updated(const outbox::console::Alert &alert);
    void cleared(outbox::console::AlertKind kind);

private:
    struct Sample {
        QDateTime at;
        qint64 dead = 0;
    };
    void update(AlertKind kind, std::optional<Alert> alert);

    AlertThresholds m_thresholds;
    QString m_target;
    std::deque<Sample> m_samples; // the last minute or so, oldest first
    std::optional<store::StatusCounts> m_last;
    QDateTime m_lastActivity; // server time of the last claim, delivery or death
    QDateTime m_oldSince;     // since when the oldest due event is over the threshold
    bool m_wasConnected = false;
    QList<Alert> m_active;
};

} // namespace outbox::console
