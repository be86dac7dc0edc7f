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
#include <pwd.h>
#include <unistd.h>

namespace outbox::store {

namespace {

using core::ErrorKind;

QVariant nullableText(const QString &text) {
    return text.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(text);
}

// The name of the account this process runs as, or its uid when the
// account has no name (a container's arbitrary uid).
QString processAccount() {
    const uid_t uid = ::getuid();
    if (const passwd *entry = ::getpwuid(uid); entry && entry->pw_name && *entry->pw_name)
        return QString::fromLocal8Bit(entry->pw_name);
    return QStringLiteral("uid %1").arg(uid);
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

// The audit takes plain text of a bounded length (outbox_plain_text() in
// sql/012_hardening.sql): control characters are written as \uXXXX, and a
// longer text is cut (the audit names every event it touched anyway).
QString auditText(const QString &text, qsizetype maxChars) {
    QString plain;
    plain.reserve(text.size());
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        if (u < 0x20 || (u >= 0x7f && u <= 0x9f))
            plain += QStringLiteral("\\u%1").arg(int(u), 4, 16, QLatin1Char('0'));
        else
            plain += c;
    }
    if (plain.size() > maxChars) {
        plain.truncate(maxChars - 1);
        if (plain.back().isHighSurrogate())
            plain.chop(1);
        plain += QStringLiteral("…");
    }
    return plain;
}

QString auditFilterText(const EventFilter &filter, const BulkOptions &options) {
    QString text = filter.describe();
    if (options.limit >= 0)
        text += QStringLiteral(" limit=%1").arg(options.limit);
    if (!options.reason.trimmed().isEmpty())
        text += QLatin1String(" reason: ") + options.reason.trimmed();
    return auditText(text, 4000);
}

// The call of the action's database function for one batch. Parameters, in
// text order: the audit id, the candidate ids, the preview's moment, the
// rows planned for the batch, then cancel's reason or replay's "again".
QString functionSql(Action action) {
    const QString args = QStringLiteral("(?::bigint, ?::uuid[], ?::timestamptz, ?::bigint%1)")
                             .arg(action == Action::Cancel   ? QStringLiteral(", ?::text")
                                  : action == Action::Replay ? QStringLiteral(", ?::boolean")
                                                             : QString());
    const QString columns = action == Action::Replay
                                ? QStringLiteral("event_id::text, replay_of::text")
                                : QStringLiteral("event_id::text");
    return QLatin1String("SELECT ") + columns + QLatin1String(" FROM outbox_op_") +
           actionName(action) + args;
}

// The outbox_audit row of one run, kept by the database functions: opened
// with the first batch (or at the end when nothing matched), counted by
// every batch, closed at the end.
class AuditRecord final {
public:
    AuditRecord(QSqlDatabase db, Action action, const EventFilter &filter,
                const BulkOptions &options, const Actor &actor, qint64 confirmed)
        : m_db(std::move(db))
        , m_name(actionName(action))
        , m_filter(filter)
        , m_options(options)
        , m_actor(actor)
        , m_confirmed(confirmed) {}
    Q_DISABLE_COPY_MOVE(AuditRecord)

    core::Result<qint64> insert(const QString &context) {
        auto inserted =
            exec(m_db, QStringLiteral("SELECT outbox_op_begin(?, ?, ?, ?, ?, ?::bigint)"),
                 {m_name, auditFilterText(m_filter, m_options),
                  nullableText(auditText(m_actor.osUser, 128)),
                  nullableText(auditText(m_actor.host, 255)),
                  nullableText(auditText(m_actor.application, 100)), m_confirmed},
                 context);
        if (!inserted)
            return inserted.error();
        if (!inserted->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no audit id")};
        return inserted->value(0).toLongLong();
    }

    core::Result<void> finish(qint64 auditId) {
        auto finished = exec(m_db, QStringLiteral("SELECT outbox_op_finish(?::bigint)"), {auditId},
                             QStringLiteral("%1: closing the audit record").arg(m_name));
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
    const qint64 m_confirmed;
};

// The second half of a run: one transaction per window of the plan, which
// hands what is left of the window's rows to the action's function.
class BatchRunner final {
public:
    BatchRunner(QSqlDatabase db, Action action, const BulkPlan &plan, const BulkOptions &options,
                AuditRecord &audit)
        : m_db(std::move(db))
        , m_action(action)
        , m_name(actionName(action))
        , m_plan(plan)
        , m_options(options)
        , m_audit(audit) {}
    Q_DISABLE_COPY_MOVE(BatchRunner)

    // Changes what is left of window `w`, in one transaction with the audit
    // bookkeeping. auditId 0: create the audit row first, so that an action
    // that fails at once leaves no audit row claiming otherwise.
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
            auto ids = windowIds(w, context);
            if (!ids)
                return ids.error();
            if (auto changed = change(ids.value(), m_plan.windowRows(w), outcome, context);
                !changed)
                return changed.error();
            return outcome;
        });
    }

private:
    // The window's ids come from the partial indexes, with both ends of the
    // key range in the index condition (an open range would look big enough
    // to the planner for a table scan); the outer query re-checks the whole
    // condition on the current row version. Rows changed after the start
    // are left alone: they are not the rows that matched. The function locks
    // them and checks their state once more.
    core::Result<QStringList> windowIds(qsizetype w, const QString &context) {
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
            QLatin1String(" AND e.updated_at <= ?::timestamptz ORDER BY e.created_at, e.id");
        const WindowEnd &from = w > 0 ? m_plan.windows.at(w - 1) : m_plan.first;
        const WindowEnd &to = m_plan.windows.at(w);
        const QVariantList windowValues = QVariantList(m_plan.whereValues)
                                          << m_plan.startedAt << from.createdAt << from.id
                                          << to.createdAt << to.id;
        auto found =
            exec(m_db, sql,
                 perStateValues(m_action, windowValues) << m_plan.whereValues << m_plan.startedAt,
                 context);
        if (!found)
            return found.error();
        QStringList ids;
        while (found->next())
            ids << found->value(0).toString();
        return ids;
    }

    core::Result<void> change(const QStringList &ids, qint64 planned, BatchOutcome &outcome,
                              const QString &context) {
        // In the order of the placeholders in functionSql().
        QVariantList values{outcome.auditId, uuidArray(ids), m_plan.startedAt, planned};
        if (m_action == Action::Cancel)
            values << nullableText(m_options.reason.trimmed());
        if (m_action == Action::Replay)
            values << m_options.again;
        auto changed = exec(m_db, functionSql(m_action), values, context);
        if (!changed)
            return changed.error();
        while (changed->next()) {
            ++outcome.changed;
            outcome.changedIds << QUuid::fromString(changed->value(0).toString());
            if (m_action == Action::Replay) {
                outcome.createdIds << outcome.changedIds.takeLast();
                outcome.changedIds << QUuid::fromString(changed->value(1).toString());
            }
        }
        return {};
    }

    QSqlDatabase m_db;
    const Action m_action;
    const QString m_name;
    const BulkPlan &m_plan;
    const BulkOptions &m_options;
    AuditRecord &m_audit;
};

} // namespace

Actor Actor::fromEnvironment(const QString &application) {
    Actor actor;
    for (const char *name : {"USER", "LOGNAME"}) {
        actor.osUser = qEnvironmentVariable(name);
        if (!actor.osUser.isEmpty())
            break;
    }
    if (actor.osUser.isEmpty())
        actor.osUser = processAccount();
    actor.host = QSysInfo::machineHostName();
    // The database refuses a run that does not name its host.
    if (actor.host.isEmpty())
        actor.host = QStringLiteral("(no host name)");
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
    const auto planned = planBulk(m_db, action, filter, options, effectiveBatchSize(options));
    if (!planned)
        return planned.error();
    const BulkPlan &plan = planned.value();
    const QString name = actionName(action);

    BulkResult result;
    result.action = action;
    result.dryRun = options.dryRun;
    result.matched = plan.matched;
    result.seal = plan.seal;
    result.newer = plan.newer;
    result.alreadyReplayed = plan.alreadyReplayed;
    // The most this run may change, enforced by the database: what the
    // operator confirmed, or without a preview what matched at the start.
    result.confirmed = options.seal ? std::min(plan.target, options.seal->count) : plan.target;
    if (options.dryRun) {
        result.sample = plan.sample;
        return result;
    }
    if (action == Action::Replay && !options.again && plan.alreadyReplayed > 0)
        return core::Error{
            ErrorKind::Invalid,
            QStringLiteral("replay: %1 of the %2 matching events %3 already replayed or copies "
                           "of a replayed event (e.g. %4): replaying makes another copy of each "
                           "original. Ask for it explicitly (outboxctl replay --again) or leave "
                           "them out; nothing was changed")
                .arg(plan.alreadyReplayed)
                .arg(plan.matched)
                .arg(plan.alreadyReplayed == 1 ? QStringLiteral("was") : QStringLiteral("were"))
                .arg(plan.replayedExample)};

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
    AuditRecord audit(m_db, action, filter, options, m_actor, result.confirmed);
    BatchRunner batches(m_db, action, plan, options, audit);
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
                              << "confirmed" << result.confirmed << "changed" << result.changed
                              << "skipped" << result.skipped << "newer" << result.newer
                              << (result.cancelled ? "(cancelled)" : "");
    return result;
}

} // namespace outbox::store
