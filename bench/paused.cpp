#include "bench/paused.h"

#include "store/database.h"
#include "store/migrator.h"
#include "store/pausestore.h"

#include <tuple>

namespace outbox::bench {

namespace {

const QString kLive = QStringLiteral("live");
const store::Actor kActor{QStringLiteral("bench"), QString(), QStringLiteral("outboxctl-bench")};
constexpr int kDeadHeads = 1000; // aggregates blocked behind a dead event

// A database of the run's cluster (aggregate order on) with nothing set
// aside, a paused backlog, a backlog queued behind dead events, or as many
// delivered events (the reference: a table of the same size, nothing held).
enum class Kind { Nothing, Paused, Blocked, History };

class Side final {
public:
    Side(core::ConnInfo info, const BenchOptions &o, Kind kind)
        : m_info(std::move(info))
        , m_o(o)
        , m_kind(kind) {
        m_info.dbname = QStringLiteral("bench_%1").arg(int(kind));
    }
    ~Side() {
        m_sql = store::BenchQueries();
        if (!m_name.isEmpty())
            store::closeDatabase(m_name);
    }
    Q_DISABLE_COPY_MOVE(Side)

    core::Result<void> open(store::BenchQueries &admin) {
        if (auto made = admin.exec(QStringLiteral("CREATE DATABASE ") + m_info.dbname,
                                   QStringLiteral("creating a database"));
            !made)
            return made;
        m_name = store::uniqueConnectionName(QStringLiteral("bench-paused"));
        auto db = store::openDatabase(m_info, m_name);
        if (!db)
            return db.error();
        m_sql = store::BenchQueries(db.value());
        store::Migrator migrator(db.value());
        if (auto migrated = migrator.migrate(); !migrated)
            return migrated.error();
        if (auto on = migrator.enableAggregateOrder(); !on)
            return on.error();
        if (m_kind == Kind::Paused) {
            // Paused first, then filled: the backlog an operator's pause builds.
            if (auto held = store::PauseStore(m_sql.database())
                                .pause(QStringLiteral("held"), std::nullopt,
                                       QStringLiteral("bench"), kActor);
                !held)
                return held.error();
            return insert(m_o.pausedBacklog, QStringLiteral("held"), 0);
        }
        if (m_kind == Kind::Nothing)
            return {};
        if (m_kind == Kind::History)
            return m_sql.insertEvents({m_o.pausedBacklog, QStringLiteral("bench.history"),
                                       m_o.payloadBytes, true, 0, QStringLiteral("history")});
        // One dead event at the head of each aggregate, the backlog behind them.
        auto loaded = m_sql.exec(
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                           " aggregate_type, aggregate_id) SELECT outbox_uuid_v7(), 'blocked',"
                           " 'bench.blocked', '{}', 'dead', 'blocked', g::text"
                           " FROM generate_series(0, %1) AS g")
                .arg(kDeadHeads - 1),
            QStringLiteral("loading dead events"));
        if (loaded)
            loaded = insert(m_o.pausedBacklog, QStringLiteral("blocked"), kDeadHeads);
        if (loaded)
            loaded = m_sql.exec(QStringLiteral("SELECT outbox_aggregate_block_all()"),
                                QStringLiteral("blocking the backlog"));
        return loaded;
    }

    // `o.events` events of their own namespace delivered by the database-only
    // dispatcher in `ordering`: the rate under `label`.
    core::Result<void> round(DispatchPlan run, core::Ordering ordering, const QString &label,
                             Rounds &rounds) {
        auto loaded = m_sql.exec(QStringLiteral("DELETE FROM outbox_events WHERE namespace = '") +
                                     kLive + QLatin1Char('\''),
                                 QStringLiteral("removing the last round's events"));
        if (loaded)
            loaded = insert(m_o.events, kLive, std::max(m_o.events / 10, 1));
        if (loaded)
            loaded = m_sql.vacuumAndCheckpoint();
        if (!loaded)
            return loaded;
        run.connInfo = m_info;
        run.config.ordering = ordering;
        // The delivery loop's statements only, as in the recorded runs: the
        // registry's once-a-minute backlog sample counts the pending events,
        // set aside or not.
        run.options.housekeeping.registry = false;
        auto ran = runDispatcher(run);
        if (!ran)
            return ran.error();
        rounds[label + QStringLiteral("_events_per_s")] << double(m_o.events) / ran->seconds;
        return {};
    }

private:
    core::Result<void> insert(qint64 events, const QString &nameSpace, int aggregates) {
        return m_sql.insertEvents({events, QStringLiteral("bench.") + nameSpace, m_o.payloadBytes,
                                   false, aggregates, nameSpace});
    }

    core::ConnInfo m_info;
    const BenchOptions &m_o;
    const Kind m_kind;
    QString m_name;
    store::BenchQueries m_sql;
};

} // namespace

core::Result<QJsonObject> measurePausedBacklog(BenchCluster &database, const BenchOptions &o,
                                               const std::function<DispatchPlan(qint64)> &plan,
                                               const Progress &progress) {
    Side nothing(database.connInfo(), o, Kind::Nothing);
    Side paused(database.connInfo(), o, Kind::Paused);
    Side blocked(database.connInfo(), o, Kind::Blocked);
    Side history(database.connInfo(), o, Kind::History);
    for (Side *side : {&nothing, &paused, &blocked, &history}) {
        progress(QStringLiteral("paused backlog: loading a database (%1 events set aside)...")
                     .arg(side == &nothing ? 0 : o.pausedBacklog));
        if (auto opened = side->open(database.sql()); !opened)
            return opened.error();
    }
    // Round by round the runs alternate: the machine's load hits both sides
    // of a ratio alike.
    const struct {
        Side *side;
        core::Ordering ordering;
        const char *label;
    } runs[] = {{&nothing, core::Ordering::None, "nothing_paused"},
                {&paused, core::Ordering::None, "paused"},
                {&history, core::Ordering::None, "history"},
                {&nothing, core::Ordering::Aggregate, "nothing_blocked"},
                {&blocked, core::Ordering::Aggregate, "blocked"}};
    Rounds rounds;
    for (int round = 1; round <= o.repeat; ++round) {
        for (const auto &run : runs) {
            progress(QStringLiteral("paused backlog: %1 events, %2 (round %3 of %4)...")
                         .arg(o.events)
                         .arg(QLatin1String(run.label))
                         .arg(round)
                         .arg(o.repeat));
            if (auto ran =
                    run.side->round(plan(o.events), run.ordering, QLatin1String(run.label), rounds);
                !ran)
                return ran.error();
        }
        for (const auto &[ratio, side, base] :
             {std::tuple{"ratio", "paused", "nothing_paused"},
              std::tuple{"history_ratio", "history", "nothing_paused"},
              std::tuple{"blocked_ratio", "blocked", "nothing_blocked"}})
            rounds[QLatin1String(ratio)]
                << rounds.value(QLatin1String(side) + QStringLiteral("_events_per_s")).last() /
                       rounds.value(QLatin1String(base) + QStringLiteral("_events_per_s")).last();
    }
    QJsonObject out = roundsJson(rounds);
    out.insert(QStringLiteral("events"), o.events);
    out.insert(QStringLiteral("paused_events"), o.pausedBacklog);
    out.insert(QStringLiteral("dead_heads"), kDeadHeads);
    return out;
}

} // namespace outbox::bench
