#pragma once

#include "console/model/alertmonitor.h"
#include "store/fleetfile.h"
#include "store/fleethealth.h"
#include "store/fleetstore.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QThread>
#include <QTimer>

#include <chrono>
#include <memory>
#include <optional>

namespace outbox::console {

class FleetProbeWorker;

// What the fleet knows of one database.
struct FleetMember {
    store::FleetEntry entry;
    store::FleetState state = store::FleetState::Pending;
    QStringList reasons;                          // why, worst first
    std::optional<store::FleetSnapshot> snapshot; // the last answer
    QString error;                                // the last failure, in plain words
    int failures = 0;                             // in a row
};

// Watches many outbox databases at once. Each database has its own worker
// thread and connection (read-only, connect_timeout and statement_timeout
// set), so one that is slow or does not answer delays neither the others nor
// the GUI thread: libpq's calls block, and a thread per database is the only
// way a hung server holds up nothing but its own row. A worker reads one
// FleetSnapshot per interval, and after a failure tries again with backoff.
// Each database is judged by store::assessFleet() and, for notifications,
// by an AlertMonitor of its own (the console's rules and thresholds; one
// raised() per condition, named with the database).
class FleetWatcher final : public QObject {
    Q_OBJECT

public:
    struct Options {
        std::chrono::milliseconds interval{5000};
        int connectTimeoutSeconds = 5;
        std::chrono::milliseconds statementTimeout{5000};
        std::chrono::milliseconds maxBackoff{60000};
        QString applicationName = QStringLiteral("outbox-console-fleet");
        store::FleetProbe::Options probe;
        // Connections being made at once (the first ones, and again after a
        // failure); the others wait their turn. See patience().
        int maxConnecting = 6;
    };

    FleetWatcher(QList<store::FleetEntry> entries, Options options, QObject *parent = nullptr);
    explicit FleetWatcher(QList<store::FleetEntry> entries, QObject *parent = nullptr);
    ~FleetWatcher() override;
    Q_DISABLE_COPY_MOVE(FleetWatcher)

    // Asks every database: maxConnecting connect at once, the others in
    // turn (a worker's thread starts with its first reading).
    void start();
    // Asks every database that is not being read now.
    void refreshNow();

    int size() const { return int(m_members.size()); }
    // How long a connection being made counts against maxConnecting: the
    // connect timeout times maxConnecting / size(), at most the timeout. A
    // server that never answers holds its turn no longer than that, so at
    // least maxConnecting connections start every patience() and the last
    // database starts its own within one connect timeout of the first,
    // whatever the others do.
    std::chrono::milliseconds patience() const;
    // The most connections that were being made at once (counted as above).
    int mostConnecting() const { return m_mostConnecting; }
    const FleetMember &member(int index) const { return m_members[index]->member; }
    // The alert thresholds of one database (the console keeps them per
    // database, DatabaseSettings).
    void setThresholds(int index, const AlertThresholds &thresholds);
    // Its active alerts, the titles named as in alertRaised().
    QList<Alert> activeAlerts(int index) const;

Q_SIGNALS:
    void memberChanged(int index);
    // One per condition (AlertMonitor's edge); the alert's texts name the
    // database.
    void alertRaised(int index, const outbox::console::Alert &alert);
    void alertCleared(int index, outbox::console::AlertKind kind);

private:
    struct Slot {
        FleetMember member;
        // Deleted once it ended; one held up by a server that stopped
        // answering mid-statement is left behind at exit rather than waited
        // on for ever.
        QThread *thread = nullptr;
        FleetProbeWorker *worker = nullptr; // lives in `thread`
        QTimer next;                        // the next reading
        AlertMonitor monitor;
        bool inFlight = false;
        QElapsedTimer asked;
        bool connected = false;  // its worker holds an open session
        bool connecting = false; // counts against maxConnecting
        bool queued = false;     // waits for its turn to connect
        QTimer patience;         // ends its turn
    };
    void ask(int index);
    void release(int index); // ends its turn to connect, lets the next one go
    void onSnapshot(int index, const store::FleetSnapshot &snapshot);
    void onFailed(int index, const QString &message);
    void checkOverdue();
    void judge(int index);
    store::FleetThresholds thresholdsOf(int index) const;
    QString named(int index, const QString &title) const; // "orders: <title>"

    Options m_options;
    std::vector<std::unique_ptr<Slot>> m_members;
    QTimer m_overdue;
    bool m_started = false;
    int m_connecting = 0;
    int m_mostConnecting = 0;
    QList<int> m_waiting; // for a turn to connect, first come first
};

} // namespace outbox::console
