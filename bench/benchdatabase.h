#pragma once

#include "core/conninfo.h"
#include "core/result.h"
#include "devtools/embeddedpostgres.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

namespace outbox::bench {

// Commit-to-delivered figures computed by the database itself: from the
// commit timestamp of the producer's transaction (track_commit_timestamp) to
// delivered_at (start of the ack statement, after the runner's 2xx); one
// clock, microsecond resolution. `fromStartP50` measures from created_at
// (the start of the producer's transaction) instead, for comparison.
struct LatencyFigures {
    qint64 count = 0;
    double p50 = 0;
    double p90 = 0;
    double p99 = 0;
    double max = 0;
    double fromStartP50 = 0;
    double fromStartP99 = 0;
};

// An event the producer committed: its id and the id of the transaction
// that inserted it.
struct ProducedEvent {
    QString id;
    QString transactionId;
};

// The benchmark's throwaway cluster (unix socket only) with the outbox
// schema, and one connection for loading and checking, used in the thread
// that started it.
class BenchDatabase final {
public:
    BenchDatabase();
    ~BenchDatabase();
    Q_DISABLE_COPY_MOVE(BenchDatabase)

    core::Result<void> start(bool durable);
    core::ConnInfo connInfo() const { return m_connInfo; }
    QSqlDatabase db() const { return m_db; }
    QString serverVersion() const { return m_serverVersion; }
    // The postmaster's process id (first line of postmaster.pid), 0 if unknown.
    qint64 serverProcessId() const;

    // Empties the outbox, inserts `events` due events of `topic` with
    // payloads of about `payloadBytes`, then VACUUM ANALYZE and CHECKPOINT so
    // every phase starts from the same state.
    core::Result<void> load(int events, const QString &topic, int payloadBytes);
    core::Result<void> truncate();
    core::Result<qint64> count(const QString &status);
    core::Result<LatencyFigures> latency(const QList<ProducedEvent> &produced);
    // Runs of autovacuum on outbox_events so far (pg_stat_user_tables).
    core::Result<qint64> autovacuumCount();
    // Removes the table's autovacuum and vacuum_index_cleanup settings (the
    // migration's), leaving the server defaults.
    core::Result<void> resetVacuumSettings();
    core::Result<void> exec(const QString &sql, const QString &what);

private:
    devtools::EmbeddedPostgres m_cluster;
    core::ConnInfo m_connInfo;
    QString m_connectionName;
    QSqlDatabase m_db;
    QString m_serverVersion;
};

} // namespace outbox::bench
