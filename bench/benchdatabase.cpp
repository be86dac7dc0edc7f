#include "bench/benchdatabase.h"

#include "store/database.h"
#include "store/migrator.h"

#include <QFile>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace outbox::bench {

BenchDatabase::BenchDatabase() = default;

qint64 BenchDatabase::serverProcessId() const {
    const QString dir = m_cluster.dataDirectory();
    QFile file(dir + QStringLiteral("/postmaster.pid"));
    if (dir.isEmpty() || !file.open(QIODevice::ReadOnly))
        return 0;
    return file.readLine().trimmed().toLongLong();
}

BenchDatabase::~BenchDatabase() {
    m_db = QSqlDatabase();
    if (!m_connectionName.isEmpty())
        store::closeDatabase(m_connectionName);
}

core::Result<void> BenchDatabase::start(bool durable) {
    devtools::EmbeddedPostgres::Options options;
    options.tcp = false;
    options.fastAndUnsafe = !durable;
    // Commit times of the producer's transactions, for commit -> delivered.
    options.serverSettings << QStringLiteral("track_commit_timestamp=on");
    if (auto started = m_cluster.start(options); !started)
        return started;
    auto info = core::ConnInfo::parse(m_cluster.connInfo());
    if (!info)
        return core::Result<void>(info.error());
    m_connInfo = info.value();
    m_connectionName = store::uniqueConnectionName(QStringLiteral("bench-admin"));
    auto db = store::openDatabase(m_connInfo, m_connectionName);
    if (!db)
        return core::Result<void>(db.error());
    m_db = db.value();
    if (auto migrated = store::Migrator(m_db).migrate(); !migrated)
        return core::Result<void>(migrated.error());
    auto version = store::exec(m_db, QStringLiteral("SHOW server_version"), {},
                               QStringLiteral("server version"));
    if (version && version->next())
        m_serverVersion = version->value(0).toString();
    return {};
}

core::Result<void> BenchDatabase::exec(const QString &sql, const QString &what) {
    auto result = store::exec(m_db, sql, {}, what);
    if (!result)
        return core::Result<void>(result.error());
    return {};
}

core::Result<void> BenchDatabase::truncate() {
    return exec(QStringLiteral("TRUNCATE outbox_attempts, outbox_events"),
                QStringLiteral("emptying the outbox"));
}

core::Result<void> BenchDatabase::load(int events, const QString &topic, int payloadBytes) {
    if (auto emptied = truncate(); !emptied)
        return emptied;
    // Chunks keep each statement's memory and WAL bounded for a million rows.
    constexpr int chunk = 100000;
    const int padding = std::max(payloadBytes - 40, 0);
    for (int from = 1; from <= events; from += chunk) {
        const int to = std::min(events, from + chunk - 1);
        auto inserted = store::exec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload)"
                           " SELECT outbox_uuid_v7(), 'bench', ?::text,"
                           "        jsonb_build_object('n', g, 'pad', repeat('x', ?::integer))"
                           "   FROM generate_series(?::integer, ?::integer) AS g"),
            {topic, padding, from, to}, QStringLiteral("loading events"));
        if (!inserted)
            return core::Result<void>(inserted.error());
    }
    if (auto vacuumed = exec(QStringLiteral("VACUUM (ANALYZE) outbox_events"),
                             QStringLiteral("vacuum after loading"));
        !vacuumed)
        return vacuumed;
    return exec(QStringLiteral("CHECKPOINT"), QStringLiteral("checkpoint after loading"));
}

core::Result<qint64> BenchDatabase::count(const QString &status) {
    auto result =
        store::exec(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = ?"),
                    {status}, QStringLiteral("counting events"));
    if (!result)
        return result.error();
    if (!result->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("counting events: no row")};
    return result->value(0).toLongLong();
}

core::Result<LatencyFigures> BenchDatabase::latency(const QList<ProducedEvent> &produced) {
    QStringList ids;
    QStringList transactions;
    for (const ProducedEvent &event : produced) {
        ids.append(event.id);
        transactions.append(event.transactionId);
    }
    // Arrays as text literals: one bound value each, however many events.
    const auto array = [](const QStringList &items) -> QString {
        return QLatin1Char('{') + items.join(QLatin1Char(',')) + QLatin1Char('}');
    };
    auto result = store::exec(
        m_db,
        QStringLiteral(
            "WITH p AS (SELECT * FROM unnest(?::uuid[], ?::xid8[]) AS p(id, xact)),"
            " d AS (SELECT extract(epoch FROM e.delivered_at"
            "                 - pg_xact_commit_timestamp(p.xact::text::xid)) * 1000 AS ms,"
            "              extract(epoch FROM e.delivered_at - e.created_at) * 1000 AS from_start"
            "         FROM p JOIN outbox_events e ON e.id = p.id"
            "        WHERE e.status = 'delivered')"
            " SELECT count(ms),"
            "        percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),"
            "        percentile_cont(0.9) WITHIN GROUP (ORDER BY ms),"
            "        percentile_cont(0.99) WITHIN GROUP (ORDER BY ms),"
            "        max(ms),"
            "        percentile_cont(0.5) WITHIN GROUP (ORDER BY from_start),"
            "        percentile_cont(0.99) WITHIN GROUP (ORDER BY from_start)"
            "   FROM d"),
        QVariantList{array(ids), array(transactions)}, QStringLiteral("latency figures"));
    if (!result)
        return result.error();
    if (!result->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("latency figures: no row")};
    LatencyFigures figures;
    figures.count = result->value(0).toLongLong();
    figures.p50 = result->value(1).toDouble();
    figures.p90 = result->value(2).toDouble();
    figures.p99 = result->value(3).toDouble();
    figures.max = result->value(4).toDouble();
    figures.fromStartP50 = result->value(5).toDouble();
    figures.fromStartP99 = result->value(6).toDouble();
    return figures;
}

core::Result<qint64> BenchDatabase::autovacuumCount() {
    // Statistics are flushed by backends at most once a second.
    auto result = store::exec(m_db,
                              QStringLiteral("SELECT autovacuum_count FROM pg_stat_user_tables"
                                             " WHERE relid = 'outbox_events'::regclass"),
                              {}, QStringLiteral("autovacuum count"));
    if (!result)
        return result.error();
    return result->next() ? result->value(0).toLongLong() : qint64(0);
}

core::Result<void> BenchDatabase::resetVacuumSettings() {
    return exec(QStringLiteral("ALTER TABLE outbox_events RESET ("
                               "autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,"
                               " autovacuum_vacuum_insert_scale_factor,"
                               " autovacuum_analyze_scale_factor, autovacuum_vacuum_cost_delay,"
                               " vacuum_index_cleanup)"),
                QStringLiteral("resetting the table's vacuum settings"));
}

} // namespace outbox::bench
