// outboxctl as an operator has to trust it: what the question confirms is
// the most that changes (rows that match only while the question waits are
// left and reported), replaying twice needs --again, and each role can do
// its job with exactly its outbox_* role (producers enqueue, operators act
// through the database's functions and are named by the database).

#include "ctl.h"

#include <QtTest>

using namespace outbox::testing;

class TestOutboxctlTrust final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctlTrust()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    QString connInfo(const QString &user = {}) const {
        return m_pg->connInfo(m_dbName) +
               (user.isEmpty() ? QString() : QStringLiteral(" user=") + user);
    }

    qint64 count(const QString &where) {
        return sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") + where)
            .toLongLong();
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_cli_"),
                             {QStringLiteral("operator"), QStringLiteral("producer")});
    }

    // "Purge 50 events?" — 30 more match by the time "y" is typed: 50 go,
    // the 30 stay for the next run, and the result says so.
    void purgeChangesNoMoreThanConfirmed() {
        Seed seed{.status = QStringLiteral("delivered"),
                  .attempts = 1,
                  .createdAgo = QStringLiteral("10 minutes"),
                  .updatedAgo = QStringLiteral("5 minutes")};
        seedEvents(m_db, seed, 50);

        TerminalCtl ctl;
        QVERIFY(
            ctl.start({QStringLiteral("purge"), QStringLiteral("--status"),
                       QStringLiteral("delivered"), QStringLiteral("--older-than"),
                       QStringLiteral("1m"), QStringLiteral("--batch-size"), QStringLiteral("20"),
                       QStringLiteral("--db"), connInfo(QStringLiteral("tst_cli_operator"))}));
        QVERIFY2(ctl.waitForQuestion(), ctl.err().constData());
        QVERIFY2(ctl.err().contains("Purge 50 events"), ctl.err().constData());

        // While the question waits: 30 more delivered events old enough.
        seed.createdAgo = QStringLiteral("0s");
        seed.updatedAgo = QStringLiteral("2 minutes");
        seedEvents(m_db, seed, 30);
        QCOMPARE(count(QStringLiteral("status = 'delivered'")), 80);

        QVERIFY(ctl.answer("y\n"));
        QVERIFY(ctl.waitForFinished(60000));
        const QString out = ctl.out();
        QVERIFY2(ctl.exitCode() == 0, qPrintable(out + QString::fromUtf8(ctl.err())));
        QVERIFY2(out.startsWith(QLatin1String("purge: changed 50 of 50 confirmed, skipped 0")),
                 qPrintable(out));
        QVERIFY2(out.contains(QLatin1String("30 newer matching events left for the next run")),
                 qPrintable(out));
        QCOMPARE(count(QStringLiteral("status = 'delivered'")), 30);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT concat_ws('|', db_user, affected,"
                                                " confirmed) FROM outbox_audit")),
                 QStringLiteral("tst_cli_operator|50|50"));
    }

    // The default answer is no: Enter alone changes nothing.
    void enterAloneChangesNothing() {
        Seed seed{.status = QStringLiteral("dead"), .attempts = 3};
        seedEvents(m_db, seed, 3);
        TerminalCtl ctl;
        QVERIFY(ctl.start({QStringLiteral("cancel"), QStringLiteral("--all"),
                           QStringLiteral("--db"), connInfo()}));
        QVERIFY2(ctl.waitForQuestion(), ctl.err().constData());
        QVERIFY(ctl.answer("\n"));
        QVERIFY(ctl.waitForFinished(30000));
        QCOMPARE(ctl.exitCode(), 1);
        QCOMPARE(count(QStringLiteral("last_error LIKE 'cancelled%'")), 0);
    }

    void replayTwiceNeedsAgain() {
        Seed seed{.status = QStringLiteral("delivered"), .attempts = 1};
        seedEvents(m_db, seed, 2);
        const QStringList replay{QStringLiteral("replay"),    QStringLiteral("--status"),
                                 QStringLiteral("delivered"), QStringLiteral("--yes"),
                                 QStringLiteral("--db"),      connInfo()};
        CTL_VERIFY_EXIT(runCtl(replay), 0);
        QCOMPARE(count(QStringLiteral("replay_of IS NOT NULL")), 2);

        // Previewed: refused before anything changes, with the fix named.
        const auto previewed =
            runCtl({QStringLiteral("replay"), QStringLiteral("--status"),
                    QStringLiteral("delivered"), QStringLiteral("--dry-run"),
                    QStringLiteral("--json"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(previewed, 0);
        QCOMPARE(parseObject(previewed.out).value(QLatin1String("already_replayed")).toInteger(),
                 2);
        const auto again = runCtl(replay);
        CTL_VERIFY_EXIT(again, 2);
        QVERIFY2(again.err.contains(QLatin1String("already replayed")), qPrintable(again.err));
        QVERIFY2(again.err.contains(QLatin1String("--again")), qPrintable(again.err));
        QCOMPARE(count(QStringLiteral("replay_of IS NOT NULL")), 2);

        CTL_VERIFY_EXIT(runCtl(QStringList(replay) << QStringLiteral("--again")), 0);
        QCOMPARE(count(QStringLiteral("replay_of IS NOT NULL")), 4);
    }

    // A login granted only outbox_producer can enqueue with outboxctl, and
    // cannot act as an operator.
    void producerEnqueuesWithItsRoleOnly() {
        const auto enqueued = runCtl(
            {QStringLiteral("enqueue"), QStringLiteral("--namespace"), QStringLiteral("billing"),
             QStringLiteral("--topic"), QStringLiteral("invoice.paid"), QStringLiteral("--payload"),
             QStringLiteral("{\"invoice_id\": 42}"), QStringLiteral("--db"),
             connInfo(QStringLiteral("tst_cli_producer"))});
        CTL_VERIFY_EXIT(enqueued, 0);
        QVERIFY2(enqueued.out.contains(QLatin1String(" inserted")), qPrintable(enqueued.out));
        QCOMPARE(count(QStringLiteral("namespace = 'billing'")), 1);

        const auto purge =
            runCtl({QStringLiteral("cancel"), QStringLiteral("--all"), QStringLiteral("--yes"),
                    QStringLiteral("--db"), connInfo(QStringLiteral("tst_cli_producer"))});
        QVERIFY(purge.finished);
        QVERIFY(purge.exitCode != 0);
        QVERIFY2(purge.err.contains(QLatin1String("permission denied")), qPrintable(purge.err));
        QCOMPARE(count(QStringLiteral("status = 'pending'")), 1);
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlTrust)
#include "tst_outboxctl_trust.moc"
