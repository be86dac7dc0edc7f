// Retention over a long run: a producer writes events steadily while the
// dispatcher delivers them and its retention deletes delivered events older
// than its retention window. The delivered rows in the table must level off instead
// of growing with everything ever produced, and nothing may be lost: every
// produced event is either still in the table as delivered or counted in the
// retention audit.

#include "devtools/devrunner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/retention.h"
#include "dispatchtesting.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <memory>
#include <vector>

using namespace outbox;
using devtools::DevRunner;
using dispatch::DispatcherHost;
using dispatch::DispatcherOptions;
using testing::baseConfig;
using testing::countStatus;
using testing::sqlExec;
using testing::sqlScalar;

class TestRetentionRun : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

public:
    TestRetentionRun()
        : DispatchTestSuite(PerTest::Nothing) {}

private Q_SLOTS:
    void deliveredRowsLevelOffDuringALongRun() {
        const QString dbName = m_pg->freshMigratedDatabase();
        QSqlDatabase db = m_pg->open(dbName, QStringLiteral("retention-run"));
        QVERIFY(db.isOpen());
        DevRunner runner;
        QVERIFY(runner.listen().ok());
        auto config = baseConfig(runner.url());
        config.batchSize = 100;
        config.concurrency = 16;
        DispatcherOptions options;
        options.housekeeping.registry = false;
        // The shortest retention the database accepts is a minute; the
        // producer backdates created_at by 57 s (below), so each event is
        // old enough to go about 3 s after it was written.
        options.housekeeping.retainDelivered = core::Millis(60000);
        options.housekeeping.retentionInterval = core::Millis(1000);
        options.housekeeping.retentionBatch = 500;
        DispatcherHost host(testing::connInfoFor(*m_pg, dbName), config,
                            dispatch::PublisherFactory{}, options);
        QSignalSpy started(&host, &DispatcherHost::started);
        host.start();
        QVERIFY(started.wait(30000) || started.size() == 1);

        // 40 s at 50 events every 100 ms (about 500 events/s); the number of
        // delivered rows in the table is sampled every second.
        constexpr int kSeconds = 40;
        constexpr int kPerTick = 50;
        int produced = 0;
        std::vector<int> deliveredRows; // one sample per second
        QElapsedTimer clock;
        clock.start();
        qint64 nextSample = 1000;
        while (clock.elapsed() < kSeconds * 1000) {
            QVERIFY(sqlExec(db,
                            QStringLiteral("INSERT INTO outbox_events"
                                           " (id, namespace, topic, payload, created_at)"
                                           " SELECT outbox_uuid_v7(), 'run', 'run.event',"
                                           "        jsonb_build_object('n', g),"
                                           "        now() - interval '57 seconds'"
                                           "   FROM generate_series(1, ?::integer) AS g"),
                            {kPerTick}));
            produced += kPerTick;
            if (clock.elapsed() >= nextSample) {
                deliveredRows.push_back(countStatus(db, QStringLiteral("delivered")));
                nextSample += 1000;
            }
            QTest::qWait(100);
        }
        QVERIFY(deliveredRows.size() >= 30);

        // Compare the peak of the second quarter of the run with that of
        // the last quarter: with retention working they are about the same
        // (rate x retention window); without it the last is about twice the
        // second (the table keeps everything).
        const auto peak = [&](std::size_t from, std::size_t to) {
            return *std::max_element(deliveredRows.begin() + qsizetype(from),
                                     deliveredRows.begin() + qsizetype(to));
        };
        const std::size_t n = deliveredRows.size();
        QStringList series;
        for (int rows : deliveredRows)
            series << QString::number(rows);
        qInfo("delivered rows, one sample a second: %s", qPrintable(series.join(u' ')));
        const int earlier = peak(n / 4, n / 2);
        const int later = peak(3 * n / 4, n);
        qInfo("produced %d events; delivered rows in the table: peak %d in the second quarter,"
              " %d in the last quarter",
              produced, earlier, later);
        QVERIFY2(earlier > 0, "nothing was delivered in the second quarter of the run");
        QVERIFY2(later <= earlier * 3 / 2,
                 qPrintable(QStringLiteral("the delivered rows kept growing: %1 -> %2")
                                .arg(earlier)
                                .arg(later)));
        QVERIFY2(later < produced / 3,
                 qPrintable(QStringLiteral("%1 of %2 produced events are still in the table")
                                .arg(later)
                                .arg(produced)));

        // Nothing lost: once drained, every produced event is either a
        // delivered row or counted by a retention audit entry.
        QTRY_COMPARE_WITH_TIMEOUT(countStatus(db, QStringLiteral("pending")) +
                                      countStatus(db, QStringLiteral("processing")),
                                  0, 60000);
        QSignalSpy stopped(&host, &DispatcherHost::stopped);
        host.stop();
        QVERIFY(stopped.wait(30000) || stopped.size() == 1);
        const int deleted = sqlScalar(db, QStringLiteral("SELECT coalesce(sum(affected), 0)"
                                                         " FROM outbox_audit"
                                                         " WHERE action = 'retention'"))
                                .toInt();
        QCOMPARE(countStatus(db, QStringLiteral("dead")), 0);
        QCOMPARE(deleted + countStatus(db, QStringLiteral("delivered")), produced);
        QCOMPARE(runner.stats().duplicates, qint64(0));
        QCOMPARE(runner.stats().uniqueIds, qint64(produced));
    }

    // Retention pauses after each batch (at least 20 ms, and 4 times what the
    // batch took), so that on a busy outbox it keeps one connection busy a
    // fifth of the time at most (docs/PERFORMANCE.md, "Retention beside
    // delivery"). Each batch is audited in its own transaction, stamped with
    // its start: consecutive batches are a pause apart at least.
    void batchesArePacedApart() {
        const QString dbName = m_pg->freshMigratedDatabase();
        QSqlDatabase db = m_pg->open(dbName, QStringLiteral("retention-pace"));
        QVERIFY(db.isOpen());
        constexpr int kBatch = 10;
        constexpr int kBatches = 6;
        QVERIFY(sqlExec(db,
                        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                       " status, attempts, delivered_at, created_at)"
                                       " SELECT outbox_uuid_v7(), 'old', 'old.event', '{}',"
                                       "        'delivered', 1, now() - interval '2 days',"
                                       "        now() - interval '2 days'"
                                       "   FROM generate_series(1, ?::integer)"),
                        {kBatch * kBatches}));
        dispatch::HousekeepingOptions options;
        options.retainDelivered = core::Millis(86400000);
        options.retentionBatch = kBatch;
        options.retentionInterval = core::Millis(3600000); // one pass
        dispatch::Retention retention(testing::connInfoFor(*m_pg, dbName), options,
                                      QStringLiteral("retention-pace"));
        retention.start();
        QTRY_COMPARE_WITH_TIMEOUT(countStatus(db, QStringLiteral("delivered")), 0, 30000);
        retention.stop();
        // The gaps between the batches' starts, in milliseconds (a coarse
        // timer may fire up to 5% early: 19 ms for the 20 ms pause).
        const QStringList gaps = testing::sqlColumn(
            db, QStringLiteral("SELECT round(extract(epoch FROM at - lag(at) OVER (ORDER BY id))"
                               "             * 1000, 1)"
                               "  FROM outbox_audit WHERE action = 'retention' AND affected > 0"
                               "  ORDER BY id OFFSET 1"));
        QCOMPARE(gaps.size(), kBatches - 1);
        for (const QString &gap : gaps)
            QVERIFY2(gap.toDouble() >= 19.0,
                     qPrintable(QStringLiteral("batches %1 ms apart: %2")
                                    .arg(gap, gaps.join(QStringLiteral(", ")))));
    }
};

QTEST_GUILESS_MAIN(TestRetentionRun)
#include "tst_retentionrun.moc"
