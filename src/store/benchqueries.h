#pragma once

#include "core/result.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QStringList>

namespace outbox::store {

// The statements of the benchmarks (outboxctl bench, outbox-console-bench):
// loading data sets into a throwaway cluster and reading back what the
// server measured. Never used against a real outbox (they TRUNCATE it).

// An event a benchmark producer committed: its id and the id of the
// transaction that inserted it.
struct ProducedEvent {
    QString id;
    QString transactionId;
};

// What the producer enqueues per tick, in one transaction with
// outbox_enqueue(): event g of the tick goes to namespaces[g % n] and
// topics[g % n], with a payload of about payloadBytes.
struct ProduceBatch {
    QStringList namespaces;
    QStringList topics;
    int events = 1;
    int payloadBytes = 256;
};

// Events for BenchQueries::insertEvents(): `nameSpace`, `topic`, payloads of
// about payloadBytes; due now (held when a pause says so), or delivered;
// with aggregates > 0 each belongs to one of that many aggregates (whose
// type is the namespace), at random.
struct BenchInsert {
    qint64 events = 0;
    QString topic;
    int payloadBytes = 256;
    bool delivered = false;
    int aggregates = 0;
    QString nameSpace = QStringLiteral("bench");
};

// The console benchmark's realistic outbox: how many rows of each kind.
struct DatasetSize {
    qint64 delivered = 1000000;
    qint64 dead = 100000;
    qint64 pendingDue = 2000; // attempts = 0, due now
    qint64 retrying = 2000;   // pending with attempts > 0, due within the hour
    qint64 processing = 1000; // leased; half of the leases already expired
};

// Runs in the thread of `db`'s connection.
class BenchQueries final {
public:
    explicit BenchQueries(QSqlDatabase db = {})
        : m_db(db) {}

    QSqlDatabase database() const { return m_db; }
    core::Result<void> exec(const QString &sql, const QString &what);
    core::Result<QString> serverVersion();
    core::Result<void> truncate();
    // Empties the outbox, inserts `events` due events of namespace "bench"
    // and `topic` with payloads of about `payloadBytes`, then VACUUM ANALYZE
    // and CHECKPOINT so every phase starts from the same state.
    core::Result<void> loadUniform(int events, const QString &topic, int payloadBytes);
    // Adds events to the outbox as it is: no vacuum, no ANALYZE.
    core::Result<void> insertEvents(const BenchInsert &what);
    // VACUUM (ANALYZE) of the outbox, then CHECKPOINT.
    core::Result<void> vacuumAndCheckpoint();
    core::Result<qint64> count(const QString &status);
    // Commit-to-delivered figures computed by the database itself, in
    // milliseconds: from the commit timestamp of the producer's transaction
    // (track_commit_timestamp) to delivered_at (start of the ack statement,
    // after the runner's 2xx); one clock, microsecond resolution. Keys:
    // latency_events, latency_p50_ms, _p90_ms, _p99_ms, _max_ms; and
    // latency_from_transaction_start_p50_ms and _p99_ms, measured from
    // created_at (the start of the producer's transaction), for comparison.
    core::Result<QJsonObject> latency(const QList<ProducedEvent> &produced);
    // Runs of autovacuum on outbox_events so far (pg_stat_user_tables).
    core::Result<qint64> autovacuumCount();
    // The dispatcher's session settings (OutboxStore::sessionSettings()), on
    // or back to the server's values.
    core::Result<void> forceGenericPlans(bool on);
    // One producer tick (its number goes into the payloads); the events it
    // committed.
    core::Result<QList<ProducedEvent>> produce(const ProduceBatch &batch, qint64 tick);

    // Five namespaces with three topics each, tenants, dedupe keys,
    // ~200-byte JSON payloads, created_at spread over a week (UUID v7 ids
    // made from it, so id order is time order as in production), dead rows
    // with a handful of error shapes whose ids and numbers vary (so the
    // error grouping has real work to do).
    // Returns what was loaded: delivered, dead, pending, processing,
    // payload_bytes_avg (the payload as JSON text) and table_size (heap,
    // indexes and toast, pretty-printed).
    core::Result<QJsonObject> loadDataset(const DatasetSize &size);
    // Due pending events created "now", for the dispatcher to drain.
    core::Result<void> addBacklog(qint64 events);
    // Events delivered just now (they appear at the top of the Delivered view).
    core::Result<void> addDelivered(qint64 events);
    // Waits until no other session is running a statement (a closed
    // console's last query runs on in the server until it finishes).
    core::Result<void> waitIdle(int timeoutMs);
    // pg_stat_statements (the server must preload it).
    core::Result<void> enableStatementStats();
    core::Result<void> resetStatementStats();
    // The statements of other sessions (not the loader's) by total time,
    // each its share of the database work: calls, total_ms, mean_ms, max_ms
    // and query (normalised, shortened).
    core::Result<QJsonArray> statementStats(int limit);
    // The sum of total_exec_time of the same statements, in milliseconds.
    core::Result<double> statementTimeMs();

private:
    enum class Kind { Delivered, Dead, PendingDue, Retrying, Processing, Backlog, Fresh };
    core::Result<void> insert(Kind kind, qint64 count);
    // Runs `sql` and moves to its first row; an error when there is none.
    // The one row of `sql`, its columns by name.
    core::Result<QJsonObject> rowObject(const QString &sql, const QVariantList &values,
                                        const QString &what);
    core::Result<QSqlQuery> row(const QString &sql, const QVariantList &values,
                                const QString &what);

    QSqlDatabase m_db;
    qint64 m_serial = 0; // keeps dedupe keys unique across inserts
};

} // namespace outbox::store
