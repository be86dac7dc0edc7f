#include "bench/paused.h"

#include "store/database.h"
#include "store/migrator.h"
#include "store/pausestore.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QMap>

#include <thread>

namespace outbox::bench {

namespace {

const QString kLive = QStringLiteral("live");
const store::Actor kActor{QStringLiteral("bench"), QString(), QStringLiteral("outboxctl-bench")};
constexpr core::Millis kIdle{10000}; // the dispatcher left idle after each run
constexpr int kDeadHeads = 1000;     // aggregates blocked behind a dead event

// A database of the run's cluster (aggregate order on) with nothing set
// aside, a paused backlog, a backlog queued behind dead events, or as many
// delivered events (the reference: a table of the same size, nothing held).
enum class Kind { Nothing, Paused, Blocked, History };

// Each run's figures by name ("paused_events_per_s", ...), one per round.
using Figures = QMap<QString, QList<double>>;

// The claim's mean time since the last reset (QPSQL prepares it by name: one
// entry per connection that prepared it).
core::Result<double> claimMs(store::BenchQueries &sql) {
    auto stats = sql.statementStats(50);
    if (!stats)
        return stats.error();
    double calls = 0, totalMs = 0;
    for (const QJsonValue &value : std::as_const(stats.value())) {
        const QJsonObject row = value.toObject();
        if (!row.value(QLatin1String("query")).toString().contains(QLatin1String("WITH c AS")) &&
            !row.value(QLatin1String("query")).toString().contains(QLatin1String("WITH l AS")))
            continue;
        calls += row.value(QLatin1String("calls")).toDouble();
        totalMs += row.value(QLatin1String("total_ms")).toDouble();
    }
    return calls > 0 ? totalMs / calls : 0.0;
}

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
        if (auto enabled = m_sql.enableStatementStats(); !enabled)
            return enabled;
        if (m_kind == Kind::Paused) {
            // Paused first, then filled: the backlog an operator's pause builds.
            if (auto held = pauses().pause(QStringLiteral("held"), std::nullopt,
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
    // dispatcher in `ordering`, then the dispatcher left idle: the rate, the
    // claim's mean time and the idle database time per second under `label`.
    core::Result<void> round(DispatchPlan run, core::Ordering ordering, const QString &label,
                             Figures &figures) {
        auto loaded = m_sql.exec(QStringLiteral("DELETE FROM outbox_events WHERE namespace = '") +
                                     kLive + QLatin1Char('\''),
                                 QStringLiteral("removing the last round's events"));
        if (loaded)
            loaded = insert(m_o.events, kLive, std::max(m_o.events / 10, 1));
        if (loaded)
            loaded = m_sql.vacuumAndCheckpoint();
        if (loaded)
            loaded = m_sql.resetStatementStats();
        if (!loaded)
            return loaded;
        core::Result<double> claims = 0.0;
        run.connInfo = m_info;
        run.config.ordering = ordering;
        // The delivery loop's statements only: the registry's once-a-minute
        // backlog sample counts the pending events, set aside or not.
        run.options.housekeeping.registry = false;
        run.idleAfter = kIdle;
        run.onTarget = [&] {
            claims = claimMs(m_sql);
            if (auto reset = m_sql.resetStatementStats(); !reset && claims)
                claims = reset.error();
        };
        auto ran = runDispatcher(run);
        if (!ran)
            return ran.error();
        if (!claims)
            return claims.error();
        auto idleMs = m_sql.statementTimeMs();
        if (!idleMs)
            return idleMs.error();
        figures[label + QStringLiteral("_events_per_s")] << double(m_o.events) / ran->seconds;
        figures[label + QStringLiteral("_claim_ms")] << claims.value();
        figures[label + QStringLiteral("_idle_db_ms_per_s")]
            << idleMs.value() / (double(kIdle.count()) / 1000.0);
        return {};
    }

    core::ConnInfo connInfo() const { return m_info; }
    store::BenchQueries &sql() { return m_sql; }
    store::PauseStore pauses() { return store::PauseStore(m_sql.database()); }

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

// Resumes the paused namespace while the dispatcher runs, from a thread and
// connection of its own, as an operator's `outboxctl resume` would; returns
// the rate of the first `o.events` of the backlog, the time to the first
// delivery and how long the whole release took.
core::Result<void> resumeWhileDelivering(Side &paused, DispatchPlan run, QJsonObject &out) {
    double seconds = 0;
    QString error;
    std::thread resumer;
    run.connInfo = paused.connInfo();
    run.onStarted = [&] {
        resumer = std::thread([&, info = paused.connInfo()] {
            const QString name = store::uniqueConnectionName(QStringLiteral("bench-resume"));
            QElapsedTimer clock;
            clock.start();
            {
                auto db = store::openDatabase(info, name);
                auto resumed = db ? store::PauseStore(db.value())
                                        .resume(QStringLiteral("held"), std::nullopt, kActor)
                                  : core::Result<qint64>(db.error());
                if (!resumed)
                    error = resumed.errorMessage();
            } // the connection is gone before it is closed
            seconds = double(clock.nsecsElapsed()) / 1e9;
            store::closeDatabase(name);
        });
    };
    auto ran = runDispatcher(run);
    if (resumer.joinable())
        resumer.join();
    if (!error.isEmpty())
        return failure(QStringLiteral("resume: ") + error);
    if (!ran)
        return ran.error();
    double first = -1;
    for (const DeliverySample &sample : std::as_const(ran->samples)) {
        if (sample.delivered > 0) {
            first = sample.seconds;
            break;
        }
    }
    out.insert(QStringLiteral("resume_first_delivery_ms"), rounded(first * 1000.0, 0));
    out.insert(QStringLiteral("resumed_events_per_s"),
               rounded(double(run.target) / ran->seconds, 0));
    out.insert(QStringLiteral("resume_seconds"), rounded(seconds, 2));
    return {};
}

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
    Figures figures;
    for (int round = 1; round <= o.repeat; ++round) {
        for (const auto &run : runs) {
            progress(QStringLiteral("paused backlog: %1 events, %2 (round %3 of %4)...")
                         .arg(o.events)
                         .arg(QLatin1String(run.label))
                         .arg(round)
                         .arg(o.repeat));
            if (auto ran = run.side->round(plan(o.events), run.ordering, QLatin1String(run.label),
                                           figures);
                !ran)
                return ran.error();
        }
        for (const auto &[ratio, side, base] :
             {std::tuple{"ratio", "paused", "nothing_paused"},
              std::tuple{"history_ratio", "history", "nothing_paused"},
              std::tuple{"blocked_ratio", "blocked", "nothing_blocked"}})
            figures[QLatin1String(ratio) + QStringLiteral("_rounds")]
                << figures.value(QLatin1String(side) + QStringLiteral("_events_per_s")).last() /
                       figures.value(QLatin1String(base) + QStringLiteral("_events_per_s")).last();
    }
    QJsonObject out{{QStringLiteral("events"), o.events},
                    {QStringLiteral("paused_events"), o.pausedBacklog},
                    {QStringLiteral("dead_heads"), kDeadHeads}};
    for (auto it = figures.cbegin(); it != figures.cend(); ++it) {
        // Rates in events, times in microseconds, ratios to a tenth of a percent.
        const QString key =
            it.key().endsWith(QLatin1String("_rounds")) ? it.key().chopped(7) : it.key();
        const int decimals = key.endsWith(QLatin1String("_events_per_s")) ? 0 : 3;
        out.insert(key, rounded(median(it.value()), decimals));
        out.insert(key + QStringLiteral("_rounds"), roundedArray(it.value(), decimals));
    }

    progress(QStringLiteral("paused backlog: resuming %1 events while the dispatcher runs...")
                 .arg(o.pausedBacklog));
    if (auto resumed =
            resumeWhileDelivering(paused, plan(std::min(o.events, o.pausedBacklog)), out);
        !resumed)
        return resumed.error();
    // What is left, pending and no longer held, paused again.
    auto left = paused.sql().count(QStringLiteral("pending"));
    if (!left)
        return left.error();
    progress(QStringLiteral("paused backlog: pausing %1 pending events...").arg(left.value()));
    QElapsedTimer clock;
    clock.start();
    if (auto held = paused.pauses().pause(QStringLiteral("held"), std::nullopt,
                                          QStringLiteral("bench"), kActor);
        !held)
        return held.error();
    out.insert(QStringLiteral("pause_existing_events"), left.value());
    out.insert(QStringLiteral("pause_seconds"), rounded(double(clock.nsecsElapsed()) / 1e9, 2));
    return out;
}

QList<std::pair<QString, QString>> pausedFigures(const QJsonObject &p) {
    QList<std::pair<QString, QString>> rows;
    if (p.isEmpty())
        return rows;
    const auto at = [&p](const QString &key) { return p.value(key).toDouble(); };
    const auto pair = [](const QString &a, const QString &b) {
        return QStringLiteral("%1 / %2").arg(a, b);
    };
    const qint64 events = p.value(QLatin1String("events")).toInteger();
    const qint64 setAside = p.value(QLatin1String("paused_events")).toInteger();
    for (const auto &[what, key, base, ratioKey] :
         {std::tuple{"paused", "paused", "nothing_paused", "ratio"},
          std::tuple{"delivered (a table as large, nothing paused)", "history", "nothing_paused",
                     "history_ratio"},
          std::tuple{"behind dead events (aggregate order)", "blocked", "nothing_blocked",
                     "blocked_ratio"}}) {
        const QString side = QLatin1String(key), before = QLatin1String(base);
        const QString ratio = QLatin1String(ratioKey);
        rows.append({QStringLiteral("%1 events beside %2 %3: nothing / %2 (%4)")
                         .arg(events)
                         .arg(setAside)
                         .arg(QLatin1String(what), percent(at(ratio))),
                     pair(QStringLiteral("%1 /s").arg(at(before + QStringLiteral("_events_per_s")),
                                                      0, 'f', 0),
                          QStringLiteral("%1 /s").arg(at(side + QStringLiteral("_events_per_s")), 0,
                                                      'f', 0))});
        QStringList rounds;
        const QJsonArray ratios = p.value(ratio + QStringLiteral("_rounds")).toArray();
        for (const QJsonValue &value : ratios)
            rounds << percent(value.toDouble());
        rows.append({QStringLiteral("  per round"), rounds.join(QLatin1Char(' '))});
        rows.append({QStringLiteral("  database time per claim; idle, per second"),
                     pair(ms(at(before + QStringLiteral("_claim_ms")), 3),
                          ms(at(side + QStringLiteral("_claim_ms")), 3)) +
                         QStringLiteral("; ") +
                         pair(ms(at(before + QStringLiteral("_idle_db_ms_per_s")), 2),
                              ms(at(side + QStringLiteral("_idle_db_ms_per_s")), 2))});
    }
    rows.append(
        {QStringLiteral("resume of %1 paused: first delivery, rate, release took").arg(setAside),
         QStringLiteral("%1, %2 /s, %3 s")
             .arg(ms(at(QStringLiteral("resume_first_delivery_ms")), 0))
             .arg(at(QStringLiteral("resumed_events_per_s")), 0, 'f', 0)
             .arg(at(QStringLiteral("resume_seconds")), 0, 'f', 1)});
    rows.append({QStringLiteral("pause of %1 pending events (holding them) took")
                     .arg(p.value(QLatin1String("pause_existing_events")).toInteger()),
                 QStringLiteral("%1 s").arg(at(QStringLiteral("pause_seconds")), 0, 'f', 1)});
    return rows;
}

} // namespace outbox::bench
