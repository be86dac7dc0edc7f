#include "bench/paused.h"

#include "store/database.h"
#include "store/migrator.h"
#include "store/pausestore.h"

#include <QElapsedTimer>
#include <QJsonArray>

#include <thread>

namespace outbox::bench {

namespace {

const QString kHeld = QStringLiteral("held");
const QString kLive = QStringLiteral("live");
const store::Actor kActor{QStringLiteral("bench"), QString(), QStringLiteral("outboxctl-bench")};
constexpr core::Millis kIdle{10000}; // the dispatcher left idle after each side

struct ClaimStats {
    qint64 calls = 0;
    double meanMs = 0;
};

// The claim statement's calls and mean time since the last reset (QPSQL
// prepares it by name: one entry per connection that prepared it).
core::Result<ClaimStats> claimStats(store::BenchQueries &sql) {
    auto stats = sql.statementStats(50);
    if (!stats)
        return stats.error();
    qint64 calls = 0;
    double totalMs = 0;
    for (const QJsonValue &value : std::as_const(stats.value())) {
        const QJsonObject row = value.toObject();
        if (!row.value(QLatin1String("query")).toString().contains(QLatin1String("WITH c AS")))
            continue;
        calls += row.value(QLatin1String("calls")).toInteger();
        totalMs += row.value(QLatin1String("total_ms")).toDouble();
    }
    return ClaimStats{calls, calls > 0 ? totalMs / double(calls) : 0.0};
}

// Resumes the paused namespace from a thread and connection of its own, as
// an operator's `outboxctl resume` would, while the dispatcher runs.
class Resumer final {
public:
    explicit Resumer(core::ConnInfo info)
        : m_info(std::move(info)) {}
    ~Resumer() { join(); }
    Q_DISABLE_COPY_MOVE(Resumer)

    void start() {
        m_thread = std::thread([this] {
            const QString name = store::uniqueConnectionName(QStringLiteral("bench-resume"));
            QElapsedTimer clock;
            clock.start();
            if (auto db = store::openDatabase(m_info, name); !db) {
                m_error = db.errorMessage();
            } else if (auto resumed =
                           store::PauseStore(db.value()).resume(kHeld, std::nullopt, kActor);
                       !resumed) {
                m_error = resumed.errorMessage();
            }
            m_seconds = double(clock.nsecsElapsed()) / 1e9;
            store::closeDatabase(name);
        });
    }
    void join() {
        if (m_thread.joinable())
            m_thread.join();
    }
    double seconds() const { return m_seconds; }
    const QString &error() const { return m_error; }

private:
    core::ConnInfo m_info;
    std::thread m_thread;
    double m_seconds = 0;
    QString m_error;
};

// One side of the comparison: a database of the benchmark's cluster, empty
// or holding the paused backlog, and what the rest's delivery cost there.
class Side final {
public:
    Side(core::ConnInfo info, const BenchOptions &o)
        : m_info(std::move(info))
        , m_o(o) {}
    ~Side() {
        m_sql = store::BenchQueries();
        if (!m_name.isEmpty())
            store::closeDatabase(m_name);
    }
    Q_DISABLE_COPY_MOVE(Side)

    core::Result<void> open(store::BenchQueries &admin, bool paused) {
        if (paused) { // a database of its own, migrated like the run's
            m_info.dbname = QStringLiteral("bench_paused");
            if (auto made = admin.exec(QStringLiteral("CREATE DATABASE bench_paused"),
                                       QStringLiteral("creating the paused side's database"));
                !made)
                return made;
        }
        m_name = store::uniqueConnectionName(QStringLiteral("bench-paused"));
        auto db = store::openDatabase(m_info, m_name);
        if (!db)
            return db.error();
        m_sql = store::BenchQueries(db.value());
        if (paused) {
            if (auto migrated = store::Migrator(db.value()).migrate(); !migrated)
                return migrated.error();
        }
        if (auto emptied = m_sql.truncate(); !emptied)
            return emptied;
        if (auto enabled = m_sql.enableStatementStats(); !enabled)
            return enabled;
        if (!paused)
            return {};
        // Paused first, then filled: the backlog an operator's pause builds.
        if (auto held = store::PauseStore(db.value())
                            .pause(kHeld, std::nullopt, QStringLiteral("bench"), kActor);
            !held)
            return held.error();
        return insert(m_o.pausedBacklog, kHeld);
    }

    // The rest's events delivered by the database-only dispatcher, then the
    // dispatcher left idle: adds the rate, the claim's mean time and the
    // idle database time per second to the lists.
    core::Result<void> round(DispatchPlan run) {
        auto loaded =
            m_sql.exec(QStringLiteral("DELETE FROM outbox_events WHERE namespace = 'live'"),
                       QStringLiteral("removing the last round's events"));
        if (loaded)
            loaded = insert(m_o.events, kLive);
        if (loaded)
            loaded = m_sql.vacuumAndCheckpoint();
        if (loaded)
            loaded = m_sql.resetStatementStats();
        if (!loaded)
            return loaded;
        core::Result<ClaimStats> claims = ClaimStats{};
        run.connInfo = m_info;
        // The delivery loop's statements only: the registry's once-a-minute
        // backlog sample counts the pending events, paused or not.
        run.options.housekeeping.registry = false;
        run.idleAfter = kIdle;
        run.onTarget = [&] {
            claims = claimStats(m_sql);
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
        rates << double(m_o.events) / ran->seconds;
        claimMs << claims->meanMs;
        idleMsPerS << idleMs.value() / (double(kIdle.count()) / 1000.0);
        return {};
    }

    core::ConnInfo connInfo() const { return m_info; }
    store::BenchQueries &sql() { return m_sql; }

    QList<double> rates, claimMs, idleMsPerS;

private:
    core::Result<void> insert(qint64 events, const QString &nameSpace) {
        return m_sql.insertEvents(
            {events, QStringLiteral("bench.") + nameSpace, m_o.payloadBytes, false, 0, nameSpace});
    }

    core::ConnInfo m_info;
    const BenchOptions &m_o;
    QString m_name;
    store::BenchQueries m_sql;
};

} // namespace

core::Result<QJsonObject> measurePausedBacklog(BenchCluster &database, const BenchOptions &o,
                                               const std::function<DispatchPlan(qint64)> &plan,
                                               const Progress &progress) {
    Side nothing(database.connInfo(), o);
    Side paused(database.connInfo(), o);
    progress(QStringLiteral("paused backlog: loading %1 paused events...").arg(o.pausedBacklog));
    if (auto opened = nothing.open(database.sql(), false); !opened)
        return opened.error();
    if (auto opened = paused.open(database.sql(), true); !opened)
        return opened.error();
    // The sides alternate, round by round: the machine's load hits both alike.
    QList<double> ratios;
    for (int round = 1; round <= o.repeat; ++round) {
        for (Side *side : {&nothing, &paused}) {
            progress(QStringLiteral("paused backlog: %1 events, %2 (round %3 of %4)...")
                         .arg(o.events)
                         .arg(side == &paused ? QStringLiteral("%1 paused events older than them")
                                                    .arg(o.pausedBacklog)
                                              : QStringLiteral("nothing paused"))
                         .arg(round)
                         .arg(o.repeat));
            if (auto ran = side->round(plan(o.events)); !ran)
                return ran.error();
        }
        ratios << paused.rates.last() / std::max(nothing.rates.last(), 1.0);
    }
    QJsonObject out{{QStringLiteral("events"), o.events},
                    {QStringLiteral("paused_events"), o.pausedBacklog},
                    {QStringLiteral("ratio"), rounded(median(ratios), 3)},
                    {QStringLiteral("ratio_rounds"), roundedArray(ratios, 3)}};
    for (const auto &[prefix, side] :
         {std::pair{"nothing_paused", &nothing}, std::pair{"paused", &paused}}) {
        const QString key = QLatin1String(prefix);
        out.insert(key + QStringLiteral("_events_per_s"), rounded(median(side->rates), 0));
        out.insert(key + QStringLiteral("_rounds"), roundedArray(side->rates, 0));
        out.insert(key + QStringLiteral("_claim_ms"), rounded(median(side->claimMs), 3));
        out.insert(key + QStringLiteral("_idle_db_ms_per_s"), rounded(median(side->idleMsPerS), 2));
    }

    // Resumed while a dispatcher runs: the first o.events of the backlog.
    progress(QStringLiteral("paused backlog: resuming %1 events while the dispatcher runs...")
                 .arg(o.pausedBacklog));
    Resumer resumer(paused.connInfo());
    DispatchPlan resumed = plan(std::min<qint64>(o.events, o.pausedBacklog));
    resumed.connInfo = paused.connInfo();
    resumed.onStarted = [&] { resumer.start(); };
    auto ran = runDispatcher(resumed);
    resumer.join();
    if (!resumer.error().isEmpty())
        return failure(QStringLiteral("resume: ") + resumer.error());
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
               rounded(double(resumed.target) / ran->seconds, 0));
    out.insert(QStringLiteral("resume_seconds"), rounded(resumer.seconds(), 2));

    // What is left, pending and not held, paused again.
    auto left = paused.sql().count(QStringLiteral("pending"));
    if (!left)
        return left.error();
    progress(QStringLiteral("paused backlog: pausing %1 pending events...").arg(left.value()));
    QElapsedTimer clock;
    clock.start();
    if (auto held = store::PauseStore(paused.sql().database())
                        .pause(kHeld, std::nullopt, QStringLiteral("bench"), kActor);
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
    const auto at = [&p](const char *key) { return p.value(QLatin1String(key)).toDouble(); };
    const auto rate = [](double value) { return QStringLiteral("%1 /s").arg(value, 0, 'f', 0); };
    const auto pair = [](const QString &a, const QString &b) {
        return QStringLiteral("%1 / %2").arg(a, b);
    };
    const qint64 paused = p.value(QLatin1String("paused_events")).toInteger();
    rows.append({QStringLiteral("%1 events of another namespace: nothing paused / %2 paused (%3)")
                     .arg(p.value(QLatin1String("events")).toInteger())
                     .arg(paused)
                     .arg(percent(at("ratio"))),
                 pair(rate(at("nothing_paused_events_per_s")), rate(at("paused_events_per_s")))});
    rows.append({QStringLiteral("  database time per claim: nothing paused / paused"),
                 pair(ms(at("nothing_paused_claim_ms"), 3), ms(at("paused_claim_ms"), 3))});
    rows.append(
        {QStringLiteral("  idle dispatcher, database time per second: nothing / paused"),
         pair(ms(at("nothing_paused_idle_db_ms_per_s"), 2), ms(at("paused_idle_db_ms_per_s"), 2))});
    rows.append({QStringLiteral("resume of %1 paused: first delivery after, rate, release took")
                     .arg(paused),
                 QStringLiteral("%1, %2, %3 s")
                     .arg(ms(at("resume_first_delivery_ms"), 0), rate(at("resumed_events_per_s")))
                     .arg(at("resume_seconds"), 0, 'f', 1)});
    rows.append({QStringLiteral("pause of %1 pending events (holding them) took")
                     .arg(p.value(QLatin1String("pause_existing_events")).toInteger()),
                 QStringLiteral("%1 s").arg(at("pause_seconds"), 0, 'f', 1)});
    return rows;
}

} // namespace outbox::bench
