// The navigator's "Blocked (aggregate order)" count on real data (the counts
// the console reads, store::LiveCounts, into StatusNavModel under
// QAbstractItemModelTester), and the alert on the oldest due event rather
// than the oldest pending one.

#include "console/model/alertmonitor.h"
#include "console/model/consoletypes.h"
#include "console/model/statusnavmodel.h"
#include "store/livecounts.h"
#include "support/pgtestcase.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

using namespace outbox;
using console::AlertKind;
using console::AlertMonitor;
using console::StatusNavModel;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

// An event of aggregate invoice/`aggregateId` created `ago` seconds ago.
QString insertEvent(QSqlDatabase db, const QString &status, int ago, const QString &aggregateId) {
    return sqlScalar(db,
                     QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                    " status, attempts, created_at, aggregate_type, aggregate_id)"
                                    " VALUES (outbox_uuid_v7(), 'billing', 'invoice.paid', '{}',"
                                    "  ?::text, CASE WHEN ?::text = 'dead' THEN 5 ELSE 0 END,"
                                    "  now() - make_interval(secs => ?::int), 'invoice', ?)"
                                    " RETURNING id::text"),
                     {status, status, ago, aggregateId});
}

} // namespace

class TestBlockedNav final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestBlockedNav()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder, PerTest::Nothing) {}

private Q_SLOTS:
    void deadEventBlocksTwo() {
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        QSqlDatabase db = m_pg->open(name);
        QVERIFY(db.isOpen());
        StatusNavModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        store::LiveCounts live;

        // Nothing blocked: no such row.
        QVERIFY(!insertEvent(db, QStringLiteral("pending"), 50, QStringLiteral("7")).isEmpty());
        auto counts = live.refresh(db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        model.applyCounts(counts.value());
        QVERIFY(!model.indexForKey(StatusNavModel::blockedKey()).isValid());

        // A dead event of invoice 42 and two later events of it.
        const QString dead = insertEvent(db, QStringLiteral("dead"), 40, QStringLiteral("42"));
        QVERIFY(!insertEvent(db, QStringLiteral("pending"), 30, QStringLiteral("42")).isEmpty());
        QVERIFY(!insertEvent(db, QStringLiteral("pending"), 20, QStringLiteral("42")).isEmpty());
        live.reset();
        counts = live.refresh(db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        model.applyCounts(counts.value());

        const QModelIndex blocked = model.indexForKey(StatusNavModel::blockedKey());
        QVERIFY(blocked.isValid());
        QCOMPARE(blocked.parent(),
                 model.indexForKey(StatusNavModel::statusKey(core::Status::Pending)));
        QCOMPARE(blocked.data().toString(), QStringLiteral("Blocked (aggregate order)"));
        QCOMPARE(blocked.data(StatusNavModel::CountRole).toLongLong(), 2);
        QCOMPARE(blocked.siblingAtColumn(StatusNavModel::CountColumn).data().toString(),
                 console::formatCount(2));
        QCOMPARE(blocked.data(StatusNavModel::KindRole).toInt(),
                 int(StatusNavModel::NodeKind::Blocked));
        const store::EventFilter filter = StatusNavModel::filterAt(blocked);
        QVERIFY(filter.aggregateBlocked);
        QCOMPARE(filter.status, std::optional(core::Status::Pending));
        // Pending itself counts all three.
        QCOMPARE(model.indexForKey(StatusNavModel::statusKey(core::Status::Pending))
                     .data(StatusNavModel::CountRole)
                     .toLongLong(),
                 3);

        // Changed since the breakdown and not yet counted again: marked.
        QVERIFY(!insertEvent(db, QStringLiteral("pending"), 10, QStringLiteral("42")).isEmpty());
        store::LiveCounts slow(store::LiveCounts::Options{10000, 0.0});
        counts = slow.refresh(db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(!insertEvent(db, QStringLiteral("pending"), 5, QStringLiteral("42")).isEmpty());
        counts = slow.refresh(db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(counts->topicsEstimated);
        model.applyCounts(counts.value());
        const QModelIndex stale = model.indexForKey(StatusNavModel::blockedKey());
        QCOMPARE(stale.siblingAtColumn(StatusNavModel::CountColumn).data().toString(),
                 console::formatCount(3, true));

        // The dead event purged: nothing blocks, the row goes.
        QVERIFY(
            sqlExec(db, QStringLiteral("DELETE FROM outbox_events WHERE id = ?::uuid"), {dead}));
        QVERIFY(sqlExec(db, QStringLiteral("DELETE FROM outbox_events WHERE aggregate_id = '42'"
                                           " AND created_at > now() - interval '25 seconds'")));
        live.reset();
        counts = live.refresh(db);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        model.applyCounts(counts.value());
        QVERIFY(!model.indexForKey(StatusNavModel::blockedKey()).isValid());
        db = QSqlDatabase();
        m_pg->dropDatabase(name);
    }

    // Events created long ago but waiting for their next attempt (or held by
    // a pause) are not late: only the time since an event became due counts.
    void alertWatchesTheOldestDueEvent() {
        AlertMonitor monitor;
        console::AlertThresholds t;
        t.oldestDueAge = std::chrono::minutes(5);
        t.oldestDueFor = std::chrono::seconds(0);
        t.deathsPerMinute = 0;
        t.unclaimedFor = std::chrono::seconds(0);
        monitor.setThresholds(t);
        QSignalSpy raised(&monitor, &AlertMonitor::raised);

        const QDateTime now = QDateTime::fromSecsSinceEpoch(1'800'000'000, Qt::UTC);
        store::StatusCounts counts;
        counts.serverTime = now;
        counts.retrying = 4;
        counts.oldestPendingAt = now.addSecs(-3600); // an hour old, in backoff
        monitor.addCounts(counts);
        QCOMPARE(raised.size(), 0);

        counts.serverTime = now.addSecs(10);
        counts.oldestDueAt = now.addSecs(-240); // due for 4 min 10 s
        monitor.addCounts(counts);
        QCOMPARE(raised.size(), 0);

        counts.serverTime = now.addSecs(70);
        monitor.addCounts(counts); // due for 5 min 10 s
        QCOMPARE(raised.size(), 1);
        const auto alert = raised.at(0).at(0).value<console::Alert>();
        QCOMPARE(alert.kind, AlertKind::OldestDue);
        QVERIFY2(alert.text.contains(QLatin1String("oldest due event")), qPrintable(alert.text));
        QVERIFY2(alert.text.contains(QLatin1String("5 min")), qPrintable(alert.text));
    }
};

QTEST_MAIN(TestBlockedNav)
#include "tst_blockednav.moc"
