#include "store/operations.h"

#include "core/enumnames.h"
#include "store/bulkplan.h"
#include "store/database.h"
#include "store/logging.h"
#include "store/session.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QStringList>
#include <QSysInfo>
#include <QThread>
#include <QVariant>

#include <algorithm>
#include <cmath>

namespace outbox::store {

namespace {

using core::ErrorKind;

QVariant nullableText(const QString &text) {
    return text.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(text);
}

QString uuidArray(const QStringList &ids) {
    return QLatin1Char('{') + ids.join(QLatin1Char(',')) + QLatin1Char('}');
}

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
        QLatin1String(" WHERE id = ANY(?::uuid[]) AND status IN ") + statesSql(action);
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
               statesSql(action) +
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

// The outbox_audit row of one run: written with the first batch (or at the
// end when nothing matched), counted per batch, closed at the end.
class AuditRecord final {
public:
    AuditRecord(QSqlDatabase db, Action action, const EventFilter &filter,
                const BulkOptions &options, const Actor &actor)
        : m_db(std::move(db))
        , m_name(actionName(action))
        , m_filter(filter)
        , m_options(options)
        , m_actor(actor) {}
    Q_DISABLE_COPY_MOVE(AuditRecord)

    core::Result<qint64> insert(const QString &context) {
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

    core::Result<void> count(qint64 auditId, qint64 changed, qint64 skipped,
                             const QString &context) {
        auto counted = exec(m_db,
                            QStringLiteral("UPDATE outbox_audit SET affected = affected + ?,"
                                           " skipped = skipped + ? WHERE id = ?"),
                            {changed, skipped, auditId}, context);
        if (!counted)
            return counted.error();
        return {};
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
    QSqlDatabase m_db;
    const QString m_name;
    const EventFilter &m_filter;
    const BulkOptions &m_options;
    const Actor &m_actor;
};

// The second half of a run: one transaction per window of the plan, which
// locks what is left of the window's rows and changes them.
class BatchRunner final {
public:
    BatchRunner(QSqlDatabase db, Action action, const BulkPlan &plan, AuditRecord &audit)
        : m_db(std::move(db))
        , m_action(action)
        , m_name(actionName(action))
        , m_plan(plan)
        , m_audit(audit) {}
    Q_DISABLE_COPY_MOVE(BatchRunner)

    // Locks what is left of window `w` and changes it, in one transaction
    // with the audit bookkeeping. auditId 0: create the audit row first, so
    // that an action that fails at once leaves no audit row claiming otherwise.
    core::Result<BatchOutcome> run(qsizetype w, qint64 auditId) {
        const QString context = QStringLiteral("%1: changing a batch of events").arg(m_name);
        return inTransaction(m_db, context, [&]() -> core::Result<BatchOutcome> {
            BatchOutcome outcome;
            outcome.auditId = auditId;
            if (outcome.auditId == 0) {
                const auto audit = m_audit.insert(context);
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
            const qint64 skipped = std::max<qint64>(0, m_plan.windowRows(w) - outcome.changed);
            if (auto counted = m_audit.count(outcome.auditId, outcome.changed, skipped, context);
                !counted)
                return counted.error();
            if (outcome.changed > 0 && wakesDispatchers(m_action)) {
                // Delivered at commit, and only then: a dispatcher woken
                // earlier would not see the rows yet.
                auto notified = exec(m_db, QStringLiteral("SELECT pg_notify($1, '')"),
                                     {QString(kNotifyChannel)}, context);
                if (!notified)
                    return notified.error();
            }
            return outcome;
        });
    }

private:
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
            perState(m_action, QStringLiteral("e.id"), m_plan.where, window) +
            QLatin1String(")) AND ") + m_plan.where + QLatin1String(" AND e.status IN ") +
            statesSql(m_action) +
            QLatin1String(" AND e.updated_at <= ?::timestamptz"
                          " ORDER BY e.created_at, e.id FOR UPDATE SKIP LOCKED");
        const WindowEnd &from = w > 0 ? m_plan.windows.at(w - 1) : m_plan.first;
        const WindowEnd &to = m_plan.windows.at(w);
        const QVariantList windowValues = QVariantList(m_plan.whereValues)
                                          << m_plan.startedAt << from.createdAt << from.id
                                          << to.createdAt << to.id;
        auto locked =
            exec(m_db, sql,
                 perStateValues(m_action, windowValues) << m_plan.whereValues << m_plan.startedAt,
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
    const QString m_name;
    const BulkPlan &m_plan;
    AuditRecord &m_audit;
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

QList<core::Status> allowedStates(Action action) {
    switch (action) {
    case Action::RetryNow:
        return {core::Status::Pending};
    case Action::Requeue:
        return {core::Status::Dead};
    case Action::Cancel:
        return {core::Status::Pending, core::Status::Dead};
    case Action::Purge:
    case Action::Replay:
        return {core::Status::Delivered, core::Status::Dead};
    }
    return {};
}

bool wakesDispatchers(Action action) {
    return action == Action::Requeue || action == Action::RetryNow || action == Action::Replay;
}

constexpr core::EnumName<Action> kActionNames[] = {{Action::RetryNow, "retry"},
                                                   {Action::Requeue, "requeue"},
                                                   {Action::Cancel, "cancel"},
                                                   {Action::Purge, "purge"},
                                                   {Action::Replay, "replay"}};

QString actionName(Action action) {
    return core::nameOf(kActionNames, action);
}

OperatorStore::OperatorStore(Session &session, Actor actor)
    : OperatorStore(session.database(), std::move(actor)) {}

OperatorStore::OperatorStore(QSqlDatabase db, Actor actor)
    : m_db(std::move(db))
    , m_actor(std::move(actor)) {}

core::Result<BulkResult> OperatorStore::run(Action action, const EventFilter &filter,
                                            const BulkOptions &options) {
    if (const auto valid = validate(options); !valid)
        return valid.error();
    const auto planned =
        planBulk(m_db, action, filter, options, m_actor, effectiveBatchSize(options));
    if (!planned)
        return planned.error();
    const BulkPlan &plan = planned.value();
    const QString name = actionName(action);

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
                                           .arg(name)
                                           .arg(done)
                                           .arg(plan.target)
                                           .arg(result.auditId)
                                           .arg(error.message)};
    };
    AuditRecord audit(m_db, action, filter, options, m_actor);
    BatchRunner batches(m_db, action, plan, audit);
    QElapsedTimer clock;
    clock.start();
    for (qsizetype w = 0; w < plan.windows.size(); ++w) {
        const auto batch = batches.run(w, result.auditId);
        if (!batch)
            return failedAfter(batch.error());
        const BatchOutcome &outcome = batch.value();
        result.auditId = outcome.auditId;
        result.changed += outcome.changed;
        result.skipped += std::max<qint64>(0, plan.windowRows(w) - outcome.changed);
        done += plan.windowRows(w);
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
        const auto inserted =
            audit.insert(QStringLiteral("%1: writing the audit record").arg(name));
        if (!inserted)
            return inserted.error();
        result.auditId = inserted.value();
    }
    if (const auto finished = audit.finish(result.auditId); !finished)
        return failedAfter(finished.error());

    qCInfo(lcStore).noquote() << name << "audit" << result.auditId << "matched" << result.matched
                              << "changed" << result.changed << "skipped" << result.skipped
                              << (result.cancelled ? "(cancelled)" : "");
    return result;
}

} // namespace outbox::store
