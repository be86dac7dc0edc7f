#include "store/benchqueries.h"

#include "store/database.h"
#include "store/outboxstore.h"

#include <QElapsedTimer>
#include <QRegularExpression>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QThread>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

namespace {

constexpr qint64 kChunk = 200000; // bounds each statement's memory and WAL

// A UUID v7 whose time part is `ts` (the production ids come from the
// commit time, so id order is created_at order).
const QLatin1String kUuidFromTs(
    "encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING"
    " substring(int8send(floor(extract(epoch FROM s.ts) * 1000)::bigint) FROM 3) FROM 1 FOR 6),"
    " 52, 1), 53, 1), 'hex')::uuid");

const QLatin1String
    kNamespace("(ARRAY['billing','files','identity','notifications','search'])[1 + s.g % 5]");

const QLatin1String kTopic(
    "(ARRAY['invoice.paid','invoice.created','refund.issued',"
    "'file.stored','file.deleted','thumbnail.ready',"
    "'user.created','user.updated','session.revoked',"
    "'email.sent','sms.sent','push.sent',"
    "'index.updated','index.rebuilt','document.removed'])[1 + (s.g % 5) * 3 + (s.g / 5) % 3]");

// About 200 bytes of JSON text.
const QLatin1String kPayload(
    "jsonb_build_object('id', s.g, 'customer', 'cus_' || substr(md5(s.g::text), 1, 14),"
    " 'amount_cents', (s.g::bigint * 7919) % 100000, 'currency', 'EUR', 'lines', s.g % 7 + 1,"
    " 'source', 'checkout-web', 'trace', md5('t' || s.g), 'created_by', 'svc-' || s.g % 13)");

// Error shapes with varying ids and numbers, as real runners produce them.
const QLatin1String kDeadError(
    "CASE s.g % 8"
    " WHEN 0 THEN 'HTTP 503 Service Unavailable: upstream ' || (ARRAY['billing','files',"
    "'identity','notifications','search'])[1 + s.g % 5] || '-' || s.g % 9"
    " || ' timed out after ' || 1000 + s.g % 9000 || ' ms'"
    " WHEN 1 THEN 'HTTP 500 Internal Server Error: {\"error\":\"deadlock detected\","
    "\"request_id\":\"' || md5(s.g::text) || '\"}'"
    " WHEN 2 THEN 'connection refused by 10.0.' || s.g % 256 || '.' || s.g % 250 || ':8443'"
    " WHEN 3 THEN 'request timed out after 10000 ms'"
    " WHEN 4 THEN 'HTTP 422 Unprocessable Entity: field customer_id=' || s.g || ' is unknown'"
    " WHEN 5 THEN 'HTTP 410 Gone: endpoint /hooks/' || s.g % 17 || ' was removed'"
    " WHEN 6 THEN 'TLS handshake failed: certificate has expired (serial ' || to_hex(s.g) || ')'"
    " ELSE 'cancelled by ops-oncall' END");

// How insert() fills the columns of one kind of row: SQL expressions over
// s.g (the row number) and s.ts (its created_at). The defaults are a due
// pending row that was never tried.
struct KindSql {
    const char *status = "pending";
    struct {
        double oldest = 0;
        double newest = 0;
    } secondsAgo{}; // created_at spread, from now
    const char *attempts = "0";
    struct {
        const char *by = "NULL";
        const char *until = "NULL";
    } lease{};
    QString lastError = QStringLiteral("NULL");
    struct {
        const char *next = "s.ts"; // next_attempt_at
        const char *delivered = "NULL";
        const char *updated = "s.ts";
    } at{};
    const char *keyPrefix = "";
};

// Arrays as text literals: one bound value each, however many items.
QString arrayLiteral(const QStringList &items) {
    return QLatin1Char('{') + items.join(QLatin1Char(',')) + QLatin1Char('}');
}

} // namespace

core::Result<void> BenchQueries::exec(const QString &sql, const QString &what) {
    auto result = store::exec(m_db, sql, {}, what);
    if (!result) {
        return result.error();
    }
    return {};
}

core::Result<QSqlQuery> BenchQueries::row(const QString &sql, const QVariantList &values,
                                          const QString &what) {
    auto query = store::exec(m_db, sql, values, what);
    if (query && !query->next()) {
        return core::Error{core::ErrorKind::Failed, what + QStringLiteral(": no row")};
    }
    return query;
}

core::Result<QJsonObject> BenchQueries::rowObject(const QString &sql, const QVariantList &values,
                                                  const QString &what) {
    auto query = row(sql, values, what);
    if (!query) {
        return query.error();
    }
    QJsonObject object;
    const QSqlRecord record = query->record();
    for (int i = 0; i < record.count(); ++i) {
        object.insert(record.fieldName(i), QJsonValue::fromVariant(query->value(i)));
    }
    return object;
}

core::Result<QString> BenchQueries::serverVersion() {
    auto version = row(QStringLiteral("SHOW server_version"), {}, QStringLiteral("server version"));
    if (!version) {
        return version.error();
    }
    return version->value(0).toString();
}

core::Result<void> BenchQueries::truncate() {
    return exec(QStringLiteral("TRUNCATE outbox_attempts, outbox_events"),
                QStringLiteral("emptying the outbox"));
}

core::Result<void> BenchQueries::vacuumAndCheckpoint() {
    if (auto vacuumed = exec(QStringLiteral("VACUUM (ANALYZE) outbox_events"),
                             QStringLiteral("vacuum after loading"));
        !vacuumed) {
        return vacuumed;
    }
    return exec(QStringLiteral("CHECKPOINT"), QStringLiteral("checkpoint after loading"));
}

core::Result<void> BenchQueries::loadUniform(int events, const QString &topic, int payloadBytes) {
    if (auto emptied = truncate(); !emptied) {
        return emptied;
    }
    if (auto inserted = insertEvents({events, topic, payloadBytes}); !inserted) {
        return inserted;
    }
    return vacuumAndCheckpoint();
}

core::Result<void> BenchQueries::insertEvents(const BenchInsert &what) {
    // Chunks keep each statement's memory and WAL bounded for a million rows.
    constexpr qint64 chunk = 100000;
    const int padding = std::max(what.payloadBytes - 40, 0);
    for (qint64 from = 1; from <= what.events; from += chunk) {
        const qint64 to = std::min(what.events, from + chunk - 1);
        auto inserted = store::exec(
            m_db,
            // `held` named: a row trigger fills it otherwise, one call per row.
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                           " attempts, delivered_at, aggregate_type, aggregate_id, held)"
                           " SELECT outbox_uuid_v7(), ?::text, ?::text,"
                           "        jsonb_build_object('n', g, 'pad', repeat('x', ?::integer)),"
                           "        CASE WHEN ?::boolean THEN 'delivered' ELSE 'pending' END,"
                           "        CASE WHEN ?::boolean THEN 1 ELSE 0 END,"
                           "        CASE WHEN ?::boolean THEN now() END,"
                           "        CASE WHEN ?::integer > 0 THEN ?::text END,"
                           "        CASE WHEN ?::integer > 0"
                           "             THEN floor(random() * ?::integer)::bigint::text END,"
                           "        NOT ?::boolean AND outbox_paused(?::text, ?::text)"
                           "   FROM generate_series(?::bigint, ?::bigint) AS g"),
            {what.nameSpace, what.topic, padding, what.delivered, what.delivered, what.delivered,
             what.aggregates, what.nameSpace, what.aggregates, what.aggregates, what.delivered,
             what.nameSpace, what.topic, from, to},
            QStringLiteral("loading events"));
        if (!inserted) {
            return inserted.error();
        }
    }
    return {};
}

core::Result<qint64> BenchQueries::count(const QString &status) {
    auto result = row(QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = ?"),
                      {status}, QStringLiteral("counting events"));
    if (!result) {
        return result.error();
    }
    return result->value(0).toLongLong();
}

core::Result<QJsonObject> BenchQueries::latency(const QList<ProducedEvent> &produced) {
    QStringList ids;
    QStringList transactions;
    for (const ProducedEvent &event : produced) {
        ids.append(event.id);
        transactions.append(event.transactionId);
    }
    return rowObject(
        QStringLiteral(
            "WITH p AS (SELECT * FROM unnest(?::uuid[], ?::xid8[]) AS p(id, xact)),"
            " d AS (SELECT extract(epoch FROM e.delivered_at"
            "                 - pg_xact_commit_timestamp(p.xact::text::xid)) * 1000 AS ms,"
            "              extract(epoch FROM e.delivered_at - e.created_at) * 1000 AS from_start"
            "         FROM p JOIN outbox_events e ON e.id = p.id"
            "        WHERE e.status = 'delivered')"
            " SELECT count(ms) AS latency_events,"
            "        percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS latency_p50_ms,"
            "        percentile_cont(0.9) WITHIN GROUP (ORDER BY ms) AS latency_p90_ms,"
            "        percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS latency_p99_ms,"
            "        max(ms)::float8 AS latency_max_ms,"
            "        percentile_cont(0.5) WITHIN GROUP (ORDER BY from_start)"
            "          AS latency_from_transaction_start_p50_ms,"
            "        percentile_cont(0.99) WITHIN GROUP (ORDER BY from_start)"
            "          AS latency_from_transaction_start_p99_ms"
            "   FROM d"),
        QVariantList{arrayLiteral(ids), arrayLiteral(transactions)},
        QStringLiteral("latency figures"));
}

core::Result<qint64> BenchQueries::autovacuumCount() {
    // Statistics are flushed by backends at most once a second.
    auto result = store::exec(m_db,
                              QStringLiteral("SELECT autovacuum_count FROM pg_stat_user_tables"
                                             " WHERE relid = 'outbox_events'::regclass"),
                              {}, QStringLiteral("autovacuum count"));
    if (!result) {
        return result.error();
    }
    return result->next() ? result->value(0).toLongLong() : qint64(0);
}

core::Result<void> BenchQueries::forceGenericPlans(bool on) {
    return exec(
        on ? OutboxStore::sessionSettings()
           : QStringLiteral("SELECT set_config(name, reset_val, false) FROM pg_settings"
                            " WHERE name IN ('plan_cache_mode', 'jit') OR name LIKE 'enable\\_%'"),
        QStringLiteral("the dispatcher's planner settings"));
}

core::Result<QList<ProducedEvent>> BenchQueries::produce(const ProduceBatch &batch, qint64 tick) {
    // One statement, so one transaction: the xid is the one that commits.
    auto result = store::exec(
        m_db,
        QStringLiteral("WITH k AS (SELECT ?::text[] AS ns, ?::text[] AS topics)"
                       " SELECT e.id::text, pg_current_xact_id()::text"
                       "   FROM k, generate_series(0, ?::integer - 1) AS g,"
                       "        LATERAL outbox_enqueue(k.ns[1 + g % cardinality(k.ns)],"
                       "            k.topics[1 + g % cardinality(k.topics)],"
                       "            jsonb_build_object('tick', ?::bigint, 'n', g,"
                       "                               'pad', repeat('x', ?::integer))) AS e"),
        {arrayLiteral(batch.namespaces), arrayLiteral(batch.topics), batch.events, tick,
         std::max(batch.payloadBytes - 40, 0)},
        QStringLiteral("producing events"));
    if (!result) {
        return result.error();
    }
    QList<ProducedEvent> events;
    while (result->next()) {
        events.append(ProducedEvent{result->value(0).toString(), result->value(1).toString()});
    }
    return events;
}

core::Result<void> BenchQueries::waitIdle(int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        auto busy = store::exec(m_db,
                                QStringLiteral("SELECT count(*) FROM pg_stat_activity"
                                               " WHERE state = 'active' AND pid <> pg_backend_pid()"
                                               " AND backend_type = 'client backend'"),
                                {}, QStringLiteral("waiting for the server to be idle"));
        if (!busy) {
            return busy.error();
        }
        if (busy->next() && busy->value(0).toLongLong() == 0) {
            return {};
        }
        if (clock.elapsed() > timeoutMs) {
            return core::Error{core::ErrorKind::Failed,
                               QStringLiteral("other sessions were still running statements "
                                              "after %1 s")
                                   .arg(timeoutMs / 1000)};
        }
        QThread::msleep(50);
    }
}

core::Result<void> BenchQueries::enableStatementStats() {
    return exec(QStringLiteral("CREATE EXTENSION pg_stat_statements"),
                QStringLiteral("enabling pg_stat_statements"));
}

core::Result<void> BenchQueries::resetStatementStats() {
    return exec(QStringLiteral("SELECT pg_stat_statements_reset()"),
                QStringLiteral("resetting statement statistics"));
}

// The loader's own statements (inserts, the statistics queries) run as the
// same user; they are told apart by text.
const QLatin1String kConsoleStatements(
    " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname ="
    " current_database()) AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE "
    "'%pg_stat_activity%'"
    " AND query NOT LIKE 'INSERT INTO"
    " outbox_events (id, namespace, topic, aggregate_type%'");

core::Result<double> BenchQueries::statementTimeMs() {
    auto query = store::exec(m_db,
                             QLatin1String("SELECT coalesce(sum(total_exec_time), 0)::float8") +
                                 kConsoleStatements,
                             {}, QStringLiteral("reading statement statistics"));
    if (!query)
        return query.error();
    return query->next() ? query->value(0).toDouble() : 0.0;
}

core::Result<QJsonArray> BenchQueries::statementStats(int limit) {
    auto query =
        store::exec(m_db,
                    QLatin1String("SELECT calls, round(total_exec_time)::float8,"
                                  " round(mean_exec_time::numeric, 1)::float8,"
                                  " round(max_exec_time::numeric, 1)::float8, query") +
                        kConsoleStatements +
                        QStringLiteral(" ORDER BY total_exec_time DESC LIMIT %1").arg(limit),
                    {}, QStringLiteral("reading statement statistics"));
    if (!query) {
        return query.error();
    }
    const QRegularExpression spaces(QStringLiteral("\\s+"));
    QJsonArray stats;
    while (query->next()) {
        QString text = query->value(4).toString().replace(spaces, QStringLiteral(" ")).trimmed();
        if (text.size() > 160) {
            text = text.left(157) + QStringLiteral("...");
        }
        stats.append(QJsonObject{{QStringLiteral("calls"), query->value(0).toLongLong()},
                                 {QStringLiteral("total_ms"), query->value(1).toDouble()},
                                 {QStringLiteral("mean_ms"), query->value(2).toDouble()},
                                 {QStringLiteral("max_ms"), query->value(3).toDouble()},
                                 {QStringLiteral("query"), text}});
    }
    return stats;
}

core::Result<void> BenchQueries::insert(Kind kind, qint64 count) {
    constexpr double day = 86400.0;
    constexpr const char *deliveredAt = "s.ts + (5 + s.g % 500) * interval '1 ms'";
    constexpr const char *deadAt = "s.ts + interval '30 minutes'";
    static const KindSql kinds[] = {
        // Delivered
        {.status = "delivered",
         .secondsAgo = {7 * day, 60},
         .attempts = "CASE WHEN s.g % 20 = 0 THEN 2 ELSE 1 END",
         .at = {.delivered = deliveredAt, .updated = deliveredAt},
         .keyPrefix = "d"},
        // Dead
        {.status = "dead",
         .secondsAgo = {7 * day, 3600},
         .attempts = "CASE WHEN s.g % 8 = 7 THEN 3 ELSE 10 END",
         .lastError = kDeadError,
         .at = {.next = deadAt, .updated = deadAt},
         .keyPrefix = "x"},
        // PendingDue
        {.status = "pending", .secondsAgo = {600, 0}, .keyPrefix = "p"},
        // Retrying
        {.status = "pending",
         .secondsAgo = {7200, 60},
         .attempts = "1 + s.g % 5",
         .lastError = QStringLiteral("'HTTP 503 Service Unavailable: upstream busy, retry "
                                     "in ' || s.g % 600 || ' s'"),
         .at = {.next = "now() + make_interval(secs => s.g % 3600)", .updated = "now()"},
         .keyPrefix = "r"},
        // Processing
        {.status = "processing",
         .secondsAgo = {300, 0},
         .attempts = "1",
         .lease = {.by = "'0190aaaa-0000-7000-8000-00000000beef'::uuid",
                   .until = "CASE WHEN s.g % 2 = 0 THEN now() + interval '10 minutes'"
                            " ELSE now() - interval '1 minute' END"},
         .at = {.updated = "now()"},
         .keyPrefix = "w"},
        // Backlog
        {.status = "pending", .secondsAgo = {60, 0}, .keyPrefix = "b"},
        // Fresh
        {.status = "delivered",
         .secondsAgo = {2, 0},
         .attempts = "1",
         .at = {.delivered = "now()", .updated = "now()"},
         .keyPrefix = "f"},
    };
    static_assert(std::size(kinds) == size_t(Kind::Fresh) + 1);
    const KindSql &k = kinds[size_t(kind)];
    const QString sql =
        QLatin1String("INSERT INTO outbox_events (id, namespace, topic, aggregate_type,"
                      " aggregate_id, tenant_id, dedupe_key, payload, status, attempts,"
                      " next_attempt_at, locked_by, locked_until, last_error, delivered_at,"
                      " created_at, updated_at, held) SELECT ") +
        kUuidFromTs + QLatin1String(", ") + kNamespace + QLatin1String(", ") + kTopic +
        QLatin1String(", (ARRAY['order','file','user','message','document'])[1 + s.g % 5],"
                      " ((s.g::bigint * 7919) % 1000003)::text, s.tenant,"
                      " CASE WHEN s.g % 3 = 0 THEN NULL ELSE coalesce(s.tenant::text || '/', '')"
                      " || '%1-' || (s.g + %2) END, ")
            .arg(QLatin1String(k.keyPrefix))
            .arg(m_serial) +
        kPayload +
        QStringLiteral(", '%1', %2, %3, %4, %5, %6, %7, s.ts, %8, false")
            .arg(QLatin1String(k.status), QLatin1String(k.attempts), QLatin1String(k.at.next),
                 QLatin1String(k.lease.by), QLatin1String(k.lease.until), k.lastError,
                 QLatin1String(k.at.delivered), QLatin1String(k.at.updated)) +
        QStringLiteral(" FROM (SELECT g, now() - make_interval(secs => %1 - %2 * g / %3::float8)"
                       " AS ts, CASE WHEN g % 4 = 0 THEN NULL ELSE ('00000000-0000-4000-8000-'"
                       " || lpad(to_hex(1 + g % 40), 12, '0'))::uuid END AS tenant"
                       " FROM generate_series(%4::integer, %5::integer) AS g) AS s");
    for (qint64 from = 1; from <= count; from += kChunk) {
        const qint64 to = std::min(count, from + kChunk - 1);
        const QString statement = sql.arg(k.secondsAgo.oldest, 0, 'f', 3)
                                      .arg(k.secondsAgo.oldest - k.secondsAgo.newest, 0, 'f', 3)
                                      .arg(count)
                                      .arg(from)
                                      .arg(to);
        if (auto done =
                exec(statement, QStringLiteral("loading %1 events").arg(QLatin1String(k.status)));
            !done) {
            return done;
        }
    }
    m_serial += count;
    return {};
}

core::Result<QJsonObject> BenchQueries::loadDataset(const DatasetSize &size) {
    if (auto emptied = truncate(); !emptied) {
        return emptied.error();
    }
    const std::pair<Kind, qint64> parts[] = {{Kind::Delivered, size.delivered},
                                             {Kind::Dead, size.dead},
                                             {Kind::PendingDue, size.pendingDue},
                                             {Kind::Retrying, size.retrying},
                                             {Kind::Processing, size.processing}};
    for (const auto &[kind, count] : parts) {
        if (count > 0) {
            if (auto done = insert(kind, count); !done) {
                return done.error();
            }
        }
    }
    if (auto done = vacuumAndCheckpoint(); !done) {
        return done.error();
    }
    return rowObject(
        QStringLiteral("SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered,"
                       " count(*) FILTER (WHERE status = 'dead') AS dead,"
                       " count(*) FILTER (WHERE status = 'pending') AS pending,"
                       " count(*) FILTER (WHERE status = 'processing') AS processing,"
                       " round(avg(octet_length(payload::text)))::float8 AS payload_bytes_avg,"
                       " pg_size_pretty(pg_total_relation_size('outbox_events')) AS table_size"
                       " FROM outbox_events"),
        {}, QStringLiteral("describing the data set"));
}

core::Result<void> BenchQueries::addBacklog(qint64 events) {
    if (auto done = insert(Kind::Backlog, events); !done) {
        return done;
    }
    return exec(QStringLiteral("ANALYZE outbox_events"), QStringLiteral("analyze"));
}

core::Result<void> BenchQueries::addDelivered(qint64 events) {
    return insert(Kind::Fresh, events);
}

} // namespace outbox::store
