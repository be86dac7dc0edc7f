#pragma once

#include "core/conninfo.h"

#include <QString>

#include <chrono>

class QSettings;

namespace outbox::console {

// When the console tells the operator first (AlertMonitor). A zero
// threshold turns that alert off.
struct AlertThresholds {
    // The oldest due event (pending, due, not paused: one a dispatcher could
    // claim now) has waited this long since it became due.
    std::chrono::seconds oldestDueAge{std::chrono::minutes(5)};
    // ... for at least this long: old dead events that are requeued and
    // delivered at once are no alarm.
    std::chrono::seconds oldestDueFor{30};
    // More events than this died per minute (over the last minute).
    double deathsPerMinute = 10;
    // Events are waiting and nothing was claimed, delivered or failed for
    // this long.
    std::chrono::seconds unclaimedFor{std::chrono::minutes(2)};
    bool connectionLost = true;
    // Desktop notifications (system tray); the window shows alerts always.
    bool notify = true;
    friend bool operator==(const AlertThresholds &, const AlertThresholds &) = default;
};

// Preferences that belong to one database rather than to the console: the
// redrive rate and the alert thresholds. A rate chosen for the demo's
// throwaway cluster must not become the default on production, so each
// database (server, port, database name) keeps its own values in a group of
// the console's QSettings.
class DatabaseSettings final {
public:
    // Empty `key`: nothing is read or written, the defaults apply.
    DatabaseSettings(QSettings *settings, QString key);
    Q_DISABLE_COPY_MOVE(DatabaseSettings)

    // "host:port/dbname" with the libpq defaults spelled out, so the same
    // database reached with and without an explicit default port is one.
    static QString keyFor(const core::ConnInfo &info);
    const QString &key() const { return m_key; }

    static constexpr double kDefaultRequeueRate = 100;
    double requeueRate() const; // events/s for redrives, 0 = unthrottled
    void setRequeueRate(double rate);

    AlertThresholds alertThresholds() const;
    void setAlertThresholds(const AlertThresholds &thresholds);

    // Removes every value kept for this database (a demo's throwaway
    // cluster, whose key is new on every run).
    void forget();

private:
    QString path(const QString &name) const;

    QSettings *m_settings;
    QString m_key;
};

} // namespace outbox::console
