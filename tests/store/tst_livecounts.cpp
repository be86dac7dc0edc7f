// LiveCounts: exact counts where they are cheap, the per-topic breakdown
// rerun only after a change and marked estimated in between; and pages of a
// search bounded by a statement timeout.

#include "store/database.h"
#include "store/livecounts.h"
#include "store/queries.h"
#include "support/pgfixture.h"

#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::store::EventFilter;
using outbox::store::LiveCounts;
using outbox::store::StatusCounts;
using outbox::testing::PgFixture;
using outbox::testing::sqlExec;

namespace {

bool insertEvents(QSqlDatabase db, int count, const QString &status, const QString &topic) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                  " status, attempts, delivered_at)"
                                  " SELECT gen_random_uuid(), 'billing', ?, jsonb_build_object("
                                  "'n', g), ?::text, CASE WHEN ?::text = 'dead' THEN 3 ELSE 0 END,"
                                  " CASE WHEN ?::text = 'delivered' THEN now() END"
                                  " FROM generate_series(1, ?) g"),
                   {topic, status, status, status, count});
}

QString topicsText(const StatusCounts &counts) {
    QStringList parts;
    for (const store::TopicCount &t : counts.topics)
        parts << QStringLiteral("%1:%2,%3").arg(t.topic).arg(t.pending).arg(t.dead);
    return parts.join(QLatin1Char(' '));
}

} // namespace

class TestLiveCounts final : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<PgFixture> m_pg;
    QString m_name;
    QSqlDatabase m_db;

private Q_SLOTS:
    void initTestCase() {
        m_pg = std::make_unique<PgFixture>();
        OUTBOX_START_PG(*m_pg);
        m_pg->setTemplatePreparer(outbox::testing::migrateSchema);
    }

    void init() {
        m_db = m_pg->openFreshMigrated(m_name);
        QVERIFY(m_db.isOpen());
    }

    void cleanup() { m_pg->closeAndDrop(m_db, m_name); }
    void cleanupTestCase() { m_pg.reset(); }

    void breakdownIsReusedUntilSomethingChanges() {
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("pending"), QStringLiteral("a")));
        QVERIFY(insertEvents(m_db, 6, QStringLiteral("dead"), QStringLiteral("a")));
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("delivered"), QStringLiteral("a")));
        // Dead beyond the cap, and a breakdown that is never due again on
        // its own (it may take a billionth of the time).
        LiveCounts live(LiveCounts::Options{3, 1e-9});
        auto first = live.refresh(m_db);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QCOMPARE(first->pending, 2);
        QCOMPARE(first->dead, 6); // from the breakdown, exact: nothing changed
        QVERIFY(!first->deadEstimated);
        // Above the cap: an estimate, never below what was counted.
        QVERIFY(first->deliveredEstimated);
        QVERIFY(first->delivered >= 4);
        QCOMPARE(topicsText(first.value()), QStringLiteral("a:2,6"));
        QVERIFY(!first->topicsEstimated);
        QVERIFY(first->topicsAt.isValid());

        // Unchanged: the breakdown still holds, nothing is marked.
        auto again = live.refresh(m_db);
        QVERIFY(again.ok());
        QCOMPARE(topicsText(again.value()), QStringLiteral("a:2,6"));
        QVERIFY(!again->topicsEstimated);
        QVERIFY(!again->deadEstimated);

        // A change in an exactly counted set: totals move at once, the
        // breakdown (not due yet) is shown as it was and marked estimated.
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("pending"), QStringLiteral("b")));
        auto changed = live.refresh(m_db);
        QVERIFY(changed.ok());
        QCOMPARE(changed->pending, 6);
        QCOMPARE(topicsText(changed.value()), QStringLiteral("a:2,6"));
        QVERIFY(changed->topicsEstimated);
        QVERIFY(changed->deadEstimated);

        // Counted again: exact and unmarked.
        live.reset();
        auto recounted = live.refresh(m_db);
        QVERIFY(recounted.ok());
        QCOMPARE(topicsText(recounted.value()), QStringLiteral("a:2,6 b:4,0"));
        QVERIFY(!recounted->topicsEstimated);
    }

    void changesBeyondTheCapAreSeenThroughTheTableStatistics() {
        QVERIFY(insertEvents(m_db, 6, QStringLiteral("dead"), QStringLiteral("a")));
        LiveCounts live(LiveCounts::Options{3, 1e-9});
        auto first = live.refresh(m_db);
        QVERIFY(first.ok());
        QVERIFY(!first->deadEstimated);
        // More dead rows: the capped count cannot see them, the table's
        // change counter does once the writer has published it.
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("dead"), QStringLiteral("a")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT pg_stat_force_next_flush()")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SELECT 1")));
        QTRY_VERIFY_WITH_TIMEOUT(live.refresh(m_db)->deadEstimated, 30000);
        // With the breakdown due at every refresh, it is counted again.
        LiveCounts eager(LiveCounts::Options{3, 1e9});
        auto exact = eager.refresh(m_db);
        QVERIFY(exact.ok());
        QCOMPARE(exact->dead, 8);
        QVERIFY(!exact->deadEstimated);
    }

    void aSearchStopsAtItsTimeout() {
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("delivered"), QStringLiteral("a")));
        // Another session holds the table: the search has to wait, and the
        // timeout ends the wait.
        QSqlDatabase locker = m_pg->open(m_name, QStringLiteral("locker"));
        QVERIFY(locker.transaction());
        QVERIFY(
            sqlExec(locker, QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
        store::PageRequest request;
        request.filter.status = core::Status::Delivered;
        request.filter.text = QStringLiteral("no such text");
        request.timeout = core::Millis(300);
        store::EventQueries queries(m_db);
        auto stopped = queries.page(request);
        QVERIFY2(stopped.ok(), qPrintable(stopped.errorMessage()));
        QCOMPARE(stopped->stoppedAfter, std::optional<core::Millis>(core::Millis(300)));
        QVERIFY(stopped->rows.isEmpty());
        QVERIFY(locker.rollback());
        locker = QSqlDatabase();
        m_pg->close(QStringLiteral("locker"));

        // The session is usable again, and the limit did not outlive the page.
        request.filter.text.clear();
        auto answered = queries.page(request);
        QVERIFY2(answered.ok(), qPrintable(answered.errorMessage()));
        QCOMPARE(answered->rows.size(), 3);
        QVERIFY(!answered->stoppedAfter);
        QCOMPARE(testing::sqlScalar(m_db, QStringLiteral("SHOW statement_timeout")),
                 QStringLiteral("0"));
    }

    void onlySearchesNeedAScan() {
        EventFilter filter;
        filter.status = core::Status::Delivered;
        filter.nameSpace = QStringLiteral("billing");
        QVERIFY(!filter.needsScan());
        filter.text = QStringLiteral("x");
        QVERIFY(filter.needsScan());
        filter.text.clear();
        filter.errorContains = QStringLiteral("timeout");
        QVERIFY(filter.needsScan());
    }
};

QTEST_GUILESS_MAIN(TestLiveCounts)
#include "tst_livecounts.moc"
