#include "store/operations.h"

#include "store/database.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QStringList>
#include <QSysInfo>
#include <QThread>
#include <QVariant>

#include <algorithm>
#include <cmath>

Q_LOGGING_CATEGORY(lcOperations, "outbox.store.operations")

namespace outbox::store {

namespace {

using core::ErrorKind;

// The states an action may touch. Constants from a closed set, not user
// values: written into the SQL text so that the planner can match the
// partial indexes (outbox_events_dead_idx, ...) whatever the plan cache does.
QList<const char *> statesOf(Action action) {
    switch (action) {
    case Action::RetryNow:
        return {"pending"};
    case Action::Requeue:
        return {"dead"};
    case Action::Cancel:
        return {"pending", "dead"};
    case Action::Purge:
    case Action::Replay:
        return {"delivered", "dead"};
    }
    return {};
}

// "('a', 'b')"
QString allowedStates(Action action) {
    QStringList quoted;
    for (const char *state : statesOf(action))
        quoted << QLatin1Char('\'') + QLatin1String(state) + QLatin1Char('\'');
    return QLatin1Char('(') + quoted.join(QLatin1String(", ")) + QLatin1Char(')');
}

// `columns` of the rows matching `where` + `extra`, one SELECT per allowed
// state joined with UNION ALL: each reads its own partial index in key order,
// where "status IN (a, b)" would make the planner scan the whole table.
// Parameters: the values of `where` + `extra`, once per state.
QString perState(Action action, const QString &columns, const QString &where,
                 const QString &extra) {
    QStringList parts;
    for (const char *state : statesOf(action))
        parts << QLatin1String("(SELECT ") + columns +
                     QLatin1String(" FROM outbox_events e WHERE ") + where +
                     QLatin1String(" AND e.status = '") + QLatin1String(state) + QLatin1Char('\'') +
                     extra + QLatin1Char(')');
    return parts.join(QLatin1String(" UNION ALL "));
}

QVariantList perStateValues(Action action, const QVariantList &values) {
    QVariantList all;
    for (qsizetype i = 0; i < statesOf(action).size(); ++i)
        all << values;
    return all;
}

bool wakesDispatchers(Action action) {
    return action == Action::Requeue || action == Action::RetryNow || action == Action::Replay;
}

QVariant nullableText(const QString &text) {
    return text.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(text);
}

QString uuidArray(const QStringList &ids) {
    return QLatin1Char('{') + ids.join(QLatin1Char(',')) + QLatin1Char('}');
}

// One batch boundary: the key of the last row of a batch in the snapshot
// taken at the start, and its position there. Keys are kept as PostgreSQL
// text so that created_at keeps its microseconds (QDateTime has only ms).
struct WindowEnd {
    QString createdAt;
    QString id;
    qint64 position = 0;
};

struct Plan {
    qint64 matched = 0;
    qint64 target = 0;  // matched, capped by the limit
    QString startedAt;  // rows changed after this are left alone (skipped)
    QString cancelText; // cancel: the last_error to write
    WindowEnd first;    // the first row: where the first batch starts (inclusive)
    QList<WindowEnd> windows;
    QList<QUuid> sample;
};

struct BatchOutcome {
    qint64 auditId = 0;
    qint64 changed = 0;
    QList<QUuid> changedIds;
    QList<QUuid> createdIds;
};

core::Result<void> validate(const BulkOptions &options) {
    if (options.batchSize < 1)
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("batch size must be at least 1 (got %1)").arg(options.batchSize)};
    if (options.limit < -1)
        return core::Error{ErrorKind::Invalid,
                           QStringLiteral("limit must be -1 (no limit) or a row count (got %1)")
                               .arg(options.limit)};
    if (!std::isfinite(options.ratePerSecond) || options.ratePerSecond < 0)
        return core::Error{ErrorKind::Invalid,
                           QStringLiteral("rate must be 0 (unthrottled) or a positive number of "
                                          "rows per second (got %1)")
                               .arg(options.ratePerSecond)};
    if (options.sampleSize < 0)
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("sample size must not be negative (got %1)").arg(options.sampleSize)};
    return {};
}

// Rows per transaction: with a throttle, no more than about one second's
// worth, so that the pauses stay short and a cancel is noticed soon.
int effectiveBatchSize(const BulkOptions &options) {
    if (options.ratePerSecond <= 0)
        return options.batchSize;
    const double perSecond = std::ceil(options.ratePerSecond);
    return perSecond >= options.batchSize ? options.batchSize : std::max(1, int(perSecond));
}

QString cancelMessage(const QString &dbUser, const Actor &actor, const QString &reason) {
    QString who = dbUser;
    if (!actor.osUser.isEmpty())
        who += QLatin1Char('/') + actor.osUser;
    if (!actor.host.isEmpty())
        who += QLatin1Char('@') + actor.host;
    QString text = QLatin1String("cancelled by ") + who;
    if (!reason.trimmed().isEmpty())
        text += QLatin1String(": ") + reason.trimmed();
    return text;
}

QString auditFilterText(const EventFilter &filter, const BulkOptions &options) {
    QString text = filter.describe();
    if (options.limit >= 0)
        text += QStringLiteral(" limit=%1").arg(options.limit);
    if (!options.reason.trimmed().isEmpty())
        text += QLatin1String(" reason: ") + options.reason.trimmed();
    return text;
}

// The SQL that changes one batch of locked ids and records them in
// outbox_audit_events in the same statement. Parameters, in text order:
// cancel's message, the id array, the audit id (twice for replay).
QString changeSql(Action action) {
    const QString guard =
        QLatin1String(" WHERE id = ANY(?::uuid[]) AND status IN ") + allowedStates(action);
    QString change;
    switch (action) {
    case Action::RetryNow:
        // least(): a row that is already overdue keeps its place.
        change = QLatin1String("UPDATE outbox_events SET next_attempt_at = "
                               "least(next_attempt_at, now()), updated_at = now()") +
                 guard + QLatin1String(" RETURNING id");
        break;
    case Action::Requeue:
        // last_error stays: the operator (and the next failure) can still see
        // why the event died; outbox_attempts keeps the full history anyway.
        change = QLatin1String("UPDATE outbox_events SET status = 'pending', attempts = 0, "
                               "next_attempt_at = now(), locked_by = NULL, locked_until = NULL, "
                               "updated_at = now()") +
                 guard + QLatin1String(" RETURNING id");
        break;
    case Action::Cancel:
        // The earlier failures stay in outbox_attempts.
        change = QLatin1String("UPDATE outbox_events SET status = 'dead', last_error = ?, "
                               "locked_by = NULL, locked_until = NULL, updated_at = now()") +
                 guard + QLatin1String(" RETURNING id");
        break;
    case Action::Purge:
        // outbox_attempts rows go with ON DELETE CASCADE; the audit trail stays.
        change =
            QLatin1String("DELETE FROM outbox_events") + guard + QLatin1String(" RETURNING id");
        break;
    case Action::Replay:
        // A new event, not a reset of the old one: the original keeps its
        // delivery record. dedupe_key is NULL because the original still holds
        // the key and the unique index would refuse the copy; replay_of links
        // the two instead.
        return QLatin1String(
                   "WITH created AS ("
                   " INSERT INTO outbox_events (id, namespace, topic, aggregate_type, aggregate_id,"
                   "  tenant_id, dedupe_key, payload, status, replay_of)"
                   " SELECT outbox_uuid_v7(), s.namespace, s.topic, s.aggregate_type,"
                   "  s.aggregate_id, s.tenant_id, NULL, s.payload, 'pending', s.id"
                   " FROM outbox_events s WHERE s.id = ANY(?::uuid[]) AND s.status IN ") +
               allowedStates(action) +
               QLatin1String(" ORDER BY s.created_at, s.id"
                             " RETURNING id, replay_of),"
                             " logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)"
                             "  SELECT ?::bigint, id FROM created UNION ALL SELECT ?::bigint, "
                             "replay_of FROM created)"
                             " SELECT id::text, replay_of::text FROM created");
    }
    return QLatin1String("WITH changed AS (") + change +
           QLatin1String("), logged AS (INSERT INTO outbox_audit_events (audit_id, event_id)"
                         " SELECT ?::bigint, id FROM changed) SELECT id::text FROM changed");
}

// One run of an action: a snapshot of what matches at the start, then one
// transaction per window of that snapshot.
class BulkRun final {
public:
    BulkRun(QSqlDatabase db, Action action, const EventFilter &filter, const BulkOptions &options,
            const Actor &actor)
        : m_db(std::move(db))
        , m_action(action)
        , m_filter(filter)
        , m_options(options)
        , m_actor(actor)
        , m_name(actionName(action))
        , m_batchSize(effectiveBatchSize(options)) {
        // olderThan is pinned to the start (see plan()): otherwise rows would
        // keep crossing the age line while a long purge runs.
        EventFilter pinned = filter;
        pinned.olderThan.reset();
        const SqlCondition base = toSqlCondition(pinned, QStringLiteral("e"));
        m_where = base.sql;
        m_whereValues = base.values;
    }
    Q_DISABLE_COPY_MOVE(BulkRun)

    const QString &name() const { return m_name; }
    const Plan &plan() const { return m_plan; }

    // One consistent snapshot: what matches now, where each batch ends, and
    // the moment after which a row counts as "moved meanwhile".
    core::Result<void> makePlan() {
        const QString context = QStringLiteral("%1: selecting the events").arg(m_name);
        auto planned = inTransaction(m_db, context, [&]() -> core::Result<Plan> {
            auto iso = exec(
                m_db, QStringLiteral("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
                {}, context);
            if (!iso)
                return iso.error();
            return planInSnapshot(context);
        });
        if (!planned)
            return planned.error();
        m_plan = std::move(planned).value();
        return {};
    }

    core::Result<qint64> insertAudit(const QString &context) {
        auto inserted =
            exec(m_db,
                 QStringLiteral("INSERT INTO outbox_audit (os_user, host, application,"
                                " action, filter) VALUES (?, ?, ?, ?, ?) RETURNING id"),
                 {nullableText(m_actor.osUser), nullableText(m_actor.host),
                  nullableText(m_actor.application), m_name, auditFilterText(m_filter, m_options)},
                 context);
        if (!inserted)
            return inserted.error();
        if (!inserted->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no audit id")};
        return inserted->value(0).toLongLong();
    }

    // How many rows of window `w` matched at the start.
    qint64 windowRows(qsizetype w) const {
        return m_plan.windows.at(w).position - (w > 0 ? m_plan.windows.at(w - 1).position : 0);
    }

    // Locks what is left of window `w` and changes it, in one transaction
    // with the audit bookkeeping. auditId 0: create the audit row first, so
    // that an action that fails at once leaves no audit row claiming otherwise.
    core::Result<BatchOutcome> runBatch(qsizetype w, qint64 auditId) {
        const QString context = QStringLiteral("%1: changing a batch of events").arg(m_name);
        return inTransaction(m_db, context, [&]() -> core::Result<BatchOutcome> {
            BatchOutcome outcome;
            outcome.auditId = auditId;
            if (outcome.auditId == 0) {
                const auto audit = insertAudit(context);
                if (!audit)
                    return audit.error();
                outcome.auditId = audit.value();
            }
            auto ids = lockWindow(w, context);
            if (!ids)
                return ids.error();
            if (!ids->isEmpty()) {
                if (auto changed = change(ids.value(), outcome, context); !changed)
                    return changed.error();
            }
            const qint64 skipped = std::max<qint64>(0, windowRows(w) - outcome.changed);
            auto counted = exec(m_db,
                                QStringLiteral("UPDATE outbox_audit SET affected = affected + ?,"
                                               " skipped = skipped + ? WHERE id = ?"),
                                {outcome.changed, skipped, outcome.auditId}, context);
            if (!counted)
                return counted.error();
            if (outcome.changed > 0 && wakesDispatchers(m_action)) {
                // Delivered at commit, and only then: a dispatcher woken
                // earlier would not see the rows yet.
                auto notified = exec(m_db, QStringLiteral("SELECT pg_notify('outbox_events', '')"),
                                     {}, context);
                if (!notified)
                    return notified.error();
            }
            return outcome;
        });
    }

    core::Result<void> finish(qint64 auditId) {
        auto finished =
            exec(m_db, QStringLiteral("UPDATE outbox_audit SET finished_at = now() WHERE id = ?"),
                 {auditId}, QStringLiteral("%1: closing the audit record").arg(m_name));
        if (!finished)
            return finished.error();
        return {};
    }

private:
    core::Result<Plan> planInSnapshot(const QString &context) {
        Plan plan;
        const qint64 olderMs = m_filter.olderThan ? qint64(m_filter.olderThan->count()) : 0;
        auto start = exec(m_db,
                          QStringLiteral("SELECT clock_timestamp()::text,"
                                         " (now() - ?::bigint * interval '1 millisecond')::text,"
                                         " session_user::text"),
                          {olderMs}, context);
        if (!start)
            return start.error();
        if (!start->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no row")};
        plan.startedAt = start->value(0).toString();
        plan.cancelText = cancelMessage(start->value(2).toString(), m_actor, m_options.reason);
        if (m_filter.olderThan) {
            m_where += QLatin1String(" AND e.updated_at < ?::timestamptz");
            m_whereValues << start->value(1).toString();
        }

        auto counted = exec(m_db,
                            QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") + m_where +
                                QLatin1String(" AND e.status IN ") + allowedStates(m_action),
                            m_whereValues, context);
        if (!counted)
            return counted.error();
        if (!counted->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no count")};
        plan.matched = counted->value(0).toLongLong();
        plan.target = m_options.limit >= 0 ? std::min(plan.matched, m_options.limit) : plan.matched;
        if (plan.target == 0)
            return plan;

        const QString keys = perState(m_action, QStringLiteral("e.created_at, e.id"), m_where, {});
        const QVariantList keyValues = perStateValues(m_action, m_whereValues);
        if (m_options.dryRun) {
            auto sample =
                exec(m_db,
                     QLatin1String("SELECT u.id::text FROM (") + keys +
                         QLatin1String(") u ORDER BY u.created_at, u.id LIMIT ?"),
                     QVariantList(keyValues) << std::min<qint64>(plan.target, m_options.sampleSize),
                     context);
            if (!sample)
                return sample.error();
            while (sample->next())
                plan.sample << QUuid::fromString(sample->value(0).toString());
            return plan;
        }

        // The first key, every batchSize-th key and the last one: a batch is
        // then exactly the rows between two keys, and how many of them
        // matched at the start is known, which makes the skipped count exact.
        auto ends =
            exec(m_db,
                 QLatin1String("SELECT m.created_at::text, m.id::text, m.rn FROM ("
                               " SELECT u.created_at, u.id,"
                               "  row_number() OVER (ORDER BY u.created_at, u.id) AS rn"
                               " FROM (") +
                     keys +
                     QLatin1String(") u ORDER BY u.created_at, u.id LIMIT ?) m WHERE"
                                   " m.rn = 1 OR m.rn % ? = 0 OR m.rn = ? ORDER BY m.rn"),
                 QVariantList(keyValues) << plan.target << m_batchSize << plan.target, context);
        if (!ends)
            return ends.error();
        while (ends->next()) {
            const WindowEnd key{ends->value(0).toString(), ends->value(1).toString(),
                                ends->value(2).toLongLong()};
            if (key.position == 1)
                plan.first = key;
            if (key.position % m_batchSize == 0 || key.position == plan.target)
                plan.windows.append(key);
        }
        return plan;
    }

    // The window's ids come from the partial indexes, with both ends of the
    // key range in the index condition (an open range would look big enough
    // to the planner for a table scan); the outer query locks them and
    // re-checks the whole condition on the row version it locks. Rows changed
    // after the start are left alone: they are not the rows that matched.
    core::Result<QStringList> lockWindow(qsizetype w, const QString &context) {
        const QString window =
            QLatin1String(" AND e.updated_at <= ?::timestamptz AND (e.created_at, e.id) ") +
            (w == 0 ? QLatin1String(">=") : QLatin1String(">")) +
            QLatin1String(" (?::timestamptz, ?::uuid)"
                          " AND (e.created_at, e.id) <= (?::timestamptz, ?::uuid)");
        const QString sql =
            QLatin1String("SELECT e.id::text FROM outbox_events e WHERE e.id = ANY(ARRAY(") +
            perState(m_action, QStringLiteral("e.id"), m_where, window) + QLatin1String(")) AND ") +
            m_where + QLatin1String(" AND e.status IN ") + allowedStates(m_action) +
            QLatin1String(" AND e.updated_at <= ?::timestamptz"
                          " ORDER BY e.created_at, e.id FOR UPDATE SKIP LOCKED");
        const WindowEnd &from = w > 0 ? m_plan.windows.at(w - 1) : m_plan.first;
        const WindowEnd &to = m_plan.windows.at(w);
        const QVariantList windowValues = QVariantList(m_whereValues)
                                          << m_plan.startedAt << from.createdAt << from.id
                                          << to.createdAt << to.id;
        auto locked = exec(
            m_db, sql, perStateValues(m_action, windowValues) << m_whereValues << m_plan.startedAt,
            context);
        if (!locked)
            return locked.error();
        QStringList ids;
        while (locked->next())
            ids << locked->value(0).toString();
        return ids;
    }

    core::Result<void> change(const QStringList &ids, BatchOutcome &outcome,
                              const QString &context) {
        // In the order of the placeholders in changeSql().
        QVariantList values;
        if (m_action == Action::Cancel)
            values << m_plan.cancelText;
        values << uuidArray(ids) << outcome.auditId;
        if (m_action == Action::Replay)
            values << outcome.auditId;
        auto changed = exec(m_db, changeSql(m_action), values, context);
        if (!changed)
            return changed.error();
        while (changed->next()) {
            ++outcome.changed;
            if (m_action == Action::Replay) {
                outcome.createdIds << QUuid::fromString(changed->value(0).toString());
                outcome.changedIds << QUuid::fromString(changed->value(1).toString());
            } else {
                outcome.changedIds << QUuid::fromString(changed->value(0).toString());
            }
        }
        return {};
    }

    QSqlDatabase m_db;
    const Action m_action;
    const EventFilter &m_filter;
    const BulkOptions &m_options;
    const Actor &m_actor;
    const QString m_name;
    const int m_batchSize;
    QString m_where; // the filter; the allowed states are added where used
    QVariantList m_whereValues;
    Plan m_plan;
};

} // namespace

Actor Actor::fromEnvironment(const QString &application) {
    Actor actor;
    for (const char *name : {"USER", "LOGNAME", "USERNAME"}) {
        actor.osUser = qEnvironmentVariable(name);
        if (!actor.osUser.isEmpty())
            break;
    }
    actor.host = QSysInfo::machineHostName();
    actor.application = application;
    return actor;
}

QString actionName(Action action) {
    switch (action) {
    case Action::RetryNow:
        return QStringLiteral("retry");
    case Action::Requeue:
        return QStringLiteral("requeue");
    case Action::Cancel:
        return QStringLiteral("cancel");
    case Action::Purge:
        return QStringLiteral("purge");
    case Action::Replay:
        return QStringLiteral("replay");
    }
    return QString();
}

OperatorStore::OperatorStore(QSqlDatabase db, Actor actor)
    : m_db(std::move(db))
    , m_actor(std::move(actor)) {}

core::Result<BulkResult> OperatorStore::run(Action action, const EventFilter &filter,
                                            const BulkOptions &options) {
    if (const auto valid = validate(options); !valid)
        return valid.error();
    BulkRun bulk(m_db, action, filter, options, m_actor);
    if (const auto planned = bulk.makePlan(); !planned)
        return planned.error();
    const Plan &plan = bulk.plan();

    BulkResult result;
    result.action = action;
    result.dryRun = options.dryRun;
    result.matched = plan.matched;
    if (options.dryRun) {
        result.sample = plan.sample;
        return result;
    }

    qint64 done = 0;
    const auto failedAfter = [&](const core::Error &error) {
        return core::Error{error.kind, QStringLiteral("%1 stopped after %2 of %3 events (audit "
                                                      "#%4): %5")
                                           .arg(bulk.name())
                                           .arg(done)
                                           .arg(plan.target)
                                           .arg(result.auditId)
                                           .arg(error.message)};
    };
    QElapsedTimer clock;
    clock.start();
    for (qsizetype w = 0; w < plan.windows.size(); ++w) {
        const auto batch = bulk.runBatch(w, result.auditId);
        if (!batch)
            return failedAfter(batch.error());
        const BatchOutcome &outcome = batch.value();
        result.auditId = outcome.auditId;
        result.changed += outcome.changed;
        result.skipped += std::max<qint64>(0, bulk.windowRows(w) - outcome.changed);
        done += bulk.windowRows(w);
        for (const QUuid &id : outcome.changedIds) {
            if (result.sample.size() < options.sampleSize)
                result.sample << id;
        }
        for (const QUuid &id : outcome.createdIds) {
            if (result.created.size() < options.sampleSize)
                result.created << id;
        }

        const bool more = w + 1 < plan.windows.size();
        if (options.progress && !options.progress(done, plan.target) && more) {
            result.cancelled = true;
            break;
        }
        if (more && options.ratePerSecond > 0) {
            // This code runs on a worker thread (or in a CLI): sleeping is fine.
            const qint64 dueMs = qint64(double(done) * 1000.0 / options.ratePerSecond);
            const qint64 waitMs = dueMs - clock.elapsed();
            if (waitMs > 0)
                QThread::msleep(static_cast<unsigned long>(waitMs));
        }
    }

    if (result.auditId == 0) {
        // Nothing matched: the attempt is still worth a line in the audit log.
        const auto audit =
            bulk.insertAudit(QStringLiteral("%1: writing the audit record").arg(bulk.name()));
        if (!audit)
            return audit.error();
        result.auditId = audit.value();
    }
    if (const auto finished = bulk.finish(result.auditId); !finished)
        return failedAfter(finished.error());

    qCInfo(lcOperations).noquote()
        << bulk.name() << "audit" << result.auditId << "matched" << result.matched << "changed"
        << result.changed << "skipped" << result.skipped << (result.cancelled ? "(cancelled)" : "");
    return result;
}

} // namespace outbox::store
