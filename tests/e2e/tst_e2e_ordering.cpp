// `outboxctl dispatch --ordering aggregate` as real processes: three
// dispatchers, two of them killed with SIGKILL along the way (their leases
// expire and are taken over), a runner that fails a share of the requests
// (retries with backoff). No aggregate's deliveries ever go out of order.

#include "devtools/devrunner.h"
#include "e2e/e2e.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <map>
#include <vector>

using namespace outbox::testing;

namespace {

constexpr int kAggregates = 60;
constexpr int kPerAggregate = 25;
constexpr int kUnordered = 200;

QStringList orderedDispatch(const QString &connInfo, const QUrl &url) {
    return {QStringLiteral("--db"),
            connInfo,
            QStringLiteral("dispatch"),
            QStringLiteral("--runner-url"),
            url.toString(),
            QStringLiteral("--ordering"),
            QStringLiteral("aggregate"),
            QStringLiteral("--lease"),
            QStringLiteral("2s"),
            QStringLiteral("--poll-interval"),
            QStringLiteral("300ms"),
            QStringLiteral("--request-timeout"),
            QStringLiteral("1s"),
            QStringLiteral("--base-delay"),
            QStringLiteral("50ms"),
            QStringLiteral("--max-delay"),
            QStringLiteral("200ms"),
            QStringLiteral("--max-attempts"),
            QStringLiteral("1000"),
            QStringLiteral("--concurrency"),
            QStringLiteral("16"),
            QStringLiteral("--batch-size"),
            QStringLiteral("20"),
            QStringLiteral("--stats-interval"),
            QStringLiteral("0s")};
}

} // namespace

class TestE2eOrdering final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestE2eOrdering()
        : PgTestSuite(outbox::testing::migrateSchemaWithAggregateOrder, PerTest::Nothing) {}

private Q_SLOTS:
    void killsAndFailuresKeepEachAggregateInOrder() {
        QString dbName;
        QSqlDatabase db = m_pg->openFreshMigrated(dbName);
        QVERIFY(db.isOpen());
        // Event g belongs to aggregate g % kAggregates and is number
        // g / kAggregates of it; created_at follows g.
        QVERIFY(sqlExec(
            db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                           " aggregate_type, aggregate_id, created_at)"
                           " SELECT outbox_uuid_v7(), 'e2e', 'invoice.changed',"
                           "  jsonb_build_object('agg', g % ?::integer, 'seq', g / ?::integer),"
                           "  'invoice', (g % ?::integer)::text,"
                           "  now() - interval '1 hour' + g * interval '1 millisecond'"
                           " FROM generate_series(0, ?::integer - 1) AS g"),
            {kAggregates, kAggregates, kAggregates, kAggregates * kPerAggregate}));
        QVERIFY(insertEvents(db, kUnordered));
        const qint64 total = qint64(kAggregates) * kPerAggregate + kUnordered;

        outbox::devtools::DevRunner runner;
        QVERIFY(runner.listen().ok());
        runner.setRecording(true);
        runner.setFailRate(0.2);
        runner.setFailStatus(503);

        std::vector<std::unique_ptr<CtlProcess>> dispatchers;
        const auto startOne = [&] {
            dispatchers.push_back(std::make_unique<CtlProcess>(
                orderedDispatch(m_pg->connInfo(dbName), runner.url())));
            return dispatchers.back()->start();
        };
        for (int i = 0; i < 3; ++i)
            QVERIFY(startOne());

        // Kill two of them with work in flight, one after the other, and
        // start replacements; the killed leases expire and are taken over.
        const auto delivered = [&] {
            return countWhere(db, QStringLiteral("status = 'delivered'"));
        };
        QTRY_VERIFY_WITH_TIMEOUT(delivered() >= total / 4, 60000);
        dispatchers.at(0)->killHard();
        QVERIFY(startOne());
        QTRY_VERIFY_WITH_TIMEOUT(delivered() >= total / 2, 60000);
        dispatchers.at(1)->killHard();
        QVERIFY(startOne());
        QTRY_COMPARE_WITH_TIMEOUT(delivered(), total, 120000);
        for (auto &dispatcher : dispatchers) {
            if (dispatcher->running()) {
                dispatcher->terminate();
                QVERIFY2(dispatcher->waitForExit(30000), qPrintable(dispatcher->output()));
            }
        }

        // Per aggregate, in the order the runner received them: the same
        // number again (a retry, or a redelivery after a kill), or the next
        // one once the current one was answered 2xx; never a gap, never back.
        struct Progress {
            int current = -1;
            bool answered = true; // the current one got a 2xx
        };
        std::map<int, Progress> progress;
        int requests = 0, failed = 0;
        for (const auto &request : runner.recordedRequests()) {
            const QJsonObject body = QJsonDocument::fromJson(request.body).object();
            if (!body.contains(QLatin1String("agg")))
                continue;
            ++requests;
            const int agg = body.value(QLatin1String("agg")).toInt();
            const int seq = body.value(QLatin1String("seq")).toInt();
            const bool ok = request.status >= 200 && request.status < 300;
            failed += ok ? 0 : 1;
            Progress &p = progress[agg];
            if (seq != p.current) {
                QVERIFY2(seq == p.current + 1 && p.answered,
                         qPrintable(QStringLiteral("aggregate %1: event %2 sent after event %3 "
                                                   "(%4)")
                                        .arg(agg)
                                        .arg(seq)
                                        .arg(p.current)
                                        .arg(p.answered ? QStringLiteral("delivered")
                                                        : QStringLiteral("not yet delivered"))));
                p = {seq, false};
            }
            p.answered = p.answered || ok;
        }
        QCOMPARE(int(progress.size()), kAggregates);
        for (const auto &[agg, p] : progress)
            QCOMPARE(p.current, kPerAggregate - 1);
        QVERIFY2(failed > 0, "the runner failed no request: the test proves nothing");
        QVERIFY(requests > kAggregates * kPerAggregate);
        m_pg->closeAndDrop(db, dbName);
    }
};

QTEST_GUILESS_MAIN(TestE2eOrdering)
#include "tst_e2e_ordering.moc"
