#include "store/outboxstore.h"

#include "core/uuidtext.h"
#include "store/boundstatement.h"
#include "store/claimstatement.h"
#include "store/database.h"
#include "store/logging.h"
#include "store/pausestore.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSet>
#include <QSqlRecord>
#include <QVariant>

#include <algorithm>
#include <chrono>
#include <map>

namespace outbox::store {

using namespace sqlvalues;

namespace {

using core::ErrorKind;

// last_error and outbox_attempts.error keep an excerpt, not whole bodies.
constexpr int kMaxErrorChars = 2000;
// Caps a caller's delay far below interval overflow; nobody waits longer.
constexpr qint64 kMaxDelayMs = qint64(10) * 365 * 24 * 3600 * 1000;

std::optional<QUuid> uuidOrNull(const QVariant &value) {
    if (value.isNull()) {
        return std::nullopt;
    }
    return QUuid::fromString(value.toString());
}

// PostgreSQL text cannot hold U+0000 (jsonb refuses "\u0000"), and a runner's
// response body may contain anything.
QString sanitizeError(const QString &error) {
    QString text = error;
    text.remove(QChar(0));
    if (text.size() > kMaxErrorChars) {
        text.truncate(kMaxErrorChars);
        if (text.back().isHighSurrogate()) {
            text.chop(1);
        }
        text += QStringLiteral("…");
    }
    return text;
}

QString jsonText(const QJsonArray &rows) {
    return QString::fromUtf8(QJsonDocument(rows).toJson(QJsonDocument::Compact));
}

// Ack keeps last_error: "delivered after 3 failures, the last one was X" is
// useful history for an operator, and outbox_attempts has the rest. The
// fence (lease holder and attempt) implies 'processing': only processing rows
// hold a lease (outbox_events_lease_only_processing_check), and leaving the
// status out keeps the statement a lookup by primary key.
const QString kAckSql = QStringLiteral(
    "WITH x AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, attempts integer))"
    " UPDATE outbox_events e"
    " SET status = 'delivered', delivered_at = now(), locked_by = NULL, locked_until = NULL,"
    "     updated_at = statement_timestamp()"
    " FROM x"
    " WHERE e.id = x.id AND e.attempts = x.attempts AND e.locked_by = ?::uuid"
    " RETURNING e.id");

// The failure history row is written by the same statement as the state
// change, so a fenced-out nack leaves no trace and an applied one always has
// its history. The limit is the event's own where it has one (sql/014), and
// the new status comes back so the caller knows which events died.
const QString kNackSql = QStringLiteral(
    "WITH x AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, attempts integer,"
    "           error text, delay_ms bigint, permanent boolean, http_status integer,"
    "           duration_ms bigint)),"
    " u AS ("
    " UPDATE outbox_events e"
    " SET status = CASE WHEN x.permanent OR e.attempts >= coalesce(e.max_attempts, ?::integer)"
    "                   THEN 'dead' ELSE 'pending' END,"
    "     next_attempt_at = CASE WHEN x.permanent"
    "                                 OR e.attempts >= coalesce(e.max_attempts, ?::integer) THEN "
    "now()"
    "                            ELSE now() + x.delay_ms * interval '1 millisecond' END,"
    "     last_error = x.error, locked_by = NULL, locked_until = NULL,"
    "     updated_at = statement_timestamp()"
    " FROM x"
    " WHERE e.id = x.id AND e.attempts = x.attempts AND e.locked_by = ?::uuid"
    " RETURNING e.id, e.status, e.attempts, x.error, x.http_status, x.duration_ms),"
    " a AS ("
    " INSERT INTO outbox_attempts (event_id, attempt, worker_id, http_status, duration_ms, error)"
    " SELECT u.id, u.attempts, ?::uuid, u.http_status, u.duration_ms, u.error FROM u)"
    " SELECT id, status FROM u");

// A release that made no request gives the attempt back: shutting down must
// not bring an event closer to dead. A release whose request went out at the
// last allowed attempt ends the event as the dead sweep would, at once: left
// pending it would never be claimed again, and the periodic sweep only looks
// at expired leases.
const QString kReleaseSql = QStringLiteral(
    "WITH x AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, attempts integer,"
    "           attempt_made boolean)),"
    " m AS (SELECT ?::integer AS max_attempts)"
    " UPDATE outbox_events e"
    " SET status = CASE WHEN x.attempt_made"
    "                        AND e.attempts >= coalesce(e.max_attempts, m.max_attempts)"
    "                   THEN 'dead' ELSE 'pending' END,"
    "     last_error = CASE WHEN x.attempt_made"
    "                            AND e.attempts >= coalesce(e.max_attempts, m.max_attempts)"
    "                       THEN 'dead: reached max attempts ('"
    "                            || coalesce(e.max_attempts, m.max_attempts) || ');'"
    "                            || ' the last attempt was cut off by a shutdown before its'"
    "                            || ' outcome was known'"
    "                            || coalesce('; previous error: ' || e.last_error, '')"
    "                       ELSE e.last_error END,"
    "     next_attempt_at = now(), locked_by = NULL, locked_until = NULL,"
    "     attempts = CASE WHEN x.attempt_made THEN e.attempts ELSE greatest(e.attempts - 1, 0) END,"
    "     updated_at = statement_timestamp()"
    " FROM x, m"
    " WHERE e.id = x.id AND e.attempts = x.attempts AND e.locked_by = ?::uuid"
    " RETURNING e.id, e.status");

// An event's own limit of attempts wins over the dispatcher's (sql/014).
// The SET expressions see the old row, so the message can tell an expired
// last lease apart and keep the previous error. ExpiredLeases reads only the
// lease index (it does not name the status, see sql/004_claim_path.sql); All
// also reads every pending row (attempts is not indexed), which costs a pass
// over the whole backlog.
QString sweepSql(bool byNamespace, SweepScope scope) {
    return QStringLiteral(
               "UPDATE outbox_events"
               " SET status = 'dead', locked_by = NULL, locked_until = NULL,"
               "     updated_at = statement_timestamp(),"
               "     last_error = 'dead: reached max attempts ('"
               "                  || coalesce(max_attempts, ?::integer) || ')'"
               "         || CASE WHEN status = 'processing'"
               "                 THEN '; the lease of the last attempt expired without an ack or "
               "nack'"
               "                 ELSE '' END"
               "         || coalesce('; previous error: ' || last_error, '')"
               " WHERE attempts >= coalesce(max_attempts, ?::integer)") +
           (scope == SweepScope::ExpiredLeases
                ? QStringLiteral(" AND locked_until < now()") // only processing rows hold a lease
                : QStringLiteral(" AND (status = 'pending' OR (status = 'processing' AND "
                                 "locked_until < now()))")) +
           (byNamespace ? QStringLiteral(" AND namespace = ?::text") : QString());
}

// The due time of the next event a claim in `ordering` can take: the head of
// one range of the due index per kind (sql/011): never the held (paused)
// events, and in aggregate order not those blocked behind a dead event
// either, or an ordered dispatcher would claim again at once, and again.
// NULL when there is none (greatest() would turn that NULL into 0).
QString nextDueSql(bool byNamespace, core::Ordering ordering) {
    const auto head = [byNamespace](const char *blocked) -> QString {
        return QStringLiteral("(SELECT next_attempt_at FROM outbox_events"
                              " WHERE status = 'pending' AND NOT held AND ") +
               QLatin1String(blocked) + notPausedCondition(QStringLiteral("outbox_events")) +
               (byNamespace ? QStringLiteral(" AND namespace = ?::text") : QString()) +
               QStringLiteral(" ORDER BY next_attempt_at LIMIT 1)");
    };
    const QString next = ordering == core::Ordering::Aggregate
                             ? head("NOT blocked")
                             : QStringLiteral("least(") + head("NOT blocked") +
                                   QStringLiteral(", ") + head("blocked") + QLatin1Char(')');
    return QStringLiteral("SELECT ceil(extract(epoch FROM ") + next +
           QStringLiteral(" - now()) * 1000)::bigint");
}

// The statements that take " AND namespace = ?" last: `values`, then the
// namespace when one is given.
QVariantList withNamespace(QVariantList values, const QString &nameSpace) {
    if (!nameSpace.isEmpty()) {
        values << nameSpace;
    }
    return values;
}

// Run with execBound(): the payload travels as a bind parameter, never in
// the statement's text (pg_stat_activity, statement logs).
const QString kEnqueueSql =
    QStringLiteral("SELECT id::text, inserted FROM outbox_enqueue($1::text, $2::text, $3::jsonb,"
                   " $4::text, $5::uuid, $6::text, $7::text, $8::integer, $9::text, $10::text)");

FencedResult fenced(QSqlQuery &query, const QList<QUuid> &requested) {
    QSet<QUuid> applied;
    FencedResult result;
    const bool withStatus = query.record().count() > 1;
    while (query.next()) {
        const QUuid id = QUuid::fromString(query.value(0).toString());
        applied.insert(id);
        if (withStatus && query.value(1).toString() == QLatin1String("dead")) {
            result.madeDead << id;
        }
    }
    result.applied = int(applied.size());
    QSet<QUuid> reported;
    for (const QUuid &id : requested) {
        if (!applied.contains(id) && !reported.contains(id)) {
            result.fencedOut << id;
            reported.insert(id);
        }
    }
    return result;
}

} // namespace

// One prepared statement per kind, created on first use and reused: the
// server plans each once per session.
struct OutboxStore::Prepared {
    struct Slot {
        QSqlQuery query;
        bool ready = false;
    };
    Slot claim[2][2];                      // [by namespace][in aggregate order]
    std::map<int, Slot> routedClaim[2][2]; // by number of routes
    Slot ack;
    Slot nack;
    Slot release;
    Slot sweep[2][2];                   // [by namespace][expired leases only]
    Slot nextDue[2][2];                 // [by namespace][in aggregate order]
    Slot floor[2];                      // [by namespace]
    std::map<int, Slot> routedFloor[2]; // [by namespace], by number of routes
    Slot pauseWork;
};

namespace {

core::Result<QSqlQuery *> prepared(QSqlDatabase db, auto &slot, const QString &sql,
                                   const QString &context) {
    if (!slot.ready) {
        slot.query = QSqlQuery(db);
        if (!slot.query.prepare(sql)) {
            return toError(slot.query.lastError(), context);
        }
        slot.ready = true;
    }
    return &slot.query;
}

template <typename Slot>
core::Result<QSqlQuery *> run(QSqlDatabase db, Slot &slot, const QString &sql,
                              const QVariantList &values, const QString &context) {
    auto query = prepared(db, slot, sql, context);
    if (!query.ok()) {
        return query;
    }
    QSqlQuery *q = query.value();
    for (qsizetype i = 0; i < values.size(); ++i) {
        q->bindValue(int(i), values.at(i));
    }
    if (!q->exec()) {
        const auto error = q->lastError();
        if (isConnectionLost(error)) {
            // The server-side statement died with the session; a new
            // connection needs a new PREPARE.
            slot.ready = false;
        }
        return toError(error, context);
    }
    return q;
}

// The first column of the only row, or a null QVariant when there is no row
// or the value is NULL.
template <typename Slot>
core::Result<QVariant> runScalar(QSqlDatabase db, Slot &slot, const QString &sql,
                                 const QVariantList &values, const QString &context) {
    auto query = run(db, slot, sql, values, context);
    if (!query.ok()) {
        return query.error();
    }
    QSqlQuery *q = query.value();
    QVariant value;
    if (q->next()) {
        value = q->value(0);
    }
    q->finish();
    return value;
}

// The rows of a fenced batch statement (ack, nack, release), its first
// value: each item's id and attempts (the fence) and what `more` adds.
struct FencedRows {
    QString json;
    QList<QUuid> ids;
};

template <typename Item, typename More> FencedRows fencedRows(const QList<Item> &items, More more) {
    QJsonArray rows;
    FencedRows result;
    for (const Item &item : items) {
        QJsonObject row{{QStringLiteral("id"), core::uuidText(item.id)},
                        {QStringLiteral("attempts"), item.attempts}};
        more(item, row);
        rows.append(row);
        result.ids << item.id;
    }
    result.json = jsonText(rows);
    return result;
}

// Runs a fenced batch statement and tells which of the requested rows it
// applied; nothing requested runs nothing. `fencedKind` ("ack", "nack") has
// the rows that were fenced out logged.
template <typename Slot>
core::Result<FencedResult> runFenced(QSqlDatabase db, Slot &slot, const QString &sql,
                                     const QVariantList &values, const QList<QUuid> &requested,
                                     const QString &context, const char *fencedKind = nullptr) {
    if (requested.isEmpty()) {
        return FencedResult{};
    }
    auto query = run(db, slot, sql, values, context);
    if (!query.ok()) {
        return query.error();
    }
    auto result = fenced(*query.value(), requested);
    query.value()->finish();
    if (fencedKind && !result.fencedOut.isEmpty()) {
        qCInfo(lcStore, "%d %s(s) fenced out: the lease moved to another worker or attempt",
               int(result.fencedOut.size()), fencedKind);
    }
    return result;
}

} // namespace

OutboxStore::OutboxStore(Session &session)
    : OutboxStore(session.database()) {}

OutboxStore::OutboxStore(QSqlDatabase db)
    : m_db(std::move(db))
    , m_prepared(std::make_unique<Prepared>()) {}

OutboxStore::~OutboxStore() = default;

core::Result<EnqueueResult> OutboxStore::enqueue(const EnqueueRequest &request) {
    const QVariantList values{
        request.nameSpace,
        request.topic,
        QString::fromUtf8(request.payload),
        nullableText(request.dedupeKey),
        request.tenantId ? QVariant(core::uuidText(*request.tenantId))
                         : QVariant(QMetaType::fromType<QString>()),
        nullableText(request.aggregateType),
        nullableText(request.aggregateId),
        request.maxAttempts ? QVariant(*request.maxAttempts) : QVariant(QMetaType::fromType<int>()),
        nullableText(request.traceparent),
        nullableText(request.tracestate),
    };
    auto rows = execBound(m_db, kEnqueueSql, values, QStringLiteral("enqueueing an event"));
    if (!rows.ok()) {
        return rows.error();
    }
    if (rows->isEmpty()) {
        return core::Error{ErrorKind::Failed,
                           QStringLiteral("enqueueing an event: outbox_enqueue returned no row")};
    }
    EnqueueResult result;
    result.id = QUuid::fromString(rows->value(0, 0).value_or(QString()));
    result.inserted = rows->isTrue(0, 1);
    return result;
}

core::Result<QList<ClaimedEvent>> OutboxStore::claimBatch(const QUuid &workerId,
                                                          const ClaimOptions &options) {
    if (options.batchSize <= 0 || options.maxAttempts <= 0 || options.lease.count() <= 0) {
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("claiming events: batch size, max attempts and lease must be "
                           "positive (got %1, %2, %3 ms)")
                .arg(options.batchSize)
                .arg(options.maxAttempts)
                .arg(options.lease.count())};
    }
    const bool byNamespace = !options.nameSpace.isEmpty();
    QVariantList pick{options.maxAttempts, options.createdFrom.isEmpty()
                                               ? QStringLiteral("-infinity")
                                               : options.createdFrom};
    if (byNamespace) {
        pick << options.nameSpace;
    }
    pick << options.batchSize;
    const bool ordered = options.ordering == core::Ordering::Aggregate;
    QVariantList values = ordered ? pick + pick : pick; // ordered: CTE l, then CTE c
    values << core::uuidText(workerId) << qint64(options.lease.count());
    const int routes = int(options.routes.size());
    if (routes > 0) {
        values.prepend(routesJson(options.routes));
    }
    auto query = run(m_db,
                     routes > 0 ? m_prepared->routedClaim[byNamespace][ordered][routes]
                                : m_prepared->claim[byNamespace][ordered],
                     claimStatement(byNamespace, options.ordering, routes), values,
                     QStringLiteral("claiming events"));
    if (!query.ok()) {
        return query.error();
    }
    QSqlQuery *q = query.value();
    QList<ClaimedEvent> events;
    while (q->next()) {
        ClaimedEvent event;
        event.id = QUuid::fromString(q->value(0).toString());
        event.nameSpace = q->value(1).toString();
        event.topic = q->value(2).toString();
        event.tenantId = uuidOrNull(q->value(3));
        event.dedupeKey = optionalText(q->value(4));
        event.aggregateType = optionalText(q->value(5));
        event.aggregateId = optionalText(q->value(6));
        event.payload = q->value(7).toString().toUtf8();
        event.attempts = q->value(8).toInt();
        event.createdAt = q->value(9).toDateTime();
        event.lockedUntil = q->value(10).toDateTime();
        event.traceparent = optionalText(q->value(11));
        event.tracestate = optionalText(q->value(12));
        events << event;
    }
    q->finish();
    return events;
}

core::Result<FencedResult> OutboxStore::ack(const QUuid &workerId, const QList<Ack> &acks) {
    const FencedRows rows = fencedRows(acks, [](const Ack &, QJsonObject &) {});
    return runFenced(m_db, m_prepared->ack, kAckSql, {rows.json, core::uuidText(workerId)},
                     rows.ids, QStringLiteral("acknowledging delivered events"), "ack");
}

core::Result<FencedResult> OutboxStore::nack(const QUuid &workerId, const QList<Nack> &nacks,
                                             int maxAttempts) {
    const FencedRows rows = fencedRows(nacks, [](const Nack &n, QJsonObject &row) {
        row.insert(QStringLiteral("error"), sanitizeError(n.error));
        row.insert(QStringLiteral("delay_ms"), std::clamp<qint64>(n.delay.count(), 0, kMaxDelayMs));
        row.insert(QStringLiteral("permanent"), n.permanent);
        row.insert(QStringLiteral("duration_ms"), std::max<qint64>(n.duration.count(), 0));
        if (n.httpStatus) {
            row.insert(QStringLiteral("http_status"), *n.httpStatus);
        }
    });
    const QString worker = core::uuidText(workerId);
    return runFenced(m_db, m_prepared->nack, kNackSql,
                     {rows.json, maxAttempts, maxAttempts, worker, worker}, rows.ids,
                     QStringLiteral("recording failed deliveries"), "nack");
}

core::Result<FencedResult> OutboxStore::release(const QUuid &workerId,
                                                const QList<Release> &releases, int maxAttempts) {
    if (maxAttempts <= 0) {
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("release: max attempts must be positive (got %1)").arg(maxAttempts)};
    }
    const FencedRows rows = fencedRows(releases, [](const Release &r, QJsonObject &row) {
        row.insert(QStringLiteral("attempt_made"), r.attemptMade);
    });
    return runFenced(m_db, m_prepared->release, kReleaseSql,
                     {rows.json, maxAttempts, core::uuidText(workerId)}, rows.ids,
                     QStringLiteral("releasing leased events"));
}

QString OutboxStore::sessionSettings() {
    // No bitmap or sequential scan: with statistics that promise few rows,
    // either looks cheaper than the claim index walked in order (and then
    // sorts the whole backlog), or than one primary-key lookup per
    // acknowledged id. No hash or merge join: a fenced statement joins its
    // ids to the table by nested loop, one index lookup per id. Statements
    // that have no other way still run (the setting only prices a path). No
    // JIT: whether it compiles is decided by the estimated cost, which a
    // generic plan over a large backlog can push past jit_above_cost, and
    // compiling took 9 ms where the claim itself takes 0.3 ms.
    return QStringLiteral("SELECT set_config('plan_cache_mode', 'force_generic_plan', false),"
                          " set_config('jit', 'off', false),"
                          " set_config('enable_bitmapscan', 'off', false),"
                          " set_config('enable_seqscan', 'off', false),"
                          " set_config('enable_hashjoin', 'off', false),"
                          " set_config('enable_mergejoin', 'off', false)");
}

QString OutboxStore::statement(Statement which, bool byNamespace, core::Ordering ordering) {
    switch (which) {
    case Statement::Claim:
        return claimStatement(byNamespace, ordering);
    case Statement::Ack:
        return kAckSql;
    case Statement::Nack:
        return kNackSql;
    case Statement::Release:
        return kReleaseSql;
    case Statement::Floor:
        return claimFloorStatement(byNamespace);
    case Statement::NextDue:
        return nextDueSql(byNamespace, ordering);
    }
    return {};
}

QString OutboxStore::deadSweepStatement(bool byNamespace, SweepScope scope) {
    return sweepSql(byNamespace, scope);
}

core::Result<qint64> OutboxStore::deadSweep(int maxAttempts, const QString &nameSpace,
                                            SweepScope scope) {
    if (maxAttempts <= 0) {
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("dead sweep: max attempts must be positive (got %1)").arg(maxAttempts)};
    }
    const bool byNamespace = !nameSpace.isEmpty();
    const bool leasesOnly = scope == SweepScope::ExpiredLeases;
    auto query = run(m_db, m_prepared->sweep[byNamespace][leasesOnly], sweepSql(byNamespace, scope),
                     withNamespace({maxAttempts, maxAttempts}, nameSpace),
                     QStringLiteral("moving exhausted events to dead"));
    if (!query.ok()) {
        return query.error();
    }
    const qint64 swept = query.value()->numRowsAffected();
    query.value()->finish();
    if (swept > 0) {
        qCInfo(lcStore) << swept << "event(s) reached max attempts and are now dead";
    }
    return swept;
}

core::Result<qint64> OutboxStore::continuePauseWork(int batch) {
    auto value = runScalar(
        m_db, m_prepared->pauseWork,
        QStringLiteral("SELECT changed FROM outbox_pause_continue(NULL, NULL, ?::integer)"),
        {std::clamp(batch, 1, 100000)}, QStringLiteral("holding or releasing paused events"));
    if (!value)
        return value.error();
    return value->toLongLong();
}

core::Result<std::optional<core::Millis>> OutboxStore::timeUntilNextDue(const QString &nameSpace,
                                                                        core::Ordering ordering) {
    const bool byNamespace = !nameSpace.isEmpty();
    const bool ordered = ordering == core::Ordering::Aggregate;
    QVariantList values;
    if (byNamespace) // once per range read
        values = ordered ? QVariantList{nameSpace} : QVariantList{nameSpace, nameSpace};
    auto value = runScalar(m_db, m_prepared->nextDue[byNamespace][ordered],
                           nextDueSql(byNamespace, ordering), values,
                           QStringLiteral("finding the next due event"));
    if (!value.ok()) {
        return value.error();
    }
    if (value->isNull()) {
        return std::optional<core::Millis>();
    }
    return std::optional(core::Millis(std::max<qint64>(value->toLongLong(), 0)));
}

core::Result<QString> OutboxStore::claimFloor(const QString &nameSpace, core::Millis margin,
                                              const QList<ClaimRoute> &routes,
                                              const QString &from) {
    const bool byNamespace = !nameSpace.isEmpty();
    QVariantList values = withNamespace({qint64(std::max<qint64>(margin.count(), 0))}, nameSpace);
    const int count = int(routes.size());
    if (count > 0) {
        values.prepend(routesJson(routes));
        values.append(from.isEmpty() ? QStringLiteral("-infinity") : from);
    }
    auto value = runScalar(
        m_db,
        count > 0 ? m_prepared->routedFloor[byNamespace][count] : m_prepared->floor[byNamespace],
        claimFloorStatement(byNamespace, count), values, QStringLiteral("finding the claim floor"));
    if (!value.ok()) {
        return value.error();
    }
    return value->isNull() ? QString() : value->toString();
}

} // namespace outbox::store
