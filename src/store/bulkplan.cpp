#include "store/bulkplan.h"

#include "store/database.h"

#include <QStringList>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

namespace {

using core::ErrorKind;

QStringList statesOf(Action action) {
    QStringList names;
    for (core::Status state : allowedStates(action))
        names << core::statusName(state);
    return names;
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

// Inside a repeatable-read snapshot (see planBulk()).
class Planner {
public:
    Planner(QSqlDatabase db, Action action, const EventFilter &filter, const BulkOptions &options,
            const Actor &actor, int batchSize)
        : m_db(std::move(db))
        , m_action(action)
        , m_filter(filter)
        , m_options(options)
        , m_actor(actor)
        , m_batchSize(batchSize) {}

    core::Result<BulkPlan> plan(const QString &context) {
        // olderThan is pinned to the start: otherwise rows would keep
        // crossing the age line while a long purge runs.
        EventFilter pinned = m_filter;
        pinned.olderThan.reset();
        const SqlCondition base = toSqlCondition(pinned, QStringLiteral("e"));
        BulkPlan plan;
        plan.where = base.sql;
        plan.whereValues = base.values;

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
            plan.where += QLatin1String(" AND e.updated_at < ?::timestamptz");
            plan.whereValues << start->value(1).toString();
        }

        auto counted =
            exec(m_db,
                 QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") + plan.where +
                     QLatin1String(" AND e.status IN ") + statesSql(m_action),
                 plan.whereValues, context);
        if (!counted)
            return counted.error();
        if (!counted->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no count")};
        plan.matched = counted->value(0).toLongLong();
        plan.target = m_options.limit >= 0 ? std::min(plan.matched, m_options.limit) : plan.matched;
        if (plan.target == 0)
            return plan;
        if (m_options.dryRun) {
            if (auto sampled = sample(plan, context); !sampled)
                return sampled.error();
            return plan;
        }
        if (auto cut = cutWindows(plan, context); !cut)
            return cut.error();
        return plan;
    }

private:
    QString keys(const BulkPlan &plan) const {
        return perState(m_action, QStringLiteral("e.created_at, e.id"), plan.where, {});
    }

    core::Result<void> sample(BulkPlan &plan, const QString &context) {
        auto sample = exec(m_db,
                           QLatin1String("SELECT u.id::text FROM (") + keys(plan) +
                               QLatin1String(") u ORDER BY u.created_at, u.id LIMIT ?"),
                           perStateValues(m_action, plan.whereValues)
                               << std::min<qint64>(plan.target, m_options.sampleSize),
                           context);
        if (!sample)
            return sample.error();
        while (sample->next())
            plan.sample << QUuid::fromString(sample->value(0).toString());
        return {};
    }

    // The first key, every batchSize-th key and the last one: a batch is
    // then exactly the rows between two keys, and how many of them matched
    // at the start is known, which makes the skipped count exact.
    core::Result<void> cutWindows(BulkPlan &plan, const QString &context) {
        auto ends = exec(m_db,
                         QLatin1String("SELECT m.created_at::text, m.id::text, m.rn FROM ("
                                       " SELECT u.created_at, u.id,"
                                       "  row_number() OVER (ORDER BY u.created_at, u.id) AS rn"
                                       " FROM (") +
                             keys(plan) +
                             QLatin1String(") u ORDER BY u.created_at, u.id LIMIT ?) m WHERE"
                                           " m.rn = 1 OR m.rn % ? = 0 OR m.rn = ? ORDER BY m.rn"),
                         perStateValues(m_action, plan.whereValues)
                             << plan.target << m_batchSize << plan.target,
                         context);
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
        return {};
    }

    QSqlDatabase m_db;
    const Action m_action;
    const EventFilter &m_filter;
    const BulkOptions &m_options;
    const Actor &m_actor;
    const int m_batchSize;
};

} // namespace

QString statesSql(Action action) {
    QStringList quoted;
    for (const QString &state : statesOf(action))
        quoted << QLatin1Char('\'') + state + QLatin1Char('\'');
    return QLatin1Char('(') + quoted.join(QLatin1String(", ")) + QLatin1Char(')');
}

QString perState(Action action, const QString &columns, const QString &where,
                 const QString &extra) {
    QStringList parts;
    for (const QString &state : statesOf(action))
        parts << QLatin1String("(SELECT ") + columns +
                     QLatin1String(" FROM outbox_events e WHERE ") + where +
                     QLatin1String(" AND e.status = '") + state + QLatin1Char('\'') + extra +
                     QLatin1Char(')');
    return parts.join(QLatin1String(" UNION ALL "));
}

QVariantList perStateValues(Action action, const QVariantList &values) {
    QVariantList all;
    for (qsizetype i = 0; i < statesOf(action).size(); ++i)
        all << values;
    return all;
}

core::Result<BulkPlan> planBulk(QSqlDatabase db, Action action, const EventFilter &filter,
                                const BulkOptions &options, const Actor &actor, int batchSize) {
    const QString context = QStringLiteral("%1: selecting the events").arg(actionName(action));
    Planner planner(db, action, filter, options, actor, batchSize);
    return inTransaction(db, context, [&]() -> core::Result<BulkPlan> {
        auto iso =
            exec(db, QStringLiteral("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"),
                 {}, context);
        if (!iso)
            return iso.error();
        return planner.plan(context);
    });
}

} // namespace outbox::store
