// Routing and isolation with two real HTTP runners: a dispatcher with a
// routes file delivers each event to its first matching route's destination
// and claims nothing else; a destination that fails opens its circuit, and
// its events wait without burning attempts while the other destination gets
// everything; a probe closes the circuit when the destination is back.

#include "core/routes.h"
#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/metrics.h"
#include "dispatchtesting.h"
#include "store/destinationstore.h"

#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::dispatch;
using namespace outbox::testing;
using devtools::DevRunner;

namespace {

// Namespace a to destination a, everything else to b.
const QString kAToARestToB =
    QStringLiteral("[route]\nnamespace = a\ndestination = a\n[route]\ndestination = b\n");

// The dispatcher's configuration for destinations a (runner A, with
// `settingsOfA` besides its kind and URL) and b (runner B), and `routes`.
core::DispatcherConfig routedConfig(const DevRunner &a, const QString &settingsOfA,
                                    const DevRunner &b, const QString &routes) {
    const QString text = QStringLiteral("[destination a]\nkind = http\nurl = ") +
                         a.url().toString() + QLatin1Char('\n') + settingsOfA +
                         QStringLiteral("[destination b]\nkind = http\nurl = ") +
                         b.url().toString() + QLatin1Char('\n') + routes;
    QList<core::RoutesError> errors;
    core::Routes parsed = core::Routes::parse(text, errors);
    for (const core::RoutesError &error : errors)
        qWarning("line %d: %s", error.line, qPrintable(error.message));
    core::DispatcherConfig config = baseConfig(QUrl());
    if (!errors.isEmpty())
        return config;
    if (auto applied = core::applyRoutes(config, parsed, QStringLiteral("test.routes")); !applied)
        qWarning("%s", qPrintable(applied.errorMessage()));
    return config;
}

bool enqueue(QSqlDatabase db, const QString &nameSpace, const QString &topic, int count) {
    return sqlExec(db,
                   QStringLiteral("SELECT outbox_enqueue(?::text, ?::text, jsonb_build_object('n',"
                                  " g)) FROM generate_series(1, ?::int) g"),
                   {nameSpace, topic, count});
}

QList<QUuid> idsOf(QSqlDatabase db, const QString &condition) {
    QList<QUuid> ids;
    QSqlQuery query(db);
    if (!query.exec(QStringLiteral("SELECT id FROM outbox_events WHERE ") + condition))
        return ids;
    while (query.next())
        ids << QUuid::fromString(query.value(0).toString());
    return ids;
}

int scalar(QSqlDatabase db, const QString &sql) {
    const QString value = sqlScalar(db, sql);
    return value.isNull() ? -1 : value.toInt();
}

std::optional<DestinationStats> destination(const DispatcherHost &host, const QString &name) {
    for (const DestinationStats &stats : host.lastStats().destinations) {
        if (stats.name == name)
            return stats;
    }
    return std::nullopt;
}

QString circuitOf(const DispatcherHost &host, const QString &name) {
    const auto stats = destination(host, name);
    return stats ? stats->circuit : QString();
}

} // namespace

class TestRouting : public DispatchTestSuite {
    Q_OBJECT

    void othersGoOutBeside(const QString &settingsOfA, core::Millis latencyOfA);

private Q_SLOTS:
    void firstMatchingRouteWinsAndUnmatchedIsNotClaimed();
    void openCircuitKeepsAttemptsAndProbeCloses();
    void pausedDestinationWaitsUntilResumed();
    void slowDestinationLeavesRoomForTheOthers();
    void rateLimitedDestinationLeavesRoomForTheOthers();
    void openCircuitsBacklogDoesNotSpinTheClaims();
};

// With A's circuit open and B drained, A's due backlog is nothing this
// dispatcher may claim: it polls, it does not claim again and again.
void TestRouting::openCircuitsBacklogDoesNotSpinTheClaims() {
    DevRunner a;
    DevRunner b;
    QVERIFY(a.listen().ok());
    QVERIFY(b.listen().ok());
    const auto config = routedConfig(
        a, QStringLiteral("circuit-failures = 2\ncircuit-open = 60s\nconcurrency = 2\n"), b,
        kAToARestToB);
    QVERIFY(config.routes);
    a.close(); // refused
    QVERIFY(enqueue(m_db, QStringLiteral("a"), QStringLiteral("t"), 50));
    QVERIFY(enqueue(m_db, QStringLiteral("b"), QStringLiteral("t"), 10));
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(b.stats().uniqueIds, qint64(10), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(circuitOf(*host, QStringLiteral("a")), QStringLiteral("open"), 20000);
    QTest::qWait(500); // the last outcomes written
    const qint64 before = host->lastStats().claims;
    QTest::qWait(3000);
    const qint64 claims = host->lastStats().claims - before;
    // The poll (1 s) claims about three times in 3 s; a claim after every
    // claim made thousands.
    QVERIFY2(claims <= 30, qPrintable(QString::number(claims)));
    QVERIFY(stopHost(*host));
}

// A's backlog, older than B's events, at a destination that takes a while
// (`settingsOfA`, A's latency): B's events go out at once beside it, while
// A has delivered only a few of its own.
void TestRouting::othersGoOutBeside(const QString &settingsOfA, core::Millis latencyOfA) {
    DevRunner a;
    DevRunner b;
    QVERIFY(a.listen().ok());
    QVERIFY(b.listen().ok());
    a.setLatency(latencyOfA);
    const auto config = routedConfig(a, settingsOfA, b, kAToARestToB);
    QVERIFY(config.routes);
    QVERIFY(enqueue(m_db, QStringLiteral("a"), QStringLiteral("t"), 60));
    QTest::qWait(1200); // older than the claim floor's margin
    QVERIFY(enqueue(m_db, QStringLiteral("b"), QStringLiteral("t"), 20));
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(b.stats().uniqueIds, qint64(20), 60000);
    // A goes at 2 events a second: all of B before a quarter of A. (It was
    // the other way round: A's oldest events filled the dispatcher's window
    // and waited there for A.)
    const qint64 ofA = a.stats().uniqueIds;
    QVERIFY2(ofA < 15, qPrintable(QString::number(ofA)));
    // A is not starved either, and holds no more than its limit.
    QTRY_VERIFY_WITH_TIMEOUT(a.stats().uniqueIds >= ofA + 2, 20000);
    const auto stats = destination(*host, QStringLiteral("a"));
    QVERIFY(stats);
    QVERIFY2(stats->inFlight + stats->queued <= 2,
             qPrintable(QStringLiteral("%1 + %2").arg(stats->inFlight).arg(stats->queued)));
    QVERIFY(stopHost(*host));
}

// A slow destination (1 s an answer, 2 at a time) holds two of the
// dispatcher's slots, not the window.
void TestRouting::slowDestinationLeavesRoomForTheOthers() {
    othersGoOutBeside(QStringLiteral("concurrency = 2\n"), core::Millis(1000));
}

// A rate-limited destination (2 a second, its concurrency the default) holds
// a second's worth.
void TestRouting::rateLimitedDestinationLeavesRoomForTheOthers() {
    othersGoOutBeside(QStringLiteral("rate = 2\n"), core::Millis(0));
}

void TestRouting::firstMatchingRouteWinsAndUnmatchedIsNotClaimed() {
    DevRunner a;
    DevRunner b;
    QVERIFY(a.listen().ok());
    QVERIFY(b.listen().ok());
    // billing's invoice topics to A, the rest of billing to B, nothing else.
    const auto config = routedConfig(a, QString(), b,
                                     QStringLiteral("[route]\n"
                                                    "namespace = billing\n"
                                                    "topic = invoice.*\n"
                                                    "destination = a\n"
                                                    "[route]\n"
                                                    "namespace = bill?ng\n"
                                                    "destination = b\n"));
    QVERIFY(config.routes);
    QVERIFY(enqueue(m_db, QStringLiteral("billing"), QStringLiteral("invoice.paid"), 5));
    QVERIFY(enqueue(m_db, QStringLiteral("billing"), QStringLiteral("refund.made"), 4));
    QVERIFY(enqueue(m_db, QStringLiteral("shipping"), QStringLiteral("invoice.paid"), 3));

    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 9, 20000);

    for (const QUuid &id : idsOf(m_db, QStringLiteral("topic = 'invoice.paid' AND namespace = "
                                                      "'billing'"))) {
        QCOMPARE(a.deliveredCount(id), 1);
        QCOMPARE(b.deliveredCount(id), 0);
    }
    for (const QUuid &id : idsOf(m_db, QStringLiteral("topic = 'refund.made'"))) {
        QCOMPARE(a.deliveredCount(id), 0);
        QCOMPARE(b.deliveredCount(id), 1);
    }
    // Shipping matches no route: never claimed (claims would count attempts).
    QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE namespace ="
                                         " 'shipping' AND status = 'pending' AND attempts = 0")),
             3);
    QCOMPARE(a.stats().received + b.stats().received, qint64(9));
    // Not claimed and handed back either: never taken at all.
    QTRY_COMPARE_WITH_TIMEOUT(host->lastStats().delivered, qint64(9), 20000);
    QCOMPARE(host->lastStats().claimed, qint64(9));
    QCOMPARE(host->lastStats().released, qint64(0));
    QVERIFY(stopHost(*host));
}

void TestRouting::openCircuitKeepsAttemptsAndProbeCloses() {
    DevRunner a;
    DevRunner b;
    QVERIFY(a.listen().ok());
    QVERIFY(b.listen().ok());
    a.setFixedStatus(503);
    const quint16 portA = a.port();
    // A gives up after 3 attempts with a quick backoff: without a circuit
    // its events would be dead within a second.
    const auto config = routedConfig(a,
                                     QStringLiteral("max-attempts = 3\n"
                                                    "backoff = 10ms..20ms\n"
                                                    "concurrency = 2\n"
                                                    "circuit-failures = 2\n"
                                                    "circuit-open = 300ms\n"),
                                     b, kAToARestToB);
    QVERIFY(config.routes);
    QVERIFY(enqueue(m_db, QStringLiteral("a"), QStringLiteral("t"), 10));
    QVERIFY(enqueue(m_db, QStringLiteral("b"), QStringLiteral("t"), 10));
    DispatcherOptions options;
    options.housekeeping.heartbeatInterval = core::Millis(200);
    auto host = makeHost(config, {}, options);
    QVERIFY(startHost(*host));

    QTRY_COMPARE_WITH_TIMEOUT(b.stats().uniqueIds, qint64(10), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(!circuitOf(*host, QStringLiteral("a")).isEmpty() &&
                                 circuitOf(*host, QStringLiteral("a")) != QLatin1String("closed"),
                             20000);
    // The registry says so (no secrets: the target without its query). It
    // turns half-open for each probe, so the value that matched is the one
    // judged (QTRY_COMPARE reads it again after its loop).
    QString registered;
    QVERIFY2(QTest::qWaitFor(
                 [&] {
                     registered = sqlScalar(
                         m_db, QStringLiteral("SELECT d->>'circuit' FROM outbox_dispatchers,"
                                              " jsonb_array_elements(destinations) d"
                                              " WHERE d->>'name' = 'a'"));
                     return registered == QLatin1String("open");
                 },
                 20000),
             qPrintable(registered));
    // ... and which events go where, by the place of each route.
    QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg((d->>'name') || ':' || (r->>'n')"
                                            " || ' ' || (r->>'namespace') || '/' ||"
                                            " (r->>'topic'), ',' ORDER BY r->>'n')"
                                            " FROM outbox_dispatchers,"
                                            " jsonb_array_elements(destinations) d,"
                                            " jsonb_array_elements(d->'routes') r")),
             QStringLiteral("a:0 a/*,b:1 */*"));
    // The metrics say so (a gauge per state).
    const QByteArray openGauge =
        QByteArray("outbox_dispatch_destination_circuit{worker_id=\"") +
        host->lastStats().workerId.toString(QUuid::WithoutBraces).toLatin1() +
        QByteArray("\",destination=\"a\",state=\"closed\"} 0");
    QTRY_VERIFY_WITH_TIMEOUT(prometheusText(host->lastStats()).contains(openGauge), 20000);
    // A's attempts in a moment when nothing of A is in flight: one
    // statement, as the probes (every 300 ms) claim and hand back all along.
    const auto settledAttemptsOfA = [this] {
        int sum = -1;
        // On a timeout the -1 fails the comparison that uses it.
        (void)QTest::qWaitFor(
            [&] {
                sum = scalar(m_db, QStringLiteral("SELECT sum(attempts) FROM outbox_events"
                                                  " WHERE namespace = 'a' HAVING count(*) FILTER"
                                                  " (WHERE status = 'processing') = 0"));
                return sum >= 0;
            },
            20000);
        return sum;
    };
    // Settled: the failures that opened the circuit are written.
    const int attempts = settledAttemptsOfA();
    QVERIFY2(attempts >= 2 && attempts < 10, qPrintable(QString::number(attempts)));

    // A's port closed: probes keep failing; B still gets everything.
    a.close();
    const qint64 returned = destination(*host, QStringLiteral("a"))->returned;
    QVERIFY(enqueue(m_db, QStringLiteral("b"), QStringLiteral("t"), 10));
    QTRY_COMPARE_WITH_TIMEOUT(b.stats().uniqueIds, qint64(20), 20000);
    QTRY_VERIFY_WITH_TIMEOUT(destination(*host, QStringLiteral("a"))->returned >= returned + 3,
                             20000);
    QCOMPARE(settledAttemptsOfA(), attempts);
    QCOMPARE(countStatus(m_db, QStringLiteral("dead")), 0);
    QVERIFY(!destination(*host, QStringLiteral("a"))->lastError.isEmpty());

    // A is back: the next probe closes the circuit and A gets its events.
    a.setFixedStatus(0);
    QVERIFY(a.listen(QHostAddress::LocalHost, portA).ok());
    QTRY_COMPARE_WITH_TIMEOUT(a.stats().uniqueIds, qint64(10), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(countStatus(m_db, QStringLiteral("delivered")), 30, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(circuitOf(*host, QStringLiteral("a")), QStringLiteral("closed"),
                              20000);
    QCOMPARE(countStatus(m_db, QStringLiteral("dead")), 0);
    QVERIFY(stopHost(*host));
}

void TestRouting::pausedDestinationWaitsUntilResumed() {
    DevRunner a;
    DevRunner b;
    QVERIFY(a.listen().ok());
    QVERIFY(b.listen().ok());
    const auto config = routedConfig(a, QString(), b, kAToARestToB);
    QVERIFY(config.routes);
    const auto actor = store::Actor::fromEnvironment(QStringLiteral("test"));
    QVERIFY(
        store::DestinationStore(m_db).pause(QStringLiteral("a"), QStringLiteral("INC-42"), actor));
    QVERIFY(enqueue(m_db, QStringLiteral("a"), QStringLiteral("t"), 5));
    QVERIFY(enqueue(m_db, QStringLiteral("b"), QStringLiteral("t"), 5));
    auto host = makeHost(config);
    QVERIFY(startHost(*host));
    QTRY_COMPARE_WITH_TIMEOUT(b.stats().uniqueIds, qint64(5), 20000);
    // Claims that came after b's events were delivered still left a's alone.
    const qint64 claims = host->lastStats().claims;
    QTRY_VERIFY_WITH_TIMEOUT(host->lastStats().claims > claims + 1, 20000);
    QCOMPARE(a.stats().received, qint64(0));
    QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE namespace ="
                                         " 'a' AND status = 'pending' AND attempts = 0")),
             5);

    QVERIFY(store::DestinationStore(m_db).resume(QStringLiteral("a"), actor).value());
    QTRY_COMPARE_WITH_TIMEOUT(a.stats().uniqueIds, qint64(5), 20000);
    QVERIFY(stopHost(*host));
}

QTEST_GUILESS_MAIN(TestRouting)
#include "tst_routing.moc"
