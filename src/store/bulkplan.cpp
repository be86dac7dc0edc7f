#include "store/bulkplan.h"

#include "store/database.h"
#include "store/pausestore.h"

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

// Inside a repeatable-read snapshot (see planBulk()).
class Planner {
public:
    Planner(QSqlDatabase db, Action action, const EventFilter &filter, const BulkOptions &options,
            int batchSize)
        : m_db(std::move(db))
        , m_action(action)
        , m_filter(filter)
        , m_options(options)
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

        // A sealed run starts from the preview's moment: the age line and
        // "changed meanwhile" are as the operator saw them.
        const qint64 olderMs = m_filter.olderThan ? qint64(m_filter.olderThan->count()) : 0;
        const bool sealed = m_options.seal && m_options.seal->isValid();
        auto start = exec(
            m_db,
            QStringLiteral("SELECT s.t::text, (s.t - ?::bigint * interval '1 millisecond')::text,"
                           " (now() - ?::bigint * interval '1 millisecond')::text FROM (SELECT ") +
                (sealed ? QStringLiteral("?::timestamptz") : QStringLiteral("clock_timestamp()")) +
                QStringLiteral(" AS t) s"),
            sealed ? QVariantList{olderMs, olderMs, m_options.seal->at}
                   : QVariantList{olderMs, olderMs},
            context);
        if (!start)
            return start.error();
        if (!start->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no row")};
        plan.startedAt = start->value(0).toString();
        if (m_filter.olderThan) {
            plan.where += QLatin1String(" AND e.updated_at < ?::timestamptz");
            plan.whereValues << start->value(1).toString();
        }
        qint64 openMatched = 0;
        if (sealed) {
            QString open = base.sql;
            QVariantList openValues = base.values;
            if (m_filter.olderThan) {
                open += QLatin1String(" AND e.updated_at < ?::timestamptz");
                openValues << start->value(2).toString();
            }
            auto all = count(open, openValues, context);
            if (!all)
                return all.error();
            openMatched = all.value();
            plan.where += QLatin1String(" AND e.updated_at <= ?::timestamptz"
                                        " AND (e.created_at, e.id) <= (?::timestamptz, ?::uuid)");
            plan.whereValues << m_options.seal->at << m_options.seal->lastCreatedAt
                             << m_options.seal->lastId;
        }

        auto counted = count(plan.where, plan.whereValues, context);
        if (!counted)
            return counted.error();
        plan.matched = counted.value();
        plan.target = m_options.limit >= 0 ? std::min(plan.matched, m_options.limit) : plan.matched;
        if (sealed) {
            plan.target = std::min(plan.target, m_options.seal->count);
            plan.newer = std::max<qint64>(0, openMatched - plan.matched);
        } else if (m_options.seal) {
            plan.target = 0; // the operator confirmed an empty preview
        }
        if (m_action == Action::Replay) {
            if (auto replayed = countReplayed(plan, context); !replayed)
                return replayed.error();
        }
        plan.seal.at = plan.startedAt;
        plan.seal.count = plan.target;
        if (plan.target == 0)
            return plan;
        if (m_options.dryRun) {
            if (auto sampled = sample(plan, context); !sampled)
                return sampled.error();
            if (auto last = lastKey(plan, context); !last)
                return last.error();
            return plan;
        }
        if (auto cut = cutWindows(plan, context); !cut)
            return cut.error();
        return plan;
    }

private:
    core::Result<qint64> count(const QString &where, const QVariantList &values,
                               const QString &context) {
        auto counted = exec(m_db,
                            QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") + where +
                                QLatin1String(" AND e.status IN ") + statesSql(m_action),
                            values, context);
        if (!counted)
            return counted.error();
        if (!counted->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no count")};
        return counted->value(0).toLongLong();
    }

    core::Result<void> countReplayed(BulkPlan &plan, const QString &context) {
        auto replayed =
            exec(m_db,
                 QLatin1String("SELECT count(*), min(e.id::text) FROM outbox_events e"
                               " WHERE ") +
                     plan.where + QLatin1String(" AND e.status IN ") + statesSql(m_action) +
                     // A copy counts: replaying it copies its original
                     // once more (sql/012_hardening.sql).
                     QLatin1String(" AND (e.replay_of IS NOT NULL OR EXISTS (SELECT 1 FROM"
                                   " outbox_events c WHERE c.replay_of = e.id))"),
                 plan.whereValues, context);
        if (!replayed)
            return replayed.error();
        if (!replayed->next())
            return core::Error{ErrorKind::Failed, context + QStringLiteral(": no count")};
        plan.alreadyReplayed = replayed->value(0).toLongLong();
        plan.replayedExample = replayed->value(1).toString();
        return {};
    }

    // The key of the last row the run would work through: the seal's end.
    core::Result<void> lastKey(BulkPlan &plan, const QString &context) {
        auto last =
            exec(m_db,
                 QLatin1String("SELECT u.created_at::text, u.id::text FROM (") + keys(plan) +
                     QLatin1String(") u ORDER BY u.created_at, u.id OFFSET ? LIMIT 1"),
                 perStateValues(m_action, plan.whereValues) << plan.target - 1, context);
        if (!last)
            return last.error();
        if (last->next()) {
            plan.seal.lastCreatedAt = last->value(0).toString();
            plan.seal.lastId = last->value(1).toString();
        }
        return {};
    }

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
            if (key.position == plan.target) {
                plan.seal.lastCreatedAt = key.createdAt;
                plan.seal.lastId = key.id;
            }
        }
        return {};
    }

    QSqlDatabase m_db;
    const Action m_action;
    const EventFilter &m_filter;
    const BulkOptions &m_options;
    const int m_batchSize;
};

} // namespace

QString statesSql(Action action) {
    QStringList quoted;
    for (const QString &state : statesOf(action))
        quoted << QLatin1Char('\'') + state + QLatin1Char('\'');
    return QLatin1Char('(') + quoted.join(QLatin1String(", ")) + QLatin1Char(')');
}

namespace {

// Each allowed state's branches in creation order: held pending events are
// in an index of their own (createdOrderBranches()).
QStringList stateBranches(Action action) {
    QStringList branches;
    for (core::Status state : allowedStates(action)) {
        const QString status =
            QLatin1String("e.status = '") + core::statusName(state) + QLatin1Char('\'');
        for (const QString &branch : createdOrderBranches(state, false, QStringLiteral("e.")))
            branches << status + QLatin1String(" AND ") + branch;
    }
    return branches;
}

} // namespace

QString perState(Action action, const QString &columns, const QString &where,
                 const QString &extra) {
    QStringList parts;
    for (const QString &branch : stateBranches(action))
        parts << QLatin1String("(SELECT ") + columns +
                     QLatin1String(" FROM outbox_events e WHERE ") + where +
                     QLatin1String(" AND ") + branch + extra + QLatin1Char(')');
    return parts.join(QLatin1String(" UNION ALL "));
}

QVariantList perStateValues(Action action, const QVariantList &values) {
    QVariantList all;
    for (qsizetype i = 0; i < stateBranches(action).size(); ++i)
        all << values;
    return all;
}

core::Result<BulkPlan> planBulk(QSqlDatabase db, Action action, const EventFilter &filter,
                                const BulkOptions &options, int batchSize) {
    const QString context = QStringLiteral("%1: selecting the events").arg(actionName(action));
    Planner planner(db, action, filter, options, batchSize);
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
