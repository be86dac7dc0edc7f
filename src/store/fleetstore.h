#pragma once

#include "core/result.h"
#include "store/errorgroups.h"
#include "store/queries.h"
#include "store/session.h"

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QSqlDatabase>
#include <QStringList>

#include <optional>

namespace outbox::store {

// A count the fleet read without reading every row: exact up to a cap, and
// beyond it the planner's estimate (the partial index's reltuples), marked.
struct FleetCount {
    qint64 value = 0;
    bool estimated = false;
    friend bool operator==(const FleetCount &, const FleetCount &) = default;
};

// What the fleet shows of one database, read in one pass from the cheap
// sources only: the heads and the first entries of the partial indexes, the
// planner's estimates, the minute history the dispatchers write, the registry
// and the pauses, and the error groups of a bounded sample of the newest
// dead events. Everything a viewer login may read.
struct FleetSnapshot {
    QDateTime serverTime; // UTC
    FleetCount due;       // pending, due now, not paused: a dispatcher could claim it
    FleetCount waiting;   // pending and not due (a later attempt, or paused)
    qint64 processing = 0;
    QDateTime oldestDueAt; // when the oldest due event became due; invalid: none
    FleetCount dead;
    qint64 diedLastHour = 0; // from the dispatchers' minute history
    // The most that died in one minute, the current or the previous one.
    qint64 diedRecentMinute = 0;
    // Deliveries per minute of the last kSparkMinutes minutes, oldest first
    // (0 for a minute no dispatcher reported).
    QList<qint64> deliveredPerMinute;
    bool historyUnsupported = false; // a schema before the history tables
    int dispatchersAlive = 0;
    int dispatchersGone = 0; // registered, heartbeat late
    QStringList pausedNamespaces;
    std::optional<ErrorGroup> topError; // of the dead events
    bool topErrorSampled = false;       // grouped from the newest events only

    static constexpr int kSparkMinutes = 30;

    qint64 oldestDueAgeSeconds() const {
        return oldestDueAt.isValid() ? std::max<qint64>(oldestDueAt.secsTo(serverTime), 0) : -1;
    }
    // The figures as StatusCounts, for the console's alert rules (AlertMonitor):
    // pending and dead as read here, delivered as the last minutes' deliveries.
    StatusCounts toStatusCounts() const;
};

// Reads FleetSnapshots of one database on the caller's connection, in the
// caller's thread. Its cost does not grow with the table: each count stops
// after `countCap` index entries, the history is an hour of minute rows, and
// the error grouping reads `errorSample` dead events at most, again only when
// the table changed and within `errorDutyCycle` of the wall time.
class FleetProbe final {
public:
    struct Options {
        qint64 countCap = 10000;
        int errorSample = 500;
        double errorDutyCycle = 0.002;
    };

    FleetProbe();
    explicit FleetProbe(Options options);
    Q_DISABLE_COPY_MOVE(FleetProbe)

    core::Result<FleetSnapshot> read(QSqlDatabase db);
    // The statement of the counts, for EXPLAIN in the tests and benchmarks.
    static QString countsSql();

private:
    Options m_options;
    ErrorGroupWatch m_errors;
};

// The session of a fleet's reader: read-only, `connectTimeoutSeconds` to
// connect, `statementTimeout` per statement, and keepalives so that a host
// that vanished is noticed rather than waited on.
Session::Options fleetSessionOptions(const QString &applicationName, int connectTimeoutSeconds,
                                     core::Millis statementTimeout);
// One snapshot on a connection of its own, closed again (outboxctl fleet
// status). `info` is made read-only.
core::Result<FleetSnapshot> readFleetSnapshotOnce(const core::ConnInfo &info,
                                                  const Session::Options &options);

} // namespace outbox::store

Q_DECLARE_METATYPE(outbox::store::FleetSnapshot)
