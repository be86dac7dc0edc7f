// LiveCounts: exact counts where they are cheap, the per-topic breakdown
// rerun only after a change and marked estimated in between; pages of a
// search bounded by a statement timeout; the oldest due event (what the
// console's alert watches: pending, due, not paused) and the pending events
// held back by an earlier unfinished event of their aggregate, with the
// filter that lists them.

#include "store/database.h"
#include "store/livecounts.h"
#include "store/migrator.h"
#include "store/pausestore.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QSet>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

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

// One event; intervals are PostgreSQL interval texts relative to now().
QString insertTimedEvent(QSqlDatabase db, const QString &nameSpace, const QString &status,
                         const QString &createdAgo, const QString &dueIn,
                         const QString &aggregateId = {}) {
    return sqlScalar(
        db,
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts,"
            " next_attempt_at, created_at, aggregate_type, aggregate_id, locked_by, locked_until)"
            " VALUES (outbox_uuid_v7(), ?, 'invoice.paid', '{}', ?::text,"
            "  CASE WHEN ?::text = 'pending' THEN 0 ELSE 3 END, now() + ?::interval,"
            "  now() - ?::interval, CASE WHEN ?::text <> '' THEN 'invoice' END, nullif(?::text, "
            "''),"
            "  CASE WHEN ?::text = 'processing' THEN gen_random_uuid() END,"
            "  CASE WHEN ?::text = 'processing' THEN now() + interval '1 minute' END)"
            " RETURNING id::text"),
        {nameSpace, status, status, dueIn, createdAgo, aggregateId, aggregateId, status, status});
}

qint64 minutesAgo(const store::StatusCounts &counts, const QDateTime &at) {
    return at.secsTo(counts.serverTime) / 60;
}

} // namespace

class TestLiveCounts final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    // The ids the filter's condition selects, as a set.
    QSet<QString> idsOf(const EventFilter &filter) {
        const store::SqlCondition condition = store::toSqlCondition(filter, QStringLiteral("e"));
        const QString ids =
            sqlScalar(m_db,
                      QStringLiteral("SELECT coalesce(string_agg(e.id::text, ','), '')"
                                     " FROM outbox_events e WHERE ") +
                          condition.sql,
                      condition.values);
        const QStringList list = ids.split(QLatin1Char(','), Qt::SkipEmptyParts);
        return QSet<QString>(list.cbegin(), list.cend());
    }

private Q_SLOTS:
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

    // A table that stands still is not counted again on every refresh: only
    // its change counter and the cheap columns are read, until the counter
    // moves.
    void aQuietTableIsCountedAgainOnlyWhenItChanges() {
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("pending"), QStringLiteral("a")));
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("dead"), QStringLiteral("a")));
        const auto publish = [this] {
            return sqlExec(m_db, QStringLiteral("SELECT pg_stat_force_next_flush()")) &&
                   sqlExec(m_db, QStringLiteral("SELECT 1"));
        };
        QVERIFY(publish());
        LiveCounts live(LiveCounts::Options{3, 1e-9, 0});
        auto first = live.refresh(m_db);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QCOMPARE(live.fullCounts(), 1);
        for (int i = 0; i < 3; ++i) {
            auto quiet = live.refresh(m_db);
            QVERIFY2(quiet.ok(), qPrintable(quiet.errorMessage()));
            QCOMPARE(quiet->pending, 5);
            QCOMPARE(quiet->dead, 4);
            QVERIFY(quiet->serverTime >= first->serverTime);
        }
        QCOMPARE(live.fullCounts(), 1);

        // A lease that runs out is seen without a recount: processing and
        // expired leases are read every time.
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'processing',"
                                             " locked_until = now() - interval '1 minute',"
                                             " locked_by = gen_random_uuid()"
                                             " WHERE id = (SELECT min(id::text)::uuid FROM"
                                             " outbox_events WHERE status = 'pending')")));
        QVERIFY(publish());
        QTRY_COMPARE_WITH_TIMEOUT(live.refresh(m_db)->expiredLeases, 1, 30000);
        QCOMPARE(live.refresh(m_db)->pending, 4);

        // New events: the counter moves and everything is counted again.
        const qint64 before = live.fullCounts();
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("pending"), QStringLiteral("b")));
        QVERIFY(publish());
        QTRY_COMPARE_WITH_TIMEOUT(live.refresh(m_db)->pending, 6, 30000);
        QVERIFY(live.fullCounts() > before);
    }

    void aSearchStopsAtItsTimeout() {
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("delivered"), QStringLiteral("a")));
        // Another session holds the table: the search has to wait, and the
        // timeout ends the wait.
        QSqlDatabase locker = m_pg->open(m_dbName, QStringLiteral("locker"));
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

    void oldestDueSkipsBackoffAndPauses() {
        LiveCounts live;
        auto counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(!counts->oldestDueAt.isValid());

        // Created two hours ago, retrying in ten minutes: pending, not due.
        QVERIFY(!insertTimedEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
                                  QStringLiteral("2 hours"), QStringLiteral("10 minutes"))
                     .isEmpty());
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(counts->oldestPendingAt.isValid());
        QVERIFY(!counts->oldestDueAt.isValid());

        // Due for 30 minutes in a paused namespace: held on purpose.
        QVERIFY(!insertTimedEvent(m_db, QStringLiteral("shipping"), QStringLiteral("pending"),
                                  QStringLiteral("1 hour"), QStringLiteral("-30 minutes"))
                     .isEmpty());
        QVERIFY(
            store::PauseStore(m_db)
                .pause(QStringLiteral("shipping"), std::nullopt, QStringLiteral("carrier down"), {})
                .ok());
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(!counts->oldestDueAt.isValid());

        // Due for 20 and 5 minutes: the oldest is 20 minutes, counted from
        // when it became due, not from its creation.
        QVERIFY(!insertTimedEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
                                  QStringLiteral("3 hours"), QStringLiteral("-20 minutes"))
                     .isEmpty());
        QVERIFY(!insertTimedEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
                                  QStringLiteral("5 minutes"), QStringLiteral("-5 minutes"))
                     .isEmpty());
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(minutesAgo(counts.value(), counts->oldestDueAt), 20);
        QCOMPARE(minutesAgo(counts.value(), counts->oldestPendingAt), 180);

        // Resumed: the paused one, due for 30 minutes, is the oldest due.
        QVERIFY(store::PauseStore(m_db).resume(QStringLiteral("shipping"), std::nullopt, {}).ok());
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(minutesAgo(counts.value(), counts->oldestDueAt), 30);
    }

    void blockedByTheirAggregate() {
        const QString ns = QStringLiteral("billing");
        const QString pending = QStringLiteral("pending");
        const QString now = QStringLiteral("0s");
        // Aggregate 1: a dead event blocks the two after it.
        const QString dead =
            insertTimedEvent(m_db, ns, QStringLiteral("dead"), QStringLiteral("3 minutes"), now,
                             QStringLiteral("1"));
        const QString b1 = insertTimedEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now,
                                            QStringLiteral("1"));
        const QString b2 = insertTimedEvent(m_db, ns, pending, QStringLiteral("1 minute"), now,
                                            QStringLiteral("1"));
        // Aggregate 2: first in line, not blocked; one without an aggregate.
        const QString head = insertTimedEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now,
                                              QStringLiteral("2"));
        const QString loose = insertTimedEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now);
        // Aggregate 3: a delivered event before a pending one blocks nothing.
        QVERIFY(!insertTimedEvent(m_db, ns, QStringLiteral("delivered"),
                                  QStringLiteral("5 minutes"), now, QStringLiteral("3"))
                     .isEmpty());
        const QString afterDelivered = insertTimedEvent(
            m_db, ns, pending, QStringLiteral("1 minute"), now, QStringLiteral("3"));
        QVERIFY(!dead.isEmpty() && !b1.isEmpty() && !b2.isEmpty() && !head.isEmpty() &&
                !loose.isEmpty() && !afterDelivered.isEmpty());

        // Aggregate order off (the default): nothing waits for its aggregate.
        QCOMPARE(LiveCounts().refresh(m_db)->blocked, 0);
        QCOMPARE(store::Migrator(m_db).enableAggregateOrder().value(), true);

        LiveCounts live;
        auto counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(counts->blocked, 2);
        QVERIFY(!counts->topicsEstimated);

        EventFilter blocked;
        blocked.status = core::Status::Pending;
        blocked.aggregateBlocked = true;
        QVERIFY(blocked.needsScan());
        QCOMPARE(blocked.describe(), QStringLiteral("status=pending blocked by its aggregate"));
        EventFilter pendingOnly;
        pendingOnly.status = core::Status::Pending;
        QVERIFY(blocked.key() != pendingOnly.key());
        QCOMPARE(idsOf(blocked), (QSet<QString>{b1, b2}));
        // Without an alias the condition still compares with the outer row.
        const auto bare = sqlScalar(m_db,
                                    QStringLiteral("SELECT count(*) FROM outbox_events"
                                                   " WHERE ") +
                                        store::toSqlCondition(blocked).sql,
                                    store::toSqlCondition(blocked).values);
        QCOMPARE(bare, QStringLiteral("2"));

        // A processing event blocks the pending one after it too.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET status = 'processing',"
                                       " locked_by = gen_random_uuid(),"
                                       " locked_until = now() + interval '1 minute'"
                                       " WHERE id = ?::uuid"),
                        {head}));
        const QString behindHead = insertTimedEvent(m_db, ns, pending, QStringLiteral("30 seconds"),
                                                    now, QStringLiteral("2"));
        live.reset();
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(counts->blocked, 3);
        QCOMPARE(idsOf(blocked), (QSet<QString>{b1, b2, behindHead}));

        // The dead one purged: its aggregate moves again.
        QVERIFY(
            sqlExec(m_db, QStringLiteral("DELETE FROM outbox_events WHERE id = ?::uuid"), {dead}));
        live.reset();
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(counts->blocked, 2); // b2 behind b1, and behindHead
        QCOMPARE(idsOf(blocked), (QSet<QString>{b2, behindHead}));
    }
};

QTEST_GUILESS_MAIN(TestLiveCounts)
#include "tst_livecounts.moc"
