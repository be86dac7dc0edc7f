// store::Session (one connection: defaults, planner settings, probe, LISTEN)
// and store::SessionKeeper (kept connected: health check, reconnect with
// backoff, debounced notifications), against a real cluster.

#include "core/conninfo.h"
#include "store/session.h"
#include "store/sessionkeeper.h"
#include "support/pgtestcase.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

class TestSession final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    core::ConnInfo info() const {
        auto parsed = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        if (!parsed.ok()) {
            qWarning().noquote() << "cannot parse the fixture's connInfo:" << parsed.errorMessage();
            return {};
        }
        return parsed.value();
    }

    // The application_name of the server process `pid`, empty when it is gone.
    QString applicationOf(int pid) {
        return sqlScalar(m_db,
                         QStringLiteral("SELECT coalesce(max(application_name), '') FROM "
                                        "pg_stat_activity WHERE pid = ?::int"),
                         {pid});
    }

    bool terminate(int pid) {
        return sqlScalar(m_db, QStringLiteral("SELECT pg_terminate_backend(?::int)"), {pid}) ==
               QLatin1String("true");
    }

    static SessionKeeper::Options fastKeeper() {
        SessionKeeper::Options options;
        options.session.applicationName = QStringLiteral("tst-keeper");
        options.listen = SessionKeeper::Listen::Required;
        options.healthCheckInterval = core::Millis(100);
        options.reconnectMin = core::Millis(20);
        options.reconnectMax = core::Millis(200);
        return options;
    }

private Q_SLOTS:
    // --- Session ----------------------------------------------------------

    void opensWithTheDefaults() {
        Session session(info(), {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(!session.isOpen());
        QCOMPARE(session.backendPid(), 0);
        const auto opened = session.open();
        QVERIFY2(opened.ok(), qPrintable(opened.errorMessage()));
        QVERIFY(session.isOpen());
        QVERIFY(session.probe().ok());
        QVERIFY(session.backendPid() > 0);
        QCOMPARE(applicationOf(session.backendPid()), QStringLiteral("tst-session"));

        // What the connection string says wins over the default.
        core::ConnInfo own = info();
        own.setOption(QStringLiteral("application_name"), QStringLiteral("mine"));
        Session named(own, {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(named.open().ok());
        QCOMPARE(applicationOf(named.backendPid()), QStringLiteral("mine"));
    }

    // A server that accepts the TCP connection and never answers: only
    // connect_timeout ends the attempt (libpq would wait forever).
    void connectTimeoutEndsASilentServer() {
        QTcpServer silent; // its backlog accepts; nobody ever reads or writes
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        core::ConnInfo target;
        target.host = QStringLiteral("127.0.0.1");
        target.port = silent.serverPort();
        target.dbname = QStringLiteral("app");
        target.user = QStringLiteral("nobody");
        target.setOption(QStringLiteral("sslmode"), QStringLiteral("disable"));
        target.setOption(QStringLiteral("gssencmode"), QStringLiteral("disable"));

        QElapsedTimer clock;
        clock.start();
        Session byDefault(
            target, {.applicationName = QStringLiteral("tst-session"), .connectTimeoutSeconds = 2});
        const auto timedOut = byDefault.open();
        const qint64 defaultMs = clock.restart();
        QVERIFY(!timedOut.ok());
        QCOMPARE(timedOut.errorKind(), core::ErrorKind::Unavailable);
        QVERIFY2(defaultMs >= 1500 && defaultMs < 4500, qPrintable(QString::number(defaultMs)));

        // The connection string's own connect_timeout wins over the default.
        target.setOption(QStringLiteral("connect_timeout"), QStringLiteral("4"));
        Session own(target,
                    {.applicationName = QStringLiteral("tst-session"), .connectTimeoutSeconds = 2});
        QVERIFY(!own.open().ok());
        const qint64 ownMs = clock.elapsed();
        QVERIFY2(ownMs >= 3500 && ownMs < 6500, qPrintable(QString::number(ownMs)));
    }

    void closeEndsTheConnection() {
        Session session(info(), {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(session.open().ok());
        const int pid = session.backendPid();
        session.close();
        QVERIFY(!session.isOpen());
        QCOMPARE(session.backendPid(), 0);
        const auto probed = session.probe();
        QVERIFY(!probed.ok());
        QCOMPARE(probed.errorKind(), core::ErrorKind::Unavailable);
        QTRY_VERIFY(applicationOf(pid).isEmpty());

        // Open again: a new connection.
        QVERIFY(session.open().ok());
        QVERIFY(session.backendPid() > 0);
        QVERIFY(session.backendPid() != pid);
    }

    void openFailuresAreClassified() {
        core::ConnInfo nowhere = info();
        nowhere.port = 1;
        Session unreachable(nowhere, {.applicationName = QStringLiteral("tst-session")});
        const auto refused = unreachable.open();
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), core::ErrorKind::Unavailable);
        QVERIFY(!unreachable.isOpen());

        core::ConnInfo missing = info();
        missing.dbname = QStringLiteral("no_such_database");
        Session wrong(missing, {.applicationName = QStringLiteral("tst-session")});
        const auto invalid = wrong.open();
        QVERIFY(!invalid.ok());
        QCOMPARE(invalid.errorKind(), core::ErrorKind::Invalid);
    }

    void genericPlansAreTheSessionsSetting() {
        Session plain(info(), {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(plain.open().ok());
        QCOMPARE(sqlScalar(plain.database(), QStringLiteral("SHOW plan_cache_mode")),
                 QStringLiteral("auto"));

        Session generic(info(),
                        {.applicationName = QStringLiteral("tst-session"), .genericPlans = true});
        QVERIFY(generic.open().ok());
        QCOMPARE(sqlScalar(generic.database(), QStringLiteral("SHOW plan_cache_mode")),
                 QStringLiteral("force_generic_plan"));
        // Every connection of the session gets it, not only the first.
        QVERIFY(generic.open().ok());
        QCOMPARE(sqlScalar(generic.database(), QStringLiteral("SHOW plan_cache_mode")),
                 QStringLiteral("force_generic_plan"));
    }

    void probeNoticesATerminatedBackend() {
        Session session(info(), {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(session.open().ok());
        QVERIFY(terminate(session.backendPid()));
        QTRY_VERIFY(!session.probe().ok());
        QCOMPARE(session.probe().errorKind(), core::ErrorKind::Unavailable);
    }

    void createsAMissingDatabaseOnce() {
        core::ConnInfo admin = info();
        admin.dbname = QStringLiteral("postgres");
        Session session(admin, {.applicationName = QStringLiteral("tst-session")});
        QVERIFY(session.open().ok());
        const QString name = QStringLiteral("tst \"quoted\" db");
        for (int i = 0; i < 2; ++i) {
            const auto created = store::createDatabaseIfMissing(session, name);
            QVERIFY2(created.ok(), qPrintable(created.errorMessage()));
        }
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT count(*) FROM pg_database WHERE "
                                          "datname = ?::text"),
                           {name}),
                 QStringLiteral("1"));
        QVERIFY(m_pg->dropDatabase(name));
    }

    // --- SessionKeeper ----------------------------------------------------

    void keeperReconnectsAfterATerminatedBackend() {
        SessionKeeper keeper(info(), fastKeeper());
        QSignalSpy connected(&keeper, &SessionKeeper::connected);
        QSignalSpy retrying(&keeper, &SessionKeeper::retrying);
        QSignalSpy notified(&keeper, &SessionKeeper::notified);
        keeper.start();
        QCOMPARE(connected.count(), 1);
        QCOMPARE(connected.first().at(0).toBool(), false);
        QVERIFY(keeper.isConnected());
        QCOMPARE(keeper.reconnects(), 0);
        const int pid = keeper.session().backendPid();
        QCOMPARE(applicationOf(pid), QStringLiteral("tst-keeper"));
        // The first connection is no reconnect: nothing was missed.
        QTest::qWait(200);
        QCOMPARE(notified.count(), 0);

        // Noticed by the health check, re-opened, re-subscribed, and one
        // hint for what was sent while it was away.
        QVERIFY(terminate(pid));
        QTRY_COMPARE_WITH_TIMEOUT(connected.count(), 2, 10000);
        QCOMPARE(connected.last().at(0).toBool(), true);
        QVERIFY(retrying.count() >= 1);
        QCOMPARE(notified.count(), 1);
        QCOMPARE(keeper.reconnects(), 1);
        QVERIFY(keeper.isConnected());
        QVERIFY(keeper.session().backendPid() != pid);

        // The new connection LISTENs again.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT pg_notify('outbox_events', '')")));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 2, 10000);
    }

    void notificationsAreDebounced() {
        SessionKeeper::Options options = fastKeeper();
        options.debounce = core::Millis(300);
        SessionKeeper keeper(info(), options);
        QSignalSpy notified(&keeper, &SessionKeeper::notified);
        keeper.start();
        QVERIFY(keeper.isConnected());

        // A burst (twenty distinct payloads, delivered together) is one hint.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT pg_notify('outbox_events', g::text) "
                                             "FROM generate_series(1, 20) AS g")));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 1, 10000);
        QTest::qWait(600);
        QCOMPARE(notified.count(), 1);

        // Another channel is not ours.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT pg_notify('other_channel', '')")));
        QTest::qWait(600);
        QCOMPARE(notified.count(), 1);

        // The schema's own trigger uses the channel the store listens on.
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT * FROM outbox_enqueue('billing', "
                                             "'invoice.paid', '{}'::jsonb)")));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 2, 10000);
    }

    void plannerSettingSurvivesAReconnect() {
        SessionKeeper::Options options = fastKeeper();
        options.session.genericPlans = true;
        SessionKeeper keeper(info(), options);
        QSignalSpy connected(&keeper, &SessionKeeper::connected);
        keeper.start();
        QVERIFY(terminate(keeper.session().backendPid()));
        QTRY_COMPARE_WITH_TIMEOUT(connected.count(), 2, 10000);
        QCOMPARE(sqlScalar(keeper.session().database(), QStringLiteral("SHOW plan_cache_mode")),
                 QStringLiteral("force_generic_plan"));
    }

    void checkNoticesALossAtOnce() {
        SessionKeeper::Options options = fastKeeper();
        options.healthCheckInterval = core::Millis(3600 * 1000); // only check() looks
        options.reconnectMin = core::Millis(300);
        options.reconnectMax = core::Millis(1000);
        options.jitter = false;
        SessionKeeper keeper(info(), options);
        QSignalSpy retrying(&keeper, &SessionKeeper::retrying);
        QSignalSpy connected(&keeper, &SessionKeeper::connected);
        keeper.start();
        QVERIFY(keeper.check());
        QCOMPARE(retrying.count(), 0);

        QVERIFY(terminate(keeper.session().backendPid()));
        QTRY_VERIFY(!keeper.check());
        QCOMPARE(retrying.count(), 1);
        QVERIFY(!keeper.isConnected());
        QVERIFY(!keeper.session().isOpen());
        QCOMPARE(retrying.first().at(1).value<core::Millis>().count(), 300);
        QTRY_COMPARE_WITH_TIMEOUT(connected.count(), 2, 10000);
    }

    void reconnectNowReconnectsAtOnce() {
        SessionKeeper keeper(info(), fastKeeper());
        QSignalSpy connected(&keeper, &SessionKeeper::connected);
        QSignalSpy notified(&keeper, &SessionKeeper::notified);
        keeper.start();
        const int pid = keeper.session().backendPid();
        keeper.reconnectNow();
        QCOMPARE(connected.count(), 2);
        QCOMPARE(connected.last().at(0).toBool(), true);
        QCOMPARE(notified.count(), 1);
        QVERIFY(keeper.session().backendPid() != pid);
    }

    void backoffDoublesUpToTheCap() {
        core::ConnInfo nowhere = info();
        nowhere.port = 1;
        SessionKeeper::Options options = fastKeeper();
        options.reconnectMin = core::Millis(50);
        options.reconnectMax = core::Millis(200);
        options.jitter = false;
        SessionKeeper keeper(nowhere, options);
        QSignalSpy retrying(&keeper, &SessionKeeper::retrying);
        QSignalSpy gaveUp(&keeper, &SessionKeeper::gaveUp);
        keeper.start();
        QTRY_VERIFY_WITH_TIMEOUT(retrying.count() >= 5, 10000);
        keeper.stop();
        const QList<qint64> expected{50, 100, 200, 200, 200};
        for (int i = 0; i < expected.size(); ++i)
            QCOMPARE(retrying.at(i).at(1).value<core::Millis>().count(), expected.at(i));
        QVERIFY(!retrying.first().at(0).toString().isEmpty());
        QCOMPARE(gaveUp.count(), 0);

        // Stopped: no further attempt.
        const auto attempts = retrying.count();
        QTest::qWait(500);
        QCOMPARE(retrying.count(), attempts);
    }

    void jitteredBackoffStaysWithinItsRange() {
        core::ConnInfo nowhere = info();
        nowhere.port = 1;
        SessionKeeper::Options options = fastKeeper();
        options.reconnectMin = core::Millis(40);
        options.reconnectMax = core::Millis(160);
        SessionKeeper keeper(nowhere, options);
        QSignalSpy retrying(&keeper, &SessionKeeper::retrying);
        keeper.start();
        QTRY_VERIFY_WITH_TIMEOUT(retrying.count() >= 4, 10000);
        keeper.stop();
        const QList<qint64> capped{40, 80, 160, 160};
        for (int i = 0; i < capped.size(); ++i) {
            const qint64 delay = retrying.at(i).at(1).value<core::Millis>().count();
            QVERIFY2(delay >= capped.at(i) / 2 && delay <= capped.at(i),
                     qPrintable(QStringLiteral("attempt %1 waited %2 ms").arg(i + 1).arg(delay)));
        }
    }

    void givesUpOnlyWhenToldTo() {
        core::ConnInfo missing = info();
        missing.dbname = QStringLiteral("no_such_database");
        SessionKeeper::Options options = fastKeeper();
        options.giveUpOnInvalid = true;
        SessionKeeper keeper(missing, options);
        QSignalSpy retrying(&keeper, &SessionKeeper::retrying);
        QSignalSpy gaveUp(&keeper, &SessionKeeper::gaveUp);
        keeper.start();
        QCOMPARE(gaveUp.count(), 1);
        QVERIFY(gaveUp.first().at(0).toString().contains(QLatin1String("no_such_database")));
        QTest::qWait(300);
        QCOMPARE(retrying.count(), 0);

        SessionKeeper stubborn(missing, fastKeeper());
        QSignalSpy stubbornRetrying(&stubborn, &SessionKeeper::retrying);
        QSignalSpy stubbornGaveUp(&stubborn, &SessionKeeper::gaveUp);
        stubborn.start();
        QTRY_VERIFY_WITH_TIMEOUT(stubbornRetrying.count() >= 2, 10000);
        QCOMPARE(stubbornGaveUp.count(), 0);
    }

    void stopClosesTheSession() {
        SessionKeeper keeper(info(), fastKeeper());
        QSignalSpy connected(&keeper, &SessionKeeper::connected);
        QSignalSpy notified(&keeper, &SessionKeeper::notified);
        keeper.start();
        const int pid = keeper.session().backendPid();
        keeper.stop();
        QVERIFY(!keeper.isConnected());
        QVERIFY(!keeper.session().isOpen());
        QTRY_VERIFY(applicationOf(pid).isEmpty());
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT pg_notify('outbox_events', '')")));
        QTest::qWait(300);
        QCOMPARE(connected.count(), 1);
        QCOMPARE(notified.count(), 0);
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
