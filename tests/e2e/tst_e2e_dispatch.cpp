// `outboxctl dispatch` as real processes against a real cluster and a real
// `outboxctl runner`: several dispatchers sharing one database, a dispatcher
// killed with SIGKILL, a graceful stop, batch delivery, configuration and
// startup errors.

#include "e2e/e2e.h"

#include <QtTest>

#include <vector>

using namespace outbox::testing;

namespace {

// The Standard Webhooks documentation's example secret.
const QByteArray kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const QByteArray kSecretKey = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const QByteArray kBearerToken = "e2e-bearer-6a1f0c9d2b7e";

QStringList dispatchArguments(const QString &connInfo, const QUrl &url, const QStringList &extra) {
    return dispatchCommand(connInfo, url.toString(),
                           QStringList{QStringLiteral("--stats-interval"), QStringLiteral("1s")} +
                               extra);
}

QString uuidText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

} // namespace

class TestE2eDispatch final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    void verifyNoSecrets(const QString &output) {
        QVERIFY2(!output.contains(QString::fromLatin1(kSecretKey)), "the secret was printed");
        QVERIFY2(!output.contains(QString::fromLatin1(kBearerToken)),
                 "the bearer token was printed");
    }

private Q_SLOTS:
    // Three dispatchers on one database: each event is delivered exactly
    // once (the runner counts no duplicate) and acknowledged by one of them.
    void severalDispatchersDeliverEachEventOnce() {
        constexpr int events = 5000;
        QVERIFY(insertEvents(m_db, events));

        const TextFile secret(kSecret);
        const TextFile token(kBearerToken);
        RunnerProcess runner;
        QVERIFY(runner.start(0, {QStringLiteral("--secret-file"), secret.path()}));
        const int metricsPort = freePort();

        std::vector<std::unique_ptr<CtlProcess>> dispatchers;
        for (int i = 0; i < 3; ++i) {
            QStringList extra{QStringLiteral("--secret-file"),       secret.path(),
                              QStringLiteral("--bearer-token-file"), token.path(),
                              QStringLiteral("--concurrency"),       QStringLiteral("16"),
                              QStringLiteral("--batch-size"),        QStringLiteral("50"),
                              QStringLiteral("--poll-interval"),     QStringLiteral("200ms")};
            if (i == 0)
                extra << QStringLiteral("--metrics-addr")
                      << QStringLiteral("127.0.0.1:%1").arg(metricsPort);
            dispatchers.push_back(std::make_unique<CtlProcess>(
                dispatchArguments(m_pg->connInfo(m_dbName), runner.url(), extra)));
            QVERIFY(dispatchers.back()->start());
        }

        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 120000);

        // The Prometheus endpoint of the first one.
        {
            QNetworkAccessManager manager;
            QNetworkReply *reply = manager.get(QNetworkRequest(
                QUrl(QStringLiteral("http://127.0.0.1:%1/metrics").arg(metricsPort))));
            QSignalSpy done(reply, &QNetworkReply::finished);
            QVERIFY(done.wait(10000));
            const QByteArray metrics = reply->readAll();
            QVERIFY2(metrics.contains("outbox_dispatch_delivered_total"), metrics.constData());
        }

        qint64 acknowledged = 0;
        for (auto &dispatcher : dispatchers) {
            dispatcher->terminate();
            QVERIFY2(dispatcher->waitForExit(30000), qPrintable(dispatcher->output()));
            QVERIFY(dispatcher->exitedNormally());
            QCOMPARE(dispatcher->exitCode(), 0);
            const qint64 delivered =
                dispatcher->lastValue(QStringLiteral("event=exit"), QStringLiteral("delivered"));
            QVERIFY2(delivered >= 0, qPrintable(dispatcher->output()));
            acknowledged += delivered;
            verifyNoSecrets(dispatcher->output());
        }
        QCOMPARE(acknowledged, qint64(events));

        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(events));
        QCOMPARE(counts.duplicates, qint64(0));
        QCOMPARE(counts.badSignatures, qint64(0));
        QCOMPARE(counts.delivered, qint64(events));
        QCOMPARE(countWhere(m_db, QStringLiteral("status <> 'delivered'")), qint64(0));
        QCOMPARE(countWhere(m_db, QStringLiteral("attempts <> 1")), qint64(0));
        verifyNoSecrets(runner.process().output());
    }

    // `dispatch --delivery batch` against `runner --fail-rate`: signed
    // batches, a share of each failed and retried, everything delivered in
    // far fewer requests than events.
    void batchDeliveryThroughTheCommands() {
        constexpr int events = 2000;
        QVERIFY(insertEvents(m_db, events));

        const TextFile secret(kSecret);
        RunnerProcess runner;
        QVERIFY(runner.start(0, {QStringLiteral("--secret-file"), secret.path(),
                                 QStringLiteral("--fail-rate"), QStringLiteral("0.2")}));
        CtlProcess dispatcher(dispatchArguments(
            m_pg->connInfo(m_dbName), runner.url(),
            {QStringLiteral("--secret-file"), secret.path(), QStringLiteral("--delivery"),
             QStringLiteral("batch"), QStringLiteral("--batch-max-events"), QStringLiteral("50"),
             QStringLiteral("--batch-size"), QStringLiteral("100"), QStringLiteral("--concurrency"),
             QStringLiteral("300"), QStringLiteral("--max-attempts"), QStringLiteral("40"),
             QStringLiteral("--base-delay"), QStringLiteral("50ms"), QStringLiteral("--max-delay"),
             QStringLiteral("200ms")}));
        QVERIFY(dispatcher.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 120000);
        dispatcher.terminate();
        QVERIFY2(dispatcher.waitForExit(30000), qPrintable(dispatcher.output()));
        QCOMPARE(dispatcher.exitCode(), 0);
        QVERIFY2(dispatcher.output().contains(QLatin1String("delivery=batch batch-max-events=50")),
                 qPrintable(dispatcher.output()));

        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(events));
        QCOMPARE(counts.duplicates, qint64(0));
        QCOMPARE(counts.badSignatures, qint64(0));
        QVERIFY2(counts.received < events / 10, qPrintable(QString::number(counts.received)));
        QVERIFY(countWhere(m_db, QStringLiteral("attempts > 1")) > 0); // the failed share, retried
        verifyNoSecrets(dispatcher.output());
    }

    // SIGKILL mid-batch: the rows the dead dispatcher held are delivered by
    // another one once their leases expire (not before), and only those are
    // sent twice.
    void killedDispatcherIsCoveredByLeaseExpiry() {
        constexpr int events = 600;
        constexpr int concurrency = 20;
        QVERIFY(insertEvents(m_db, events));
        RunnerProcess runner;
        QVERIFY(runner.start(0, {QStringLiteral("--latency"), QStringLiteral("300ms")}));

        const auto arguments = [&](const QUuid &worker) {
            return dispatchArguments(m_pg->connInfo(m_dbName), runner.url(),
                                     {QStringLiteral("--concurrency"), QString::number(concurrency),
                                      QStringLiteral("--batch-size"), QStringLiteral("10"),
                                      QStringLiteral("--lease"), QStringLiteral("2s"),
                                      QStringLiteral("--poll-interval"), QStringLiteral("500ms"),
                                      QStringLiteral("--request-timeout"), QStringLiteral("1s"),
                                      QStringLiteral("--worker-id"), uuidText(worker)});
        };
        const QUuid first = QUuid::createUuid();
        CtlProcess victim(arguments(first));
        QVERIFY(victim.start());
        QTRY_VERIFY_WITH_TIMEOUT(runner.counts().received >= 3 * concurrency, 60000);
        victim.killHard();
        QVERIFY(victim.waitForExit(10000));
        QCOMPARE(victim.exitedNormally(), false);

        // What it held when it died: leased rows, requests in flight.
        QVERIFY(sqlExec(m_db, QStringLiteral("CREATE TEMP TABLE held AS SELECT id, locked_until"
                                             "  FROM outbox_events WHERE locked_by = '%1'")
                                  .arg(uuidText(first))));
        const qint64 held =
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM held")).toLongLong();
        QVERIFY2(held > 0, "the dispatcher held no lease when it was killed");
        QVERIFY(held <= concurrency + 10); // in flight + acks not yet written

        CtlProcess survivor(arguments(QUuid::createUuid()));
        QVERIFY(survivor.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 90000);
        survivor.terminate();
        QVERIFY(survivor.waitForExit(30000));
        QCOMPARE(survivor.exitCode(), 0);

        // Not taken over before the lease ended.
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events e JOIN held h"
                                           " USING (id) WHERE e.delivered_at < h.locked_until")),
            QStringLiteral("0"));
        // Exactly the held rows took a second attempt.
        QCOMPARE(countWhere(m_db, QStringLiteral("attempts > 1")), held);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events e JOIN held h"
                                                " USING (id) WHERE e.attempts = 2")),
                 QString::number(held));

        const RunnerCounts counts = runner.counts();
        QCOMPARE(counts.unique, qint64(events));
        QVERIFY2(counts.duplicates <= concurrency,
                 qPrintable(QStringLiteral("%1 duplicates").arg(counts.duplicates)));
        QVERIFY(counts.duplicates <= held);
    }

    // SIGTERM with requests in flight: exit 0, no lease left behind, and
    // another dispatcher takes the rows at once (the lease is 60 s).
    void gracefulStopReleasesLeases() {
        constexpr int events = 300;
        QVERIFY(insertEvents(m_db, events));
        RunnerProcess runner;
        QVERIFY(runner.start(0, {QStringLiteral("--latency"), QStringLiteral("1s")}));

        const QUuid worker = QUuid::createUuid();
        CtlProcess first(dispatchArguments(
            m_pg->connInfo(m_dbName), runner.url(),
            {QStringLiteral("--concurrency"), QStringLiteral("10"), QStringLiteral("--batch-size"),
             QStringLiteral("10"), QStringLiteral("--lease"), QStringLiteral("60s"),
             QStringLiteral("--shutdown-grace"), QStringLiteral("200ms"),
             QStringLiteral("--worker-id"), uuidText(worker)}));
        QVERIFY(first.start());
        QTRY_VERIFY_WITH_TIMEOUT(runner.counts().received >= 5, 60000);
        QVERIFY(countWhere(m_db, QStringLiteral("locked_by = '%1'").arg(uuidText(worker))) > 0);

        first.terminate();
        QVERIFY2(first.waitForExit(20000), qPrintable(first.output()));
        QVERIFY(first.exitedNormally());
        QCOMPARE(first.exitCode(), 0);
        QVERIFY2(first.output().contains(QLatin1String("event=signal")),
                 qPrintable(first.output()));
        QVERIFY2(first.lastValue(QStringLiteral("event=exit"), QStringLiteral("released")) > 0,
                 qPrintable(first.output()));
        QCOMPARE(countWhere(m_db, QStringLiteral("locked_by = '%1'").arg(uuidText(worker))),
                 qint64(0));
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'processing'")), qint64(0));
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'pending' AND next_attempt_at > now()")),
                 qint64(0));

        QElapsedTimer clock;
        clock.start();
        CtlProcess second(dispatchArguments(m_pg->connInfo(m_dbName), runner.url(),
                                            {QStringLiteral("--concurrency"), QStringLiteral("100"),
                                             QStringLiteral("--lease"), QStringLiteral("60s")}));
        QVERIFY(second.start());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(events), 45000);
        QVERIFY(clock.elapsed() < 60000); // well inside the 60 s lease
        second.terminate();
        QVERIFY(second.waitForExit(30000));
        QCOMPARE(second.exitCode(), 0);
        QCOMPARE(runner.counts().unique, qint64(events));
    }

    void refusesInvalidConfiguration_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("poll above lease/3")
            << commandLine("--lease 3s --poll-interval 2s")
            << QStringLiteral("--poll-interval (2s) must be at most a third of --lease");
        QTest::newRow("timeout not below lease")
            << commandLine("--lease 5s --request-timeout 5s")
            << QStringLiteral("--request-timeout (5s) must be shorter than --lease");
        QTest::newRow("zero concurrency")
            << commandLine("--concurrency 0") << QStringLiteral("--concurrency must be at least 1");
        QTest::newRow("duration without unit")
            << commandLine("--lease 30") << QStringLiteral("--lease");
        QTest::newRow("bad permanent status") << commandLine("--permanent-status 410,abc")
                                              << QStringLiteral("--permanent-status: 'abc'");
        QTest::newRow("bad metrics address")
            << commandLine("--metrics-addr 9464") << QStringLiteral("--metrics-addr");
        QTest::newRow("unknown delivery")
            << commandLine("--delivery bulk")
            << QStringLiteral("--delivery 'bulk' is unknown; use per-event");
        QTest::newRow("zero batch max events")
            << commandLine("--delivery batch --batch-max-events 0")
            << QStringLiteral("--batch-max-events must be at least 1");
        QTest::newRow("missing secret file") << commandLine("--secret-file /nonexistent/secret")
                                             << QStringLiteral("--secret-file: cannot read");
    }

    void refusesInvalidConfiguration() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        CtlProcess dispatch(dispatchArguments(m_pg->connInfo(m_dbName),
                                              QUrl(QStringLiteral("http://127.0.0.1:9/events")),
                                              arguments));
        QVERIFY(dispatch.start());
        QVERIFY(dispatch.waitForExit(30000));
        QVERIFY2(dispatch.exitCode() == 2, qPrintable(dispatch.output()));
        QVERIFY2(dispatch.output().contains(message), qPrintable(dispatch.output()));
    }

    void refusesMissingRunnerUrl() {
        CtlProcess dispatch(
            {QStringLiteral("--db"), m_pg->connInfo(m_dbName), QStringLiteral("dispatch")});
        QVERIFY(dispatch.start());
        QVERIFY(dispatch.waitForExit(30000));
        QCOMPARE(dispatch.exitCode(), 2);
        QVERIFY2(dispatch.output().contains(QLatin1String("--runner-url is missing")),
                 qPrintable(dispatch.output()));
    }

    // A malformed secret is refused without echoing it.
    void malformedSecretIsNotEchoed() {
        const QByteArray secret = "whsec_%%%not-base64-TOPSECRETMARKER";
        const TextFile file(secret);
        CtlProcess dispatch(dispatchArguments(m_pg->connInfo(m_dbName),
                                              QUrl(QStringLiteral("http://127.0.0.1:9/events")),
                                              {QStringLiteral("--secret-file"), file.path()}));
        QVERIFY(dispatch.start());
        QVERIFY(dispatch.waitForExit(30000));
        QVERIFY2(dispatch.exitCode() == 2, qPrintable(dispatch.output()));
        QVERIFY(!dispatch.output().isEmpty());
        QVERIFY2(!dispatch.output().contains(QLatin1String("TOPSECRETMARKER")),
                 qPrintable(dispatch.output()));

        // The same secret from the environment.
        QProcessEnvironment env = e2eEnvironment();
        env.insert(QStringLiteral("OUTBOX_RUNNER_SECRET"), QString::fromLatin1(secret));
        CtlProcess fromEnvironment(
            dispatchArguments(m_pg->connInfo(m_dbName),
                              QUrl(QStringLiteral("http://127.0.0.1:9/events")), {}),
            env);
        QVERIFY(fromEnvironment.start());
        QVERIFY(fromEnvironment.waitForExit(30000));
        QVERIFY2(fromEnvironment.exitCode() == 2, qPrintable(fromEnvironment.output()));
        QVERIFY2(!fromEnvironment.output().contains(QLatin1String("TOPSECRETMARKER")),
                 qPrintable(fromEnvironment.output()));
    }

    // A database that is not there yet is waited for (a daemon); one
    // without the schema, or that does not exist, ends the command.
    void startupErrors() {
        const QUrl url(QStringLiteral("http://127.0.0.1:9/events"));
        {
            QTemporaryDir nowhere;
            CtlProcess waiting(dispatchArguments(
                QStringLiteral("host=%1 port=%2 dbname=outbox").arg(nowhere.path()).arg(freePort()),
                url, {}));
            QVERIFY(waiting.start());
            QTRY_VERIFY_WITH_TIMEOUT(waiting.output().contains(QLatin1String("will_retry=true")),
                                     30000);
            QTest::qWait(1500);
            QVERIFY2(waiting.running(), qPrintable(waiting.output()));
            waiting.terminate();
            QVERIFY2(waiting.waitForExit(30000), qPrintable(waiting.output()));
            QCOMPARE(waiting.exitCode(), 0);
        }
        {
            const QString empty = m_pg->freshDatabase();
            CtlProcess unmigrated(dispatchArguments(m_pg->connInfo(empty), url, {}));
            QVERIFY(unmigrated.start());
            QVERIFY(unmigrated.waitForExit(30000));
            // The same exit code as every other command on such a database.
            QVERIFY2(unmigrated.exitCode() == 2, qPrintable(unmigrated.output()));
            QVERIFY2(unmigrated.output().contains(QLatin1String("migrate")),
                     qPrintable(unmigrated.output()));
        }
        {
            CtlProcess missing(
                dispatchArguments(m_pg->connInfo(QStringLiteral("no_such_database")), url, {}));
            QVERIFY(missing.start());
            QVERIFY(missing.waitForExit(30000));
            QVERIFY2(missing.exitCode() == 2, qPrintable(missing.output()));
            QVERIFY2(missing.output().contains(QLatin1String("no_such_database")),
                     qPrintable(missing.output()));
        }
    }
};

QTEST_GUILESS_MAIN(TestE2eDispatch)
#include "tst_e2e_dispatch.moc"
