// Error grouping at a cost an idle console can afford: the newest events
// only (a sample, said so), the kinds counted before the limit, and
// ErrorGroupWatch grouping again only when the table changed.

#include "store/errorgroups.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

namespace {

// `count` dead events with `error`, created `ago` (a PostgreSQL interval) ago.
bool insertDead(QSqlDatabase db, int count, const QString &error,
                const QString &ago = QStringLiteral("0 s")) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                  " status, attempts, last_error, created_at)"
                                  " SELECT gen_random_uuid(), 'billing', 'invoice.paid',"
                                  "  jsonb_build_object('n', g), 'dead', 3, ?, now() - ?::interval"
                                  " FROM generate_series(1, ?) g"),
                   {error, ago, count});
}

// Publishes this session's table statistics at once (the change counter
// ErrorGroupWatch reads), instead of within a few seconds.
bool publishStatistics(QSqlDatabase db) {
    return sqlExec(db, QStringLiteral("SELECT pg_stat_force_next_flush()")) &&
           sqlExec(db, QStringLiteral("SELECT 1"));
}

} // namespace

class TestErrorGroups final : public PgTestSuite {
    Q_OBJECT

    // `dead` events of one kind, published, and the watch's first grouping.
    core::Result<ErrorGroupSet> groupedOnce(ErrorGroupWatch &watch, int dead, QDateTime &now) {
        if (!insertDead(m_db, dead, QStringLiteral("HTTP 503 from runner")) ||
            !publishStatistics(m_db))
            return core::Error{core::ErrorKind::Invalid, QStringLiteral("could not insert")};
        return watch.refresh(m_db, EventFilter{}, 50, now);
    }

private Q_SLOTS:
    void theNewestEventsAreGroupedAndTheSampleIsMarked() {
        QVERIFY(insertDead(m_db, 30, QStringLiteral("connect timeout after 5 ms"),
                           QStringLiteral("1 hour")));
        QVERIFY(insertDead(m_db, 5, QStringLiteral("HTTP 503 from runner")));

        auto sample = groupErrors(m_db, EventFilter{}, 50, 5);
        QVERIFY2(sample.ok(), qPrintable(sample.errorMessage()));
        QCOMPARE(sample->grouped, 5);
        QVERIFY(sample->sampled);
        QCOMPARE(sample->kinds, 1);
        QCOMPARE(sample->groups.size(), 1);
        QCOMPARE(sample->groups.at(0).signature, QStringLiteral("HTTP 503 from runner"));
        QVERIFY(sample->groupedAt.isValid());

        auto all = groupErrors(m_db, EventFilter{}, 1, 35);
        QVERIFY(all.ok());
        QCOMPARE(all->grouped, 35);
        QVERIFY(!all->sampled);
        // Two kinds, of which the limit shows one.
        QCOMPARE(all->kinds, 2);
        QCOMPARE(all->groups.size(), 1);
        QCOMPARE(all->groups.at(0).count, 30);

        QCOMPARE(groupErrors(m_db, EventFilter{}, 50, 0).errorKind(), core::ErrorKind::Invalid);
    }

    // A search the indexes cannot answer reads the newest events of the
    // status only (kErrorGroupSearchScan) and says so: the older matches are
    // not grouped, and no plan reads every dead event.
    void aSearchReadsTheNewestEventsOnly() {
        QVERIFY(insertDead(m_db, 10, QStringLiteral("connect timeout after 5 s"),
                           QStringLiteral("1 hour")));
        QVERIFY(insertDead(m_db, kErrorGroupSearchScan - 5, QStringLiteral("HTTP 503 from runner"),
                           QStringLiteral("1 minute")));
        QVERIFY(insertDead(m_db, 5, QStringLiteral("connect timeout after 5 s")));
        EventFilter search;
        search.text = QStringLiteral("timeout");
        QVERIFY(search.needsScan());
        auto found = groupErrors(m_db, search, 50);
        QVERIFY2(found.ok(), qPrintable(found.errorMessage()));
        QCOMPARE(found->groups.size(), 1);
        QCOMPARE(found->groups.at(0).count, 5);
        QCOMPARE(found->searchedNewest, qint64(kErrorGroupSearchScan));
        QVERIFY(!found->sampled);
        // Without a search nothing is cut short by it.
        auto all = groupErrors(m_db, EventFilter{}, 50);
        QVERIFY(all.ok());
        QCOMPARE(all->searchedNewest, qint64(0));
    }

    void theWatchGroupsAgainOnlyAfterAChange() {
        ErrorGroupWatch watch(ErrorGroupWatch::Options{100, 1e9});
        QDateTime now;
        auto first = groupedOnce(watch, 3, now);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QCOMPARE(first->kinds, 1);
        QVERIFY(now.isValid());

        // Nothing changed: the same grouping, not a new one (a new one would
        // carry a later database clock).
        QTest::qWait(50);
        auto again = watch.refresh(m_db, EventFilter{}, 50, now);
        QVERIFY(again.ok());
        QCOMPARE(again->groupedAt, first->groupedAt);
        QVERIFY(now > first->groupedAt);
        QVERIFY(!again->stale);

        // Another filter is another question: grouped at once.
        EventFilter topic;
        topic.topic = QStringLiteral("invoice.paid");
        auto other = watch.refresh(m_db, topic, 50, now);
        QVERIFY(other.ok());
        QVERIFY(other->groupedAt > first->groupedAt);

        // A change is grouped again once the writer has published it.
        QVERIFY(insertDead(m_db, 1, QStringLiteral("TLS handshake failed")));
        QVERIFY(publishStatistics(m_db));
        QTRY_COMPARE_WITH_TIMEOUT(watch.refresh(m_db, topic, 50, now)->kinds, 2, 30000);
    }

    void aChangeWaitsForItsShareOfTimeMarkedStale() {
        // A duty cycle of zero: once grouped, never due again.
        ErrorGroupWatch watch(ErrorGroupWatch::Options{100, 0});
        QDateTime now;
        auto first = groupedOnce(watch, 2, now);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QVERIFY(!first->stale);
        QVERIFY(insertDead(m_db, 1, QStringLiteral("TLS handshake failed")));
        QVERIFY(publishStatistics(m_db));
        QTRY_VERIFY_WITH_TIMEOUT(watch.refresh(m_db, EventFilter{}, 50, now)->stale, 30000);
        auto held = watch.refresh(m_db, EventFilter{}, 50, now);
        QCOMPARE(held->kinds, 1);
        QCOMPARE(held->groupedAt, first->groupedAt);
        watch.reset();
        auto fresh = watch.refresh(m_db, EventFilter{}, 50, now);
        QCOMPARE(fresh->kinds, 2);
        QVERIFY(!fresh->stale);
    }
};

QTEST_GUILESS_MAIN(TestErrorGroups)
#include "tst_errorgroups.moc"
