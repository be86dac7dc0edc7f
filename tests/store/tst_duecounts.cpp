// LiveCounts beyond the status counts: the oldest due event (what the
// console's alert watches: pending, due, not paused) and the pending events
// held back by an earlier unfinished event of their aggregate, with the
// filter that lists them.

#include "store/livecounts.h"
#include "store/pausestore.h"
#include "store/queries.h"
#include "support/pgfixture.h"

#include <QSet>
#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::store::EventFilter;
using outbox::store::LiveCounts;
using outbox::testing::PgFixture;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

// One event; intervals are PostgreSQL interval texts relative to now().
QString insertEvent(QSqlDatabase db, const QString &nameSpace, const QString &status,
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

class TestDueCounts final : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<PgFixture> m_pg;
    QString m_name;
    QSqlDatabase m_db;

    QSet<QString> idsOf(const EventFilter &filter) {
        store::PageRequest request;
        request.filter = filter;
        request.limit = 100;
        const auto page = store::EventQueries(m_db).page(request);
        if (!page.ok()) {
            qWarning().noquote() << page.errorMessage();
            return {QStringLiteral("<error>")};
        }
        QSet<QString> ids;
        for (const core::OutboxEvent &event : page->rows)
            ids.insert(event.id.toString(QUuid::WithoutBraces));
        return ids;
    }

private Q_SLOTS:
    void initTestCase() {
        m_pg = std::make_unique<PgFixture>();
        OUTBOX_START_PG(*m_pg);
        m_pg->setTemplatePreparer(outbox::testing::migrateSchema);
    }

    void init() {
        m_name = m_pg->freshMigratedDatabase();
        QVERIFY(!m_name.isEmpty());
        m_db = m_pg->open(m_name);
        QVERIFY(m_db.isOpen());
    }

    void cleanup() {
        m_db = QSqlDatabase();
        m_pg->dropDatabase(m_name);
    }

    void cleanupTestCase() { m_pg.reset(); }

    void oldestDueSkipsBackoffAndPauses() {
        LiveCounts live;
        auto counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(!counts->oldestDueAt.isValid());

        // Created two hours ago, retrying in ten minutes: pending, not due.
        QVERIFY(!insertEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
                             QStringLiteral("2 hours"), QStringLiteral("10 minutes"))
                     .isEmpty());
        counts = live.refresh(m_db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(counts->oldestPendingAt.isValid());
        QVERIFY(!counts->oldestDueAt.isValid());

        // Due for 30 minutes in a paused namespace: held on purpose.
        QVERIFY(!insertEvent(m_db, QStringLiteral("shipping"), QStringLiteral("pending"),
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
        QVERIFY(!insertEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
                             QStringLiteral("3 hours"), QStringLiteral("-20 minutes"))
                     .isEmpty());
        QVERIFY(!insertEvent(m_db, QStringLiteral("billing"), QStringLiteral("pending"),
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
        const QString dead = insertEvent(m_db, ns, QStringLiteral("dead"),
                                         QStringLiteral("3 minutes"), now, QStringLiteral("1"));
        const QString b1 =
            insertEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now, QStringLiteral("1"));
        const QString b2 =
            insertEvent(m_db, ns, pending, QStringLiteral("1 minute"), now, QStringLiteral("1"));
        // Aggregate 2: first in line, not blocked; one without an aggregate.
        const QString head =
            insertEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now, QStringLiteral("2"));
        const QString loose = insertEvent(m_db, ns, pending, QStringLiteral("2 minutes"), now);
        // Aggregate 3: a delivered event before a pending one blocks nothing.
        QVERIFY(!insertEvent(m_db, ns, QStringLiteral("delivered"), QStringLiteral("5 minutes"),
                             now, QStringLiteral("3"))
                     .isEmpty());
        const QString afterDelivered =
            insertEvent(m_db, ns, pending, QStringLiteral("1 minute"), now, QStringLiteral("3"));
        QVERIFY(!dead.isEmpty() && !b1.isEmpty() && !b2.isEmpty() && !head.isEmpty() &&
                !loose.isEmpty() && !afterDelivered.isEmpty());

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
        const QString behindHead =
            insertEvent(m_db, ns, pending, QStringLiteral("30 seconds"), now, QStringLiteral("2"));
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

QTEST_GUILESS_MAIN(TestDueCounts)
#include "tst_duecounts.moc"
