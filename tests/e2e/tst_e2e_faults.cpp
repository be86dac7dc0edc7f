// Faults around a running `outboxctl dispatch` process: the runner is down
// for a while (retries with backoff, nothing lost), the runner never comes
// back (dead only after max attempts), PostgreSQL restarts underneath.

#include "e2e/e2e.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace outbox::testing;

namespace {

QStringList dispatchArguments(const QString &connInfo, const QString &url,
                              const QStringList &extra) {
    return dispatchCommand(connInfo, url,
                           QStringList{QStringLiteral("--stats-interval"), QStringLiteral("1s")} +
                               extra);
}

QString runnerUrl(int port) {
    return QStringLiteral("http://127.0.0.1:%1/events").arg(port);
}

} // namespace

class TestE2eFaults final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private Q_SLOTS:
    // Connection refused for a while: every failure is recorded, retries
    // wait at least the backoff, nothing dies; once the runner listens,
    // everything is delivered exactly once.
    void runnerDownThenBack() {
        constexpr int events = 100;
        QVERIFY(insertEvents(m_db, events));
        const int port = freePort();

        CtlProcess dispatch(dispatchArguments(
            m_pg->connInfo(m_dbName), runnerUrl(port),
            {QStringLiteral("--base-delay"), QStringLiteral("200ms"), QStringLiteral("--max-delay"),
             QStringLiteral("1s"), QStringLiteral("--max-attempts"), QStringLiteral("50"),
             QStringLiteral("--poll-interval"), QStringLiteral("300ms"), QStringLiteral("--lease"),
             QStringLiteral("5s"), QStringLiteral("--request-timeout"), QStringLiteral("2s"),
             QStringLiteral("--concurrency"), QStringLiteral("32")}));
        QVERIFY(dispatch.start());

        // Every event failed at least twice, each failure in outbox_attempts.
        QTRY_VERIFY_WITH_TIMEOUT(
            scalar(m_db, QStringLiteral("SELECT count(*) FROM (SELECT event_id FROM outbox_attempts"
                                        " GROUP BY event_id HAVING count(*) >= 2) AS retried")) ==
                events,
            60000);
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'delivered'")), qint64(0));
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'dead'")), qint64(0));
        QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts"
                                             " WHERE http_status IS NOT NULL")),
                 qint64(0));
        // Every attempt so far was refused. One statement reads both counts:
        // the dispatcher keeps retrying, so two statements could see two
        // different sets of attempts.
        QCOMPARE(
            scalar(m_db, QStringLiteral("SELECT count(*) FILTER (WHERE error NOT ILIKE '%refused%'"
                                        " OR error IS NULL) FROM outbox_attempts")),
            qint64(0));
        // Attempt numbers are consecutive per event.
        QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM (SELECT event_id,"
                                             " max(attempt) = count(*) AS consecutive"
                                             " FROM outbox_attempts GROUP BY event_id) AS a"
                                             " WHERE NOT consecutive")),
                 qint64(0));
        // Equal jitter: the wait before attempt n+1 is at least half of
        // min(base * 2^(n-1), max) -- never less than 100 ms here.
        const qint64 shortestGapMs = scalar(
            m_db, QStringLiteral("SELECT floor(min(gap))::bigint FROM ("
                                 " SELECT extract(epoch FROM attempted_at - lag(attempted_at)"
                                 "   OVER (PARTITION BY event_id ORDER BY attempt)) * 1000 AS gap"
                                 " FROM outbox_attempts) AS gaps WHERE gap IS NOT NULL"));
        QVERIFY2(shortestGapMs >= 99, qPrintable(QString::number(shortestGapMs)));

        RunnerProcess runner;
        QVERIFY(runner.start(port));
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 60000);
        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(events));
        QCOMPARE(counts.duplicates, qint64(0));
        QVERIFY(dispatch.running());
        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);
    }

    // A runner that never comes back: each event is dead after exactly
    // --max-attempts attempts, each attempt recorded.
    void deadOnlyAfterMaxAttempts() {
        constexpr int events = 20;
        constexpr int maxAttempts = 3;
        QVERIFY(insertEvents(m_db, events));

        CtlProcess dispatch(dispatchArguments(
            m_pg->connInfo(m_dbName), runnerUrl(freePort()),
            {QStringLiteral("--max-attempts"), QString::number(maxAttempts),
             QStringLiteral("--base-delay"), QStringLiteral("100ms"), QStringLiteral("--max-delay"),
             QStringLiteral("200ms"), QStringLiteral("--poll-interval"), QStringLiteral("100ms"),
             QStringLiteral("--lease"), QStringLiteral("2s"), QStringLiteral("--request-timeout"),
             QStringLiteral("1s")}));
        QVERIFY(dispatch.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'dead'")),
                                  qint64(events), 60000);
        QCOMPARE(countWhere(m_db, QStringLiteral("attempts = %1").arg(maxAttempts)),
                 qint64(events));
        QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts")),
                 qint64(events * maxAttempts));
        QCOMPARE(scalar(m_db, QStringLiteral("SELECT count(*) FROM (SELECT event_id FROM"
                                             " outbox_attempts GROUP BY event_id"
                                             " HAVING count(*) = %1) AS a")
                                  .arg(maxAttempts)),
                 qint64(events));
        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);
        QVERIFY2(dispatch.lastValue(QStringLiteral("event=exit"), QStringLiteral("dead")) == events,
                 qPrintable(dispatch.output()));
    }

    // The runner's failure modes as a dispatcher sees them: a permanent
    // status dead-letters at once; a wrong signature is refused (401) and
    // retried; the runner's final counters as JSON.
    void runnerFailureModes() {
        QVERIFY(insertEvents(m_db, 10, QStringLiteral("gone")));
        QVERIFY(insertEvents(m_db, 10, QStringLiteral("signed")));

        RunnerProcess gone;
        QVERIFY(gone.start(0, {QStringLiteral("--status"), QStringLiteral("410")}));
        CtlProcess first(
            dispatchArguments(m_pg->connInfo(m_dbName), gone.url().toString(),
                              {QStringLiteral("--namespace"), QStringLiteral("gone")}));
        QVERIFY(first.start());
        QTRY_COMPARE_WITH_TIMEOUT(
            countWhere(m_db, QStringLiteral("namespace = 'gone' AND status = 'dead'")), qint64(10),
            30000);
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace = 'gone' AND attempts = 1"
                                                 " AND last_error LIKE 'HTTP 410%'")),
                 qint64(10));
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace <> 'gone' AND attempts > 0")),
                 qint64(0));
        first.terminate();
        QVERIFY(first.waitForExit(30000));
        QCOMPARE(first.exitCode(), 0);

        const TextFile runnerSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
        const TextFile otherSecret("whsec_c2VjcmV0LW9mLWFub3RoZXItcnVubmVy");
        RunnerProcess strict;
        QVERIFY(strict.start(0, {QStringLiteral("--secret-file"), runnerSecret.path(),
                                 QStringLiteral("--stats-json")}));
        CtlProcess second(
            dispatchArguments(m_pg->connInfo(m_dbName), strict.url().toString(),
                              {QStringLiteral("--namespace"), QStringLiteral("signed"),
                               QStringLiteral("--secret-file"), otherSecret.path(),
                               QStringLiteral("--base-delay"), QStringLiteral("30s")}));
        QVERIFY(second.start());
        QTRY_VERIFY_WITH_TIMEOUT(strict.counts().badSignatures >= 10, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(
            scalar(m_db,
                   QStringLiteral("SELECT count(*) FROM outbox_attempts WHERE http_status = 401")),
            qint64(10), 30000);
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace = 'signed' AND status = 'delivered'")),
                 qint64(0));
        second.terminate();
        QVERIFY(second.waitForExit(30000));
        QCOMPARE(second.exitCode(), 0);

        strict.process().terminate();
        QVERIFY(strict.process().waitForExit(30000));
        QCOMPARE(strict.process().exitCode(), 0);
        // The last line on stdout: the counters as one JSON object.
        const QStringList lines = strict.process().output().split(QLatin1Char('\n'));
        QJsonObject counters;
        for (const QString &line : lines) {
            if (line.startsWith(QLatin1Char('{')))
                counters = QJsonDocument::fromJson(line.toUtf8()).object();
        }
        QVERIFY2(!counters.isEmpty(), qPrintable(strict.process().output()));
        QCOMPARE(counters.value(QStringLiteral("bad_signatures")).toInteger(), 10);
        QCOMPARE(counters.value(QStringLiteral("delivered")).toInteger(), 0);
        QCOMPARE(counters.value(QStringLiteral("duplicates")).toInteger(), 0);
    }

    // The server restarts while the dispatcher delivers: it reconnects and
    // finishes, nothing lost.
    void postgresRestartUnderDispatcher() {
        constexpr int events = 1500;
        QVERIFY(insertEvents(m_db, events));
        RunnerProcess runner;
        QVERIFY(runner.start(0, {QStringLiteral("--latency"), QStringLiteral("10ms")}));

        CtlProcess dispatch(dispatchArguments(
            m_pg->connInfo(m_dbName), runner.url().toString(),
            {QStringLiteral("--concurrency"), QStringLiteral("8"), QStringLiteral("--batch-size"),
             QStringLiteral("20"), QStringLiteral("--poll-interval"), QStringLiteral("300ms"),
             QStringLiteral("--lease"), QStringLiteral("10s"), QStringLiteral("--request-timeout"),
             QStringLiteral("3s")}));
        QVERIFY(dispatch.start());
        QTRY_VERIFY2_WITH_TIMEOUT(runner.counts().unique >= 200,
                                  qPrintable(dispatch.output() + runner.process().output()), 60000);
        QVERIFY2(runner.counts().unique < events, "delivered everything before the restart");

        const auto restarted = m_pg->cluster().restart();
        QVERIFY2(restarted.ok(), qPrintable(restarted.errorMessage()));
        QSqlDatabase fresh = m_pg->open(m_dbName); // the old session died with the server
        QVERIFY(fresh.isOpen());

        QTRY_COMPARE_WITH_TIMEOUT(countWhere(fresh, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 120000);
        QVERIFY(dispatch.running());
        QVERIFY2(dispatch.output().contains(QLatin1String("event=reconnected")),
                 qPrintable(dispatch.output()));
        QCOMPARE(runner.counts().unique, qint64(events));
        dispatch.terminate();
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 0);
        QVERIFY(dispatch.lastValue(QStringLiteral("event=exit"), QStringLiteral("reconnects")) >=
                1);
    }
};

QTEST_GUILESS_MAIN(TestE2eFaults)
#include "tst_e2e_faults.moc"
