#include "bench/isolation.h"

#include "core/routes.h"
#include "devtools/devrunner.h"

#include <chrono>
#include <thread>

namespace outbox::bench {

namespace {

const QString kTopic = QStringLiteral("bench.isolation");
constexpr core::Millis kSlowAnswer{2000};

// A to the in-process runner, B to the benchmark's (whose secret the
// dispatcher signs with).
QString routesText(const QUrl &a, const QUrl &b) {
    return QStringLiteral("[destination a]\nkind = http\nurl = %1\nconcurrency = 8\n"
                          "[destination b]\nkind = http\nurl = %2\n"
                          "[route]\nnamespace = iso-a\ndestination = a\n"
                          "[route]\nnamespace = iso-b\ndestination = b\n")
        .arg(a.toString(), b.toString());
}

} // namespace

core::Result<QJsonObject> measureIsolation(BenchCluster &database, const BenchOptions &o,
                                           const std::function<DispatchPlan(qint64)> &httpPlan,
                                           const Progress &progress) {
    devtools::DevRunner a;
    if (auto listening = a.listen(); !listening)
        return listening.error();
    const QUrl urlA = a.url(); // still A's once its port is closed

    // B's events in an empty table, after (with `withA`) as many of A's: the
    // backlog a failing
    // destination builds up. Older than the claim floor's margin (1 s,
    // OutboxStore::claimFloor) than B's, as a backlog that grew over time
    // is; events of A created within that margin of B's oldest pending
    // event are walked by every claim.
    const auto load = [&](bool withA) -> core::Result<void> {
        // Every run on the same table: what it holds, and no more.
        if (auto emptied = database.sql().truncate(); !emptied)
            return emptied;
        for (const bool isA : {true, false}) {
            if (isA && !withA)
                continue;
            store::BenchInsert insert;
            insert.events = o.events;
            insert.topic = kTopic;
            insert.payloadBytes = o.payloadBytes;
            insert.nameSpace = isA ? QStringLiteral("iso-a") : QStringLiteral("iso-b");
            if (auto inserted = database.sql().insertEvents(insert); !inserted)
                return inserted;
            if (isA)
                std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        }
        return database.sql().vacuumAndCheckpoint();
    };
    const qint64 target = o.events;
    // A's failed attempts, its events handed back unattempted and the dead,
    // over the runs.
    qint64 failedAtA = 0, returnedByA = 0, dead = 0;
    const auto runB = [&](const QString &what) -> core::Result<double> {
        progress(QStringLiteral("isolation: %1 events to B, %2...").arg(target).arg(what));
        DispatchPlan plan = httpPlan(target);
        QList<core::RoutesError> errors;
        core::Routes routes = core::Routes::parse(routesText(urlA, plan.config.runnerUrl), errors);
        if (!errors.isEmpty())
            return failure(errors.first().message);
        if (auto applied = core::applyRoutes(plan.config, routes, QStringLiteral("isolation"));
            !applied)
            return applied.error();
        auto run = runDispatcher(plan);
        if (!run)
            return run.error();
        dead += run->stats.dead;
        for (const dispatch::DestinationStats &destination : run->stats.destinations) {
            if (destination.name == QLatin1String("a")) {
                failedAtA += destination.failed;
                returnedByA += destination.returned;
            }
        }
        return double(target) / std::max(run->seconds, 1e-9);
    };

    // Rounds of the three runs back to back (`--repeat`): the machine's load
    // changes both sides of a round's ratios alike; medians are reported.
    Rounds rounds;
    for (int round = 1; round <= std::max(o.repeat, 1); ++round) {
        if (round > 1) {
            if (auto listening = a.listen(QHostAddress::LocalHost, quint16(urlA.port()));
                !listening)
                return listening.error();
        }
        if (auto loaded = load(false); !loaded)
            return loaded.error();
        auto alone = runB(QStringLiteral("alone"));
        if (!alone)
            return alone.error();
        a.setLatency(core::Millis(0));
        a.setFixedStatus(503);
        if (auto loaded = load(true); !loaded)
            return loaded.error();
        auto failing = runB(QStringLiteral("A answering 503"));
        if (!failing)
            return failing.error();
        // Slow, not failing: A's circuit stays closed, its limit of 8 full.
        a.setFixedStatus(0);
        a.setLatency(kSlowAnswer);
        if (auto loaded = load(true); !loaded)
            return loaded.error();
        auto slow = runB(QStringLiteral("A answering in 2 s"));
        if (!slow)
            return slow.error();
        a.close();
        if (auto loaded = load(true); !loaded)
            return loaded.error();
        auto closed = runB(QStringLiteral("A's port closed"));
        if (!closed)
            return closed.error();
        rounds[QStringLiteral("alone_events_per_s")] << alone.value();
        rounds[QStringLiteral("a_503_events_per_s")] << failing.value();
        rounds[QStringLiteral("a_closed_events_per_s")] << closed.value();
        rounds[QStringLiteral("a_slow_events_per_s")] << slow.value();
        rounds[QStringLiteral("a_slow_ratio")] << slow.value() / alone.value();
        rounds[QStringLiteral("a_503_ratio")] << failing.value() / alone.value();
        rounds[QStringLiteral("a_closed_ratio")] << closed.value() / alone.value();
    }
    QJsonObject result = roundsJson(rounds);
    result.insert(QStringLiteral("events"), target);
    result.insert(QStringLiteral("a_failed_attempts"), failedAtA);
    result.insert(QStringLiteral("a_returned"), returnedByA);
    result.insert(QStringLiteral("dead"), dead);
    return result;
}

} // namespace outbox::bench
