// The dispatcher's LISTEN (dispatch::Notifier) on a real cluster: a hint on
// every (re)subscription, one per burst of NOTIFYs, resubscribed after its
// connection is killed, and what it says about listening.

#include "dispatch/notifier.h"
#include "dispatchtesting.h"

#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using dispatch::Notifier;
using testing::enqueueMany;
using testing::sqlScalar;

class TestNotifier : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void hintsOnSubscribingAndOncePerBurst() {
        Notifier::Options options;
        options.debounce = core::Millis(1000);
        options.applicationName = QStringLiteral("tst-listen");
        Notifier notifier(testing::connInfoFor(*m_pg, m_dbName), options);
        QSignalSpy notified(&notifier, &Notifier::notified);
        QSignalSpy listening(&notifier, &Notifier::listeningChanged);
        notifier.start();
        // Subscribed, and one hint for what came before the subscription.
        QCOMPARE(listening.count(), 1);
        QCOMPARE(listening.first().at(0).toBool(), true);
        QCOMPARE(listening.first().at(1).toString(), QStringLiteral("listening on outbox_events"));
        QCOMPARE(notified.count(), 1);
        QVERIFY(!backendPid().isEmpty());

        // Three transactions in a row: one hint.
        for (int i = 0; i < 3; ++i)
            QVERIFY(enqueueMany(m_db, 2));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 2, 10000);
        QTest::qWait(1200);
        QCOMPARE(notified.count(), 2);

        notifier.stop();
        QCOMPARE(listening.count(), 2);
        QCOMPARE(listening.last().at(0).toBool(), false);
        QCOMPARE(listening.last().at(1).toString(), QStringLiteral("stopped"));
        QTRY_VERIFY(backendPid().isEmpty());
        notifier.stop();
        QCOMPARE(listening.count(), 2);
    }

    void resubscribesAfterItsConnectionIsKilled() {
        Notifier::Options options;
        options.applicationName = QStringLiteral("tst-listen");
        options.healthCheckInterval = core::Millis(100);
        options.reconnectBaseDelay = core::Millis(20);
        options.reconnectMaxDelay = core::Millis(200);
        Notifier notifier(testing::connInfoFor(*m_pg, m_dbName), options);
        QSignalSpy notified(&notifier, &Notifier::notified);
        QSignalSpy listening(&notifier, &Notifier::listeningChanged);
        notifier.start();
        const QString before = backendPid();
        QVERIFY(!before.isEmpty());

        QVERIFY(sqlScalar(m_db, QStringLiteral("SELECT pg_terminate_backend(?::int)"),
                          {before.toInt()}) == QLatin1String("true"));
        // Lost, then back with a new connection and a hint for the gap.
        QTRY_COMPARE_WITH_TIMEOUT(listening.count(), 3, 10000);
        QCOMPARE(listening.at(1).at(0).toBool(), false);
        QVERIFY(!listening.at(1).at(1).toString().isEmpty());
        QCOMPARE(listening.at(2).at(0).toBool(), true);
        QCOMPARE(notified.count(), 2);
        const QString after = backendPid();
        QVERIFY(!after.isEmpty());
        QVERIFY(after != before);

        QVERIFY(enqueueMany(m_db, 1));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 3, 10000);
    }

private:
    QString backendPid() {
        return sqlScalar(m_db,
                         QStringLiteral("SELECT coalesce(max(pid)::text, '') FROM "
                                        "pg_stat_activity WHERE application_name = 'tst-listen' "
                                        "AND datname = ?::text"),
                         {m_dbName});
    }
};

QTEST_GUILESS_MAIN(TestNotifier)
#include "tst_notifier.moc"
