// The throughput and backlog history (sql/006_throughput_history.sql) that
// dispatchers write on their heartbeat and consoles read: per-minute sums
// over several dispatchers, one backlog sample per minute however many
// dispatchers race for it, bounded pruning, and who may write.

#include "store/database.h"
#include "store/historystore.h"
#include "store/queuegauges.h"
#include "store/registrystore.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QtTest>

#include <atomic>
#include <latch>
#include <thread>
#include <vector>

using namespace outbox;
using namespace outbox::testing;

namespace {

struct Worker {
    QUuid id = QUuid::createUuid();
    QString token = store::RegistryStore::newToken();
};

} // namespace

class TestHistory final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    // Each dispatcher (and each role) has a session of its own.
    std::vector<std::unique_ptr<store::Session>> m_sessions;

    QSqlDatabase connection(const QString &user = {}) {
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value();
        if (!user.isEmpty())
            info.user = user;
        auto &session = m_sessions.emplace_back(
            std::make_unique<store::Session>(info, store::Session::Options{}));
        if (auto opened = session->open(); !opened)
            qWarning().noquote() << opened.errorMessage();
        return session->database();
    }

    // What `outbox_dispatcher_register` needs, through the registry store.
    static bool registerWorker(QSqlDatabase db, const Worker &w) {
        store::DispatcherRegistration registration;
        registration.workerId = w.id;
        registration.token = w.token;
        registration.host = QStringLiteral("test-host");
        registration.pid = 1;
        registration.version = QStringLiteral("test");
        registration.application = QStringLiteral("tst_history");
        registration.runnerUrl = QStringLiteral("http://127.0.0.1:1/");
        registration.concurrency = 1;
        registration.startedAt = QDateTime::currentDateTimeUtc();
        const auto done = store::RegistryStore(db).registerDispatcher(registration);
        if (!done)
            qWarning().noquote() << done.errorMessage();
        return done.ok();
    }

    // Statements of one test must fall into one minute of the server's clock.
    void awayFromMinuteEnd() {
        const int second = sqlScalar(m_db, QStringLiteral("SELECT extract(second FROM now())"
                                                          "::integer"))
                               .toInt();
        if (second >= 45)
            QTest::qWait((61 - second) * 1000);
    }

    qint64 count(const QString &table, const QString &where = QStringLiteral("true")) {
        return sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM ") + table +
                                   QStringLiteral(" WHERE ") + where)
            .toLongLong();
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_history_"),
                             {QStringLiteral("dispatcher"), QStringLiteral("operator"),
                              QStringLiteral("viewer")});
    }

    void init() { openFreshDb(); }

    void cleanup() {
        m_sessions.clear();
        dropFreshDb();
    }

    void cleanupTestCase() { stopPg(); }

    void emptyHistoryReadsEmpty() {
        auto history = store::HistoryStore(m_db).read();
        QVERIFY2(history.ok(), qPrintable(history.errorMessage()));
        QVERIFY(history->isEmpty());
        QVERIFY(!history->unsupported);
        QVERIFY(!history->recordedEarlier);
        QVERIFY(history->serverTime.isValid());
    }

    void twoDispatchersSumPerMinute() {
        Worker a;
        Worker b;
        QSqlDatabase dbA = connection();
        QSqlDatabase dbB = connection();
        QVERIFY(registerWorker(dbA, a));
        QVERIFY(registerWorker(dbB, b));
        awayFromMinuteEnd();
        store::HistoryStore historyA(dbA);
        store::HistoryStore historyB(dbB);
        for (int beat = 0; beat < 3; ++beat) {
            QVERIFY(historyA.record(a.id, a.token, 5, 1, 0).ok());
            QVERIFY(historyB.record(b.id, b.token, 7, 3, 1).ok());
        }
        // One row per dispatcher and minute, summed when read.
        QCOMPARE(count(QStringLiteral("outbox_throughput_history")), 2);
        auto history = store::HistoryStore(m_db).read();
        QVERIFY2(history.ok(), qPrintable(history.errorMessage()));
        QCOMPARE(history->throughput.size(), 1);
        const store::ThroughputMinute minute = history->throughput.constFirst();
        QCOMPARE(minute.delivered, 36);
        QCOMPARE(minute.failed, 12);
        QCOMPARE(minute.dead, 3);
        QCOMPARE(minute.dispatchers, 2);
        QCOMPARE(minute.minute.time().second(), 0);
        QVERIFY(history->backlog.isEmpty());

        // Minutes outside the window read are not shown.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("INSERT INTO outbox_throughput_history (minute,"
                                       " worker_id, delivered) VALUES (date_trunc('minute',"
                                       " now()) - interval '2 hours', ?::uuid, 99)"),
                        {a.id.toString(QUuid::WithoutBraces)}));
        history = store::HistoryStore(m_db).read(60);
        QVERIFY(history.ok());
        QCOMPARE(history->throughput.size(), 1);
    }

    void backlogSampledOncePerMinute() {
        constexpr int kDispatchers = 6;
        std::vector<Worker> workers(kDispatchers);
        QList<QSqlDatabase> dbs;
        for (const Worker &w : workers) {
            dbs << connection();
            QVERIFY(registerWorker(dbs.constLast(), w));
        }
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                         " payload, status, next_attempt_at) SELECT"
                                         " outbox_uuid_v7(), 'n', 't', '{}', 'pending', now()"
                                         " - interval '90 seconds' FROM generate_series(1, 4)")));
        awayFromMinuteEnd();
        // Every dispatcher's beat finds the minute without a sample...
        for (int i = 0; i < kDispatchers; ++i) {
            auto wanted =
                store::HistoryStore(dbs.at(i)).record(workers[i].id, workers[i].token, 1, 0, 0);
            QVERIFY2(wanted.ok(), qPrintable(wanted.errorMessage()));
            QVERIFY(wanted.value());
        }
        // ... and all of them record it at once, each on its own connection
        // in its own thread: exactly one wins.
        QList<store::QueueGauges> gauges;
        {
            store::Session session(core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value(),
                                   store::Session::Options{});
            QVERIFY(session.open().ok());
            for (int i = 0; i < kDispatchers; ++i) {
                auto g = store::readQueueGauges(session);
                QVERIFY2(g.ok(), qPrintable(g.errorMessage()));
                gauges << g.value();
            }
        }
        const QString connInfo = m_pg->connInfo(m_dbName);
        std::atomic<int> won{0};
        std::atomic<int> failed{0};
        std::latch start(kDispatchers);
        std::vector<std::thread> threads;
        for (int i = 0; i < kDispatchers; ++i) {
            threads.emplace_back([&, i] {
                const QString name = store::uniqueConnectionName(QStringLiteral("racer"));
                {
                    auto db = store::openDatabase(core::ConnInfo::parse(connInfo).value(), name);
                    start.arrive_and_wait();
                    if (!db) {
                        ++failed;
                    } else if (auto recorded =
                                   store::HistoryStore(db.value())
                                       .recordBacklog(workers[std::size_t(i)].id,
                                                      workers[std::size_t(i)].token, gauges.at(i));
                               !recorded) {
                        ++failed;
                    } else if (recorded.value()) {
                        ++won;
                    }
                }
                store::closeDatabase(name);
            });
        }
        for (std::thread &t : threads)
            t.join();
        QCOMPARE(failed.load(), 0);
        QCOMPARE(won.load(), 1);
        QCOMPARE(count(QStringLiteral("outbox_backlog_history")), 1);
        // Later beats of the minute see the sample.
        auto wanted =
            store::HistoryStore(dbs.constFirst()).record(workers[0].id, workers[0].token, 0, 0, 0);
        QVERIFY(wanted.ok());
        QVERIFY(!wanted.value());

        auto history = store::HistoryStore(m_db).read();
        QVERIFY(history.ok());
        QCOMPARE(history->backlog.size(), 1);
        const store::BacklogMinute sample = history->backlog.constFirst();
        QCOMPARE(sample.pending, 4);
        QCOMPARE(sample.dueNow, 4);
        QCOMPARE(sample.processing, 0);
        QVERIFY(sample.oldestDueAgeSeconds >= 90.0);
        QCOMPARE(history->throughput.constFirst().delivered, kDispatchers);
    }

    void pruningIsBoundedAndKeepsTwoDays() {
        Worker w;
        QSqlDatabase db = connection();
        QVERIFY(registerWorker(db, w));
        // 1500 minutes of one dispatcher three days ago, a day-old minute,
        // and old backlog samples.
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_throughput_history (minute,"
                                         " worker_id, delivered) SELECT date_trunc('minute',"
                                         " now()) - interval '3 days' - g * interval '1 minute',"
                                         " gen_random_uuid(), 1 FROM generate_series(1, 1500) g"
                                         " UNION ALL SELECT now() - interval '1 day',"
                                         " gen_random_uuid(), 1")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_backlog_history (minute, pending,"
                                             " processing, dead, due_now, oldest_due_age_s,"
                                             " recorded_by) SELECT date_trunc('minute', now()) -"
                                             " d * interval '1 day', 0, 0, 0, 0, 0,"
                                             " gen_random_uuid() FROM unnest(ARRAY[1, 3, 4]) d")));
        awayFromMinuteEnd();
        store::HistoryStore history(db);
        const store::QueueGauges none;
        auto recorded = history.recordBacklog(w.id, w.token, none);
        QVERIFY2(recorded.ok(), qPrintable(recorded.errorMessage()));
        QVERIFY(recorded.value());
        const QString old = QStringLiteral("minute < now() - interval '2 days'");
        // At most 1000 rows a call; the day-old rows stay.
        QCOMPARE(count(QStringLiteral("outbox_throughput_history"), old), 500);
        QCOMPARE(count(QStringLiteral("outbox_backlog_history"), old), 0);
        QCOMPARE(count(QStringLiteral("outbox_backlog_history")), 2);
        // Only the writer of a sample prunes: a second call this minute does not.
        recorded = history.recordBacklog(w.id, w.token, none);
        QVERIFY(recorded.ok());
        QVERIFY(!recorded.value());
        QCOMPARE(count(QStringLiteral("outbox_throughput_history"), old), 500);
        // The next minute's writer takes the rest.
        QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_backlog_history"
                                             " WHERE minute = date_trunc('minute', now())")));
        recorded = history.recordBacklog(w.id, w.token, none);
        QVERIFY(recorded.ok() && recorded.value());
        QCOMPARE(count(QStringLiteral("outbox_throughput_history"), old), 0);
        QCOMPARE(count(QStringLiteral("outbox_throughput_history")), 1);
    }

    void onlyRegisteredDispatchersWrite() {
        QSqlDatabase dispatcher = connection(QStringLiteral("tst_history_dispatcher"));
        QVERIFY(dispatcher.isOpen());
        Worker w;
        QVERIFY(registerWorker(dispatcher, w));
        store::HistoryStore asDispatcher(dispatcher);
        auto recorded = asDispatcher.record(w.id, w.token, 3, 0, 0);
        QVERIFY2(recorded.ok(), qPrintable(recorded.errorMessage()));
        auto sampled = asDispatcher.recordBacklog(w.id, w.token, store::QueueGauges{});
        QVERIFY2(sampled.ok(), qPrintable(sampled.errorMessage()));
        auto read = asDispatcher.read();
        QVERIFY2(read.ok(), qPrintable(read.errorMessage()));
        QCOMPARE(read->throughput.size(), 1);

        // Another worker's secret, or none registered: refused.
        Worker forged;
        forged.id = w.id;
        QVERIFY(!asDispatcher.record(forged.id, forged.token, 1000, 0, 0).ok());
        QVERIFY(!asDispatcher.record(QUuid::createUuid(), w.token, 1000, 0, 0).ok());
        // No direct writes, even for the dispatcher role.
        QVERIFY(!sqlExec(dispatcher, QStringLiteral("UPDATE outbox_throughput_history"
                                                    " SET delivered = 0")));

        for (const char *role : {"tst_history_viewer", "tst_history_operator"}) {
            QSqlDatabase db = connection(QLatin1String(role));
            QVERIFY(db.isOpen());
            store::HistoryStore history(db);
            auto shown = history.read();
            QVERIFY2(shown.ok(), qPrintable(shown.errorMessage()));
            QCOMPARE(shown->throughput.size(), 1);
            QCOMPARE(shown->throughput.constFirst().delivered, 3);
            // Even with the dispatcher's secret: the functions are not theirs.
            QVERIFY(!history.record(w.id, w.token, 1000, 0, 0).ok());
            QVERIFY(!history.recordBacklog(w.id, w.token, store::QueueGauges{}).ok());
            QVERIFY(!sqlExec(db, QStringLiteral("INSERT INTO outbox_throughput_history (minute,"
                                                " worker_id, delivered) VALUES (now(),"
                                                " gen_random_uuid(), 1000)")));
            QVERIFY(!sqlExec(db, QStringLiteral("DELETE FROM outbox_backlog_history")));
        }
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT sum(delivered) FROM"
                                                " outbox_throughput_history")),
                 QStringLiteral("3"));
        QCOMPARE(count(QStringLiteral("outbox_backlog_history")), 1);
    }
};

QTEST_GUILESS_MAIN(TestHistory)
#include "tst_history.moc"
