#include "store/queries.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/errorgroups.h"
#include "store/livecounts.h"
#include "store/migrator.h"
#include "store/pausestore.h"
#include "store/session.h"

#include <QSqlDriver>
#include <QSqlError>
#include <QSqlField>
#include <QSqlQuery>
#include <QStringList>
#include <QVariant>

namespace outbox::store {

namespace {

using core::ErrorKind;

QString msOf(const QString &column) {
    return epochMsSql(column);
}

QDateTime timeFrom(const QVariant &value) {
    return timeFromEpochMs(value);
}

std::optional<QString> optionalText(const QVariant &value) {
    if (value.isNull())
        return std::nullopt;
    return value.toString();
}

std::optional<QUuid> optionalUuid(const QVariant &value) {
    if (value.isNull())
        return std::nullopt;
    return QUuid::fromString(value.toString());
}

// The columns of core::OutboxEvent, in the order readEvent() expects.
QString eventColumns(const QString &alias) {
    const QString p = alias + QLatin1Char('.');
    const QStringList columns = {
        p + QLatin1String("id::text"),
        p + QLatin1String("namespace"),
        p + QLatin1String("topic"),
        p + QLatin1String("aggregate_type"),
        p + QLatin1String("aggregate_id"),
        p + QLatin1String("tenant_id::text"),
        p + QLatin1String("dedupe_key"),
        p + QLatin1String("payload::text"),
        p + QLatin1String("status"),
        p + QLatin1String("attempts"),
        msOf(p + QLatin1String("next_attempt_at")),
        p + QLatin1String("locked_by::text"),
        msOf(p + QLatin1String("locked_until")),
        p + QLatin1String("last_error"),
        msOf(p + QLatin1String("delivered_at")),
        msOf(p + QLatin1String("created_at")),
        msOf(p + QLatin1String("updated_at")),
        p + QLatin1String("replay_of::text"),
        p + QLatin1String("max_attempts"),
        p + QLatin1String("traceparent"),
        p + QLatin1String("tracestate"),
    };
    return columns.join(QLatin1String(", "));
}
constexpr int kEventColumnCount = 21;

core::OutboxEvent readEvent(const QSqlQuery &query) {
    core::OutboxEvent event;
    event.id = QUuid::fromString(query.value(0).toString());
    event.nameSpace = query.value(1).toString();
    event.topic = query.value(2).toString();
    event.aggregateType = optionalText(query.value(3));
    event.aggregateId = optionalText(query.value(4));
    event.tenantId = optionalUuid(query.value(5));
    event.dedupeKey = optionalText(query.value(6));
    event.payload = query.value(7).toString().toUtf8();
    // The CHECK constraint allows only the four names.
    event.status = core::statusFromName(query.value(8).toString()).value_or(core::Status::Pending);
    event.attempts = query.value(9).toInt();
    event.nextAttemptAt = timeFrom(query.value(10));
    event.lockedBy = optionalUuid(query.value(11));
    event.lockedUntil = timeFrom(query.value(12));
    event.lastError = optionalText(query.value(13));
    event.deliveredAt = timeFrom(query.value(14));
    event.createdAt = timeFrom(query.value(15));
    event.updatedAt = timeFrom(query.value(16));
    event.replayOf = optionalUuid(query.value(17));
    if (!query.value(18).isNull())
        event.maxAttempts = query.value(18).toInt();
    event.traceparent = optionalText(query.value(19));
    event.tracestate = optionalText(query.value(20));
    return event;
}

// The columns of core::AuditRecord, in the order readAudit() expects.
QString auditColumns(const QString &alias) {
    const QString p = alias + QLatin1Char('.');
    const QStringList columns = {
        p + QLatin1String("id"),      msOf(p + QLatin1String("at")), p + QLatin1String("db_user"),
        p + QLatin1String("os_user"), p + QLatin1String("host"),     p + QLatin1String("action"),
        p + QLatin1String("filter"),  p + QLatin1String("affected"), p + QLatin1String("skipped"),
    };
    return columns.join(QLatin1String(", "));
}

core::AuditRecord readAudit(const QSqlQuery &query) {
    core::AuditRecord record;
    record.id = query.value(0).toLongLong();
    record.at = timeFrom(query.value(1));
    record.dbUser = query.value(2).toString();
    record.osUser = query.value(3).toString();
    record.host = query.value(4).toString();
    record.action = query.value(5).toString();
    record.filter = query.value(6).toString();
    record.affected = query.value(7).toLongLong();
    record.skipped = query.value(8).toLongLong();
    return record;
}

Page readPage(QSqlQuery &query, int limit) {
    Page page;
    while (query.next()) {
        if (page.rows.size() == limit) {
            const core::OutboxEvent &last = page.rows.constLast();
            page.next = PageCursor{last.createdAt, last.id};
            break;
        }
        page.rows << readEvent(query);
    }
    return page;
}

// A read-only transaction with one snapshot, so that the numbers shown
// together were true at the same moment.
core::Result<void> beginSnapshot(QSqlDatabase db, const QString &context) {
    auto set =
        exec(db, QStringLiteral("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"), {},
             context);
    if (!set)
        return set.error();
    return {};
}

struct PageSql {
    QString sql;
    QVariantList values;
};

// One SELECT of the page: the filter, the branch's condition, the keyset
// condition and the order. The branch's condition in the text lets the
// planner use the matching partial index, which yields rows already in key
// order.
PageSql pageBranch(const PageRequest &request, const QString &branch, int fetch) {
    const SqlCondition condition = toSqlCondition(request.filter, QStringLiteral("e"));
    const bool newestFirst = request.order == SortOrder::NewestFirst;
    PageSql part;
    part.sql = QLatin1String("SELECT ") + eventColumns(QStringLiteral("e")) +
               QLatin1String(", e.created_at AS k_at, e.id AS k_id FROM outbox_events e WHERE ") +
               condition.sql + QLatin1String(" AND ") + branch;
    part.values = condition.values;
    if (request.after) {
        // The cursor's QDateTime has only milliseconds; the row it came from
        // has the exact created_at. If that row is gone, the millisecond value
        // is widened so that nothing is skipped (a repeat is possible then).
        part.sql +=
            QLatin1String(" AND (e.created_at, e.id) ") +
            (newestFirst ? QLatin1String("<") : QLatin1String(">")) +
            QLatin1String(" (coalesce((SELECT c.created_at FROM outbox_events c"
                          " WHERE c.id = ?::uuid), ?::timestamptz") +
            (newestFirst ? QLatin1String(" + interval '999 microseconds'") : QLatin1String("")) +
            QLatin1String("), ?::uuid)");
        const QString id = core::uuidText(request.after->id);
        part.values << id << request.after->createdAt << id;
    }
    part.sql += newestFirst ? QLatin1String(" ORDER BY e.created_at DESC, e.id DESC")
                            : QLatin1String(" ORDER BY e.created_at, e.id");
    part.sql += QLatin1String(" LIMIT ?");
    part.values << fetch;
    return part;
}

PageSql pageSql(const PageRequest &request) {
    const int fetch = request.limit + 1; // one more tells whether a next page exists
    const EventFilter &f = request.filter;
    // One branch per partial index the rows can be in, merged. Without this
    // the planner would read the whole table and sort it for every page.
    const QStringList branches =
        createdOrderBranches(f.status, f.retrying.has_value(), QStringLiteral("e."));
    if (branches.size() == 1)
        return pageBranch(request, branches.first(), fetch);
    PageSql merged;
    QStringList parts;
    for (const QString &branch : branches) {
        const PageSql part = pageBranch(request, branch, fetch);
        parts << QLatin1Char('(') + part.sql + QLatin1Char(')');
        merged.values << part.values;
    }
    const bool newestFirst = request.order == SortOrder::NewestFirst;
    merged.sql = QLatin1String("SELECT * FROM (") + parts.join(QLatin1String(" UNION ALL ")) +
                 QLatin1String(") u") +
                 (newestFirst ? QLatin1String(" ORDER BY u.k_at DESC, u.k_id DESC")
                              : QLatin1String(" ORDER BY u.k_at, u.k_id")) +
                 QLatin1String(" LIMIT ?");
    merged.values << fetch;
    return merged;
}

} // namespace

EventQueries::EventQueries(Session &session)
    : EventQueries(session.database()) {}

EventQueries::EventQueries(QSqlDatabase db)
    : m_db(std::move(db)) {}

core::Result<QDateTime> EventQueries::serverNow() {
    const QString context = QStringLiteral("reading the server clock");
    auto query = execOneRow(m_db, QStringLiteral("SELECT clock_timestamp()"), {}, context);
    if (!query)
        return query.error();
    return query->value(0).toDateTime();
}

core::Result<StatusCounts> EventQueries::counts(qint64 exactDeliveredCap) {
    const QString context = QStringLiteral("counting events");
    if (exactDeliveredCap < 0)
        return core::Error{ErrorKind::Invalid,
                           QStringLiteral("the exact delivered count cap must not be negative "
                                          "(got %1)")
                               .arg(exactDeliveredCap)};
    return inTransaction(m_db, context, [&]() -> core::Result<StatusCounts> {
        if (auto begun = beginSnapshot(m_db, context); !begun)
            return begun.error();
        // Each count reads one small partial index; delivered stops after
        // cap + 1 rows, so it costs at most that much however big the table.
        auto totals = execOneRow(
            m_db,
            liveCountsSql() +
                QLatin1String(" (SELECT count(*) FROM outbox_events WHERE status = 'dead'),") +
                cappedDeliveredSql() + msOf(oldestPendingSql()) + QLatin1String(", ") +
                msOf(QStringLiteral("now()")) + QLatin1String(", ") + msOf(oldestDueSql()),
            {exactDeliveredCap + 1}, context);
        if (!totals)
            return totals.error();
        StatusCounts counts;
        readStatusColumns(totals.value(), exactDeliveredCap, counts);
        counts.dead = totals->value(4).toLongLong();
        counts.oldestPendingAt = timeFrom(totals->value(7));
        counts.serverTime = timeFrom(totals->value(8));
        counts.oldestDueAt = timeFrom(totals->value(9));

        if (auto counted = countBreakdown(m_db, context, counts); !counted)
            return counted.error();
        return counts;
    });
}

core::Result<Page> EventQueries::page(const PageRequest &request) {
    if (request.limit < 1)
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("page size must be at least 1 (got %1)").arg(request.limit)};
    if (request.after && (request.after->id.isNull() || !request.after->createdAt.isValid()))
        return core::Error{ErrorKind::Invalid,
                           QStringLiteral("page cursor needs both created_at and id; pass the "
                                          "`next` of the previous page")};
    const PageSql statement = pageSql(request);
    const QString context = QStringLiteral("reading events");
    if (request.timeout && request.timeout->count() > 0) {
        // The limit holds for this transaction only; a cancelled statement
        // is an answer ("stopped"), not an error. Reading only: roll back.
        if (!m_db.transaction())
            return toError(m_db.lastError(), context);
        auto limited = exec(
            m_db, QStringLiteral("SET LOCAL statement_timeout = %1").arg(request.timeout->count()),
            {}, context);
        if (!limited) {
            m_db.rollback();
            return limited.error();
        }
        QSqlQuery query(m_db);
        bool ran = query.prepare(statement.sql);
        for (qsizetype i = 0; ran && i < statement.values.size(); ++i)
            query.bindValue(int(i), statement.values.at(i));
        ran = ran && query.exec();
        const QSqlError error = query.lastError();
        Page page = ran ? readPage(query, request.limit) : Page{};
        query.finish();
        m_db.rollback();
        if (ran)
            return page;
        if (error.nativeErrorCode() == QLatin1String("57014")) // query_canceled
            return Page{{}, std::nullopt, request.timeout};
        return toError(error, context);
    }
    auto query = exec(m_db, statement.sql, statement.values, context);
    if (!query)
        return query.error();
    return readPage(query.value(), request.limit);
}

core::Result<QString> EventQueries::explainPage(const PageRequest &request) {
    // EXPLAIN cannot be prepared, so the statement is prepared by name and
    // explained on execution: the plan is the one page() gets.
    const QString context = QStringLiteral("explaining a page query");
    if (request.limit < 1)
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("page size must be at least 1 (got %1)").arg(request.limit)};
    const PageSql statement = pageSql(request);
    QString numbered;
    int marker = 0;
    bool inQuote = false;
    for (const QChar c : statement.sql) {
        if (c == QLatin1Char('\''))
            inQuote = !inQuote;
        if (c == QLatin1Char('?') && !inQuote)
            numbered += QLatin1Char('$') + QString::number(++marker);
        else
            numbered += c;
    }
    QStringList literals;
    for (const QVariant &value : statement.values) {
        QSqlField field(QString(), value.metaType());
        field.setValue(value);
        literals << m_db.driver()->formatValue(field);
    }
    auto prepared =
        exec(m_db, QLatin1String("PREPARE outbox_explain_page AS ") + numbered, {}, context);
    if (!prepared)
        return prepared.error();
    auto plan = exec(m_db,
                     QLatin1String("EXPLAIN (COSTS OFF) EXECUTE outbox_explain_page(") +
                         literals.join(QLatin1String(", ")) + QLatin1Char(')'),
                     {}, context);
    const auto dropped = exec(m_db, QStringLiteral("DEALLOCATE outbox_explain_page"), {}, context);
    if (!plan)
        return plan.error();
    if (!dropped)
        return dropped.error();
    QStringList lines;
    while (plan->next())
        lines << plan->value(0).toString();
    return lines.join(QLatin1Char('\n'));
}

core::Result<std::optional<EventDetail>> EventQueries::detail(const QUuid &id) {
    const QString context = QStringLiteral("reading the event's history");
    const QString idText = core::uuidText(id);
    return inTransaction(m_db, context, [&]() -> core::Result<std::optional<EventDetail>> {
        if (auto begun = beginSnapshot(m_db, context); !begun)
            return begun.error();
        EventDetail detail;
        auto row = exec(m_db,
                        QLatin1String("SELECT ") + eventColumns(QStringLiteral("e")) +
                            QLatin1String(", ") + msOf(QStringLiteral("now()")) +
                            QLatin1String(" FROM outbox_events e WHERE e.id = ?::uuid"),
                        {idText}, context);
        if (!row)
            return row.error();
        if (!row->next())
            return std::optional<EventDetail>();
        detail.event = readEvent(row.value());
        detail.serverTime = timeFrom(row->value(kEventColumnCount));

        auto attempts =
            exec(m_db,
                 QLatin1String("SELECT attempt, ") + msOf(QStringLiteral("attempted_at")) +
                     QLatin1String(", worker_id::text, http_status, duration_ms, error"
                                   " FROM outbox_attempts WHERE event_id = ?::uuid"
                                   " ORDER BY id"),
                 {idText}, context);
        if (!attempts)
            return attempts.error();
        while (attempts->next()) {
            core::AttemptRecord record;
            record.eventId = id;
            record.attempt = attempts->value(0).toInt();
            record.at = timeFrom(attempts->value(1));
            record.workerId = optionalUuid(attempts->value(2));
            if (!attempts->value(3).isNull())
                record.httpStatus = attempts->value(3).toInt();
            record.durationMs = attempts->value(4).toLongLong();
            record.error = attempts->value(5).toString();
            detail.attempts << record;
        }

        auto auditRows = exec(m_db,
                              QLatin1String("SELECT ") + auditColumns(QStringLiteral("a")) +
                                  QLatin1String(" FROM outbox_audit a"
                                                " JOIN outbox_audit_events ae ON ae.audit_id = a.id"
                                                " WHERE ae.event_id = ?::uuid ORDER BY a.at, a.id"),
                              {idText}, context);
        auto audit = readRows(std::move(auditRows), readAudit);
        if (!audit)
            return audit.error();
        detail.audit = std::move(audit).value();

        auto replays = exec(m_db,
                            QStringLiteral("SELECT id::text FROM outbox_events WHERE replay_of = "
                                           "?::uuid ORDER BY created_at, id"),
                            {idText}, context);
        if (!replays)
            return replays.error();
        while (replays->next())
            detail.replays << QUuid::fromString(replays->value(0).toString());

        auto blocker = readAggregateBlocker(m_db, detail.event, context);
        if (!blocker)
            return blocker.error();
        detail.blockedBy = blocker.value();
        return std::optional<EventDetail>(detail);
    });
}

core::Result<ErrorGroupSet> EventQueries::errorGroups(const EventFilter &filter, int limit,
                                                      int sample) {
    return groupErrors(m_db, filter, limit, sample);
}

core::Result<Privileges> EventQueries::privileges() {
    const QString context = QStringLiteral("checking privileges");
    auto present = execOneRow(
        m_db, QStringLiteral("SELECT to_regclass('outbox_events') IS NOT NULL"), {}, context);
    if (!present)
        return present.error();
    if (!present->value(0).toBool())
        return core::Error{ErrorKind::Invalid,
                           QStringLiteral("this database has no outbox schema: run `outboxctl "
                                          "migrate`")};
    // A list of privileges in one has_*_privilege call means "any of them";
    // each one is checked on its own here. The dispatcher role has column
    // grants only, which has_table_privilege('UPDATE') does not see.
    const QString sql =
        QStringLiteral("SELECT"
                       " has_table_privilege('outbox_events', 'SELECT'),"
                       // Operators act through the outbox_op_* functions only.
                       " coalesce(has_function_privilege(to_regprocedure("
                       "  'outbox_op_begin(text, text, text, text, text, bigint)')::oid,"
                       "  'EXECUTE'), false),"
                       " has_column_privilege('outbox_events', 'status', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'attempts', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'next_attempt_at', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'locked_by', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'locked_until', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'last_error', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'delivered_at', 'UPDATE')"
                       "  AND has_column_privilege('outbox_events', 'updated_at', 'UPDATE')"
                       "  AND has_table_privilege('outbox_attempts', 'INSERT'),"
                       // The signature of sql/014, else the one before it.
                       " coalesce(has_function_privilege(to_regprocedure('outbox_enqueue(text, "
                       "  text, jsonb, text, uuid, text, text, integer, text, text)')::oid,"
                       "  'EXECUTE'), has_function_privilege(to_regprocedure('outbox_enqueue("
                       "  text, text, jsonb, text, uuid, text, text)')::oid, 'EXECUTE'), false)");
    auto query = execOneRow(m_db, sql, {}, context);
    if (!query)
        return query.error();
    Privileges privileges;
    privileges.canRead = query->value(0).toBool();
    // Every write path reads the rows it changes.
    privileges.canOperate = privileges.canRead && query->value(1).toBool();
    privileges.canDispatch = privileges.canRead && query->value(2).toBool();
    privileges.canEnqueue = query->value(3).toBool();
    return privileges;
}

core::Result<ServerInfo> EventQueries::serverInfo() {
    const QString context = QStringLiteral("reading server information");
    auto query =
        execOneRow(m_db,
                   QStringLiteral("SELECT current_setting('server_version'), current_database(),"
                                  " current_user,"
                                  " coalesce(host(inet_server_addr()) || ':' || inet_server_port(),"
                                  "  'local socket')"),
                   {}, context);
    if (!query)
        return query.error();
    ServerInfo info;
    info.version = query->value(0).toString();
    info.database = query->value(1).toString();
    info.user = query->value(2).toString();
    info.host = query->value(3).toString();
    const auto version = Migrator(m_db).currentVersion();
    if (!version)
        return version.error();
    info.schemaVersion = version.value();
    return info;
}

} // namespace outbox::store
