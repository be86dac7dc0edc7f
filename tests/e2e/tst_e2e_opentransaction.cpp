// `outboxctl dispatch --ordering aggregate` as a real process against two
// producers racing on one aggregate: A enqueues event 0 and stays open, B
// enqueues event 1 and commits first. The dispatcher does not send event 1
// while A is open, and sends 0 before 1 once A commits.

#include "devtools/devrunner.h"
#include "e2e/e2e.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace outbox::testing;

class TestE2eOpenTransaction final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestE2eOpenTransaction()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder) {}

private:
    // outbox_enqueue in `db`'s current transaction: aggregate invoice 7 with
    // `seq`, or no aggregate when `seq` is negative.
    static bool enqueue(QSqlDatabase db, int seq) {
        return sqlExec(db,
                       QStringLiteral("SELECT outbox_enqueue('e2e', 'invoice.changed',"
                                      " jsonb_build_object('seq', ?::integer), NULL, NULL,"
                                      " CASE WHEN ?::integer >= 0 THEN 'invoice' END,"
                                      " CASE WHEN ?::integer >= 0 THEN '7' END)"),
                       {seq, seq, seq});
    }

private Q_SLOTS:
    void laterCommitWaitsForTheOpenProducer() {
        outbox::devtools::DevRunner runner;
        QVERIFY(runner.listen().ok());
        runner.setRecording(true);
        CtlProcess dispatcher(
            dispatchCommand(m_pg->connInfo(m_dbName), runner.url().toString(),
                            {QStringLiteral("--ordering"), QStringLiteral("aggregate"),
                             QStringLiteral("--poll-interval"), QStringLiteral("200ms"),
                             QStringLiteral("--stats-interval"), QStringLiteral("0s"),
                             QStringLiteral("--unsigned")}));
        QVERIFY(dispatcher.start());

        QSqlDatabase a = m_pg->open(m_dbName), b = m_pg->open(m_dbName);
        QVERIFY(a.isOpen() && b.isOpen());
        QVERIFY(a.transaction());
        QVERIFY(enqueue(a, 0));
        QVERIFY(enqueue(b, 1)); // committed at once
        // An event without an aggregate committed after B's: once it is
        // delivered, a claim has seen B's event and left it.
        QVERIFY(enqueue(b, -1));
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(1), 30000);
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'pending' AND payload->>'seq' = '1'")),
                 qint64(1));

        // `outboxctl show` names the wait: A's transaction and backend.
        const QString waiting = sqlScalar(
            m_db, QStringLiteral("SELECT id FROM outbox_events WHERE payload->>'seq' = '1'"));
        CtlProcess show(
            {QStringLiteral("--db"), m_pg->connInfo(m_dbName), QStringLiteral("show"), waiting});
        QVERIFY(show.start());
        QVERIFY(show.waitForExit(30000));
        const QString shown = show.output();
        const QStringList parts{
            QStringLiteral("Waits for"),
            QStringLiteral("open transaction ") +
                sqlScalar(a, QStringLiteral("SELECT pg_current_xact_id()::text")),
            QStringLiteral("backend ") + sqlScalar(a, QStringLiteral("SELECT pg_backend_pid()"))};
        for (const QString &part : parts)
            QVERIFY2(shown.contains(part), qPrintable(shown));

        QVERIFY(a.commit());
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(3), 30000);
        dispatcher.terminate();
        QVERIFY2(dispatcher.waitForExit(30000), qPrintable(dispatcher.output()));

        QList<int> sent;
        for (const auto &request : runner.recordedRequests())
            sent << QJsonDocument::fromJson(request.body)
                        .object()
                        .value(QLatin1String("seq"))
                        .toInt();
        QCOMPARE(sent, (QList<int>{-1, 0, 1}));
    }
};

QTEST_GUILESS_MAIN(TestE2eOpenTransaction)
#include "tst_e2e_opentransaction.moc"
