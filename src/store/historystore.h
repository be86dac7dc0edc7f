#pragma once

#include "core/result.h"

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QSqlDatabase>
#include <QUuid>

namespace outbox::store {

class Session;
struct QueueGauges;

// One minute of deliveries, summed over every dispatcher that reported in it.
struct ThroughputMinute {
    QDateTime minute; // UTC, start of the minute
    qint64 delivered = 0;
    qint64 failed = 0; // failed attempts (retried or dead)
    qint64 dead = 0;   // of those, the ones that made the event dead
    int dispatchers = 0;
};

// The backlog as one dispatcher read it during that minute.
struct BacklogMinute {
    QDateTime minute;   // UTC, start of the minute
    qint64 pending = 0; // including retrying
    qint64 processing = 0;
    qint64 dead = 0;
    qint64 dueNow = 0;
    double oldestDueAgeSeconds = 0;
};

// The recent history of a database, oldest minute first. A minute missing
// from `throughput` had no dispatcher running; one missing from `backlog`
// had no sample (no dispatcher, or one that could not read the gauges).
struct ThroughputHistory {
    QList<ThroughputMinute> throughput;
    QList<BacklogMinute> backlog;
    QDateTime serverTime; // UTC, when read
    // True when the schema predates the history tables.
    bool unsupported = false;
    // Only read when the window is empty: whether any history exists at all.
    bool recordedEarlier = false;
    bool isEmpty() const { return throughput.isEmpty() && backlog.isEmpty(); }
};

// The short throughput and backlog history (sql/006_throughput_history.sql)
// that dispatchers write on their heartbeat and consoles read: minute rows,
// so that reading the last hour costs the same whatever outbox_events
// holds. Writes go through SECURITY DEFINER functions that only a
// registered dispatcher (worker id and registry secret) may call. Uses the
// caller's connection, in the caller's thread.
class HistoryStore final {
public:
    explicit HistoryStore(Session &session);
    explicit HistoryStore(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(HistoryStore)

    // Adds counts since the previous call to this dispatcher's row of the
    // current minute. True when the minute still lacks a backlog sample.
    core::Result<bool> record(const QUuid &workerId, const QString &token, qint64 delivered,
                              qint64 failed, qint64 dead);
    // Records `gauges` as the current minute's backlog unless another
    // dispatcher did; the one that records it prunes what is older than two
    // days. True when this call recorded it.
    core::Result<bool> recordBacklog(const QUuid &workerId, const QString &token,
                                     const QueueGauges &gauges);
    // The last `minutes` minutes (the current one included).
    core::Result<ThroughputHistory> read(int minutes = 60);

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store

Q_DECLARE_METATYPE(outbox::store::ThroughputHistory)
