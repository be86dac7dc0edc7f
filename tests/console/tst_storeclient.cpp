// StoreClient/StoreWorker against a real PostgreSQL: round trips, superseded
// requests, a GUI thread that never blocks, LISTEN, bulk jobs, reconnects.

#include "console/model/storeclient.h"
#include "store/database.h"
#include "store/migrator.h"
#include "support/pgtestcase.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include <memory>
#include <optional>

using namespace outbox;
using console::ConnectionState;
using console::RequestId;
using console::RequestKind;
using console::StoreClient;

namespace {

// Waits for the answer to request `id`: the value of `signal`, or the error
// of requestFailed.
template <typename T, typename Signal> struct Answer {
    std::optional<T> value;
    std::optional<core::Error> error;
};

template <typename T, typename Signal>
Answer<T, Signal> await(StoreClient *client, Signal signal, RequestId id, int timeoutMs = 20000) {
    Answer<T, Signal> answer;
    QObject context;
    QObject::connect(client, signal, &context, [&](RequestId got, const T &value) {
        if (got == id)
            answer.value = value;
    });
    QObject::connect(client, &StoreClient::requestFailed, &context,
                     [&](RequestId got, RequestKind, const core::Error &error) {
                         if (got == id)
                             answer.error = error;
                     });
    static_cast<void>(QTest::qWaitFor(
        [&] { return answer.value.has_value() || answer.error.has_value(); }, timeoutMs));
    if (answer.error)
        qWarning().noquote() << "request" << id << "failed:" << answer.error->message;
    return answer;
}

} // namespace

class TestStoreClient : public outbox::testing::PgTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip();
    void detailOfMissingEventIsNotFound();
    void supersededAnswersAreDropped();
    void slowQueryDoesNotBlockGuiThread();
    void aggregatesDoNotQueueBehindOtherRequests();
    void sameQuestionAnswersAreNotStarved();
    void listenEmitsDebouncedChanged();
    void bulkJobReportsProgressAndFinishes();
    void bulkJobCancel();
    void bulkJobDryRunChangesNothing();
    void readOnlyClientCannotWrite();
    void requestsFailFastWhileUnreachable();
    void reconnectsAfterServerRestart();

private:
    std::unique_ptr<StoreClient> makeClient(console::StoreClientOptions options = {});
    void insertEvents(int count, const QString &status, int attempts = 0, const QString &error = {},
                      const QString &extra = {});
    qint64 countWhere(const QString &condition);
    // A requeue of every dead event.
    static console::BulkJob *requeueDead(StoreClient &client, const store::BulkOptions &options);
};

console::BulkJob *TestStoreClient::requeueDead(StoreClient &client,
                                               const store::BulkOptions &options) {
    store::EventFilter filter;
    filter.status = core::Status::Dead;
    return client.startBulk(store::Action::Requeue, filter, options);
}

std::unique_ptr<StoreClient> TestStoreClient::makeClient(console::StoreClientOptions options) {
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    if (!info) {
        qWarning().noquote() << info.errorMessage();
        return {};
    }
    auto client = std::make_unique<StoreClient>(info.value(), options);
    QString message;
    QObject context;
    connect(client.get(), &StoreClient::connectionStateChanged, &context,
            [&message](ConnectionState, const QString &text) { message = text; });
    client->start();
    if (!QTest::qWaitFor([&] { return client->connectionState() == ConnectionState::Connected; },
                         20000)) {
        qWarning().noquote() << "client did not connect:" << message;
        return {};
    }
    return client;
}

void TestStoreClient::insertEvents(int count, const QString &status, int attempts,
                                   const QString &error, const QString &extra) {
    // Distinct created_at per row, so keyset order is fully determined.
    const QString sql =
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts, "
            "  last_error, locked_by, locked_until, delivered_at, created_at) "
            "SELECT outbox_uuid_v7(), 'billing', 'invoice.' || mod(g, 3), "
            "  jsonb_build_object('n', g), '%1', %2, %3, "
            "  CASE WHEN '%1' = 'processing' THEN gen_random_uuid() END, "
            "  CASE WHEN '%1' = 'processing' THEN now() + interval '1 minute' END, "
            "  CASE WHEN '%1' = 'delivered' THEN now() END, "
            "  now() - make_interval(secs => g) %4 "
            "FROM generate_series(1, %5) AS g")
            .arg(status, QString::number(attempts),
                 error.isEmpty() ? QStringLiteral("NULL") : QStringLiteral("'%1 ' || g").arg(error),
                 extra, QString::number(count));
    QVERIFY(testing::sqlExec(m_db, sql));
}

qint64 TestStoreClient::countWhere(const QString &condition) {
    return testing::sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") +
                                        condition)
        .toLongLong();
}

void TestStoreClient::roundTrip() {
    insertEvents(5, QStringLiteral("pending"));
    insertEvents(3, QStringLiteral("pending"), 2, QStringLiteral("HTTP 503 attempt"));
    insertEvents(2, QStringLiteral("processing"), 1);
    insertEvents(4, QStringLiteral("dead"), 10, QStringLiteral("connect timeout after ms"));
    insertEvents(6, QStringLiteral("delivered"), 1);
    // One processing row whose lease ran out.
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET locked_until = now() - "
                                                  "interval '5 seconds' WHERE id = (SELECT id "
                                                  "FROM outbox_events WHERE status = "
                                                  "'processing' LIMIT 1)")));

    auto client = makeClient();
    QVERIFY(client);

    const auto counts = await<store::StatusCounts>(client.get(), &StoreClient::countsReady,
                                                   client->requestCounts());
    QVERIFY(counts.value);
    QCOMPARE(counts.value->pending, 5);
    QCOMPARE(counts.value->retrying, 3);
    QCOMPARE(counts.value->processing, 2);
    QCOMPARE(counts.value->expiredLeases, 1);
    QCOMPARE(counts.value->dead, 4);
    QCOMPARE(counts.value->delivered, 6);
    QVERIFY(counts.value->serverTime.isValid());

    store::PageRequest request;
    request.filter.status = core::Status::Dead;
    request.order = store::SortOrder::OldestFirst;
    request.limit = 3;
    const auto page = await<console::PageResult>(client.get(), &StoreClient::pageReady,
                                                 client->requestPage(request));
    QVERIFY(page.value);
    QCOMPARE(page.value->page.rows.size(), 3);
    QVERIFY(page.value->page.next.has_value());
    QVERIFY(page.value->serverTime.isValid());
    QCOMPARE(page.value->request.limit, 3);
    for (const auto &row : page.value->page.rows)
        QCOMPARE(row.status, core::Status::Dead);
    // Oldest first: created_at ascending.
    QVERIFY(page.value->page.rows.at(0).createdAt < page.value->page.rows.at(1).createdAt);

    const QUuid id = page.value->page.rows.at(1).id;
    const auto detail = await<store::EventDetail>(client.get(), &StoreClient::detailReady,
                                                  client->requestDetail(id));
    QVERIFY(detail.value);
    QCOMPARE(detail.value->event.id, id);
    QCOMPARE(detail.value->event.attempts, 10);

    store::EventFilter deadOnly;
    deadOnly.status = core::Status::Dead;
    const auto groups = await<console::ErrorGroupsResult>(
        client.get(), &StoreClient::errorGroupsReady, client->requestErrorGroups(deadOnly));
    QVERIFY(groups.value);
    // "connect timeout after ms 1" .. "4" differ only in a number: one group.
    QCOMPARE(groups.value->set.groups.size(), 1);
    QCOMPARE(groups.value->set.groups.first().count, 4);
    QCOMPARE(groups.value->filter, deadOnly);

    const auto privileges = await<store::Privileges>(client.get(), &StoreClient::privilegesReady,
                                                     client->requestPrivileges());
    QVERIFY(privileges.value);
    QVERIFY(privileges.value->canRead);

    const auto info = await<store::ServerInfo>(client.get(), &StoreClient::serverInfoReady,
                                               client->requestServerInfo());
    QVERIFY(info.value);
    QCOMPARE(info.value->database, m_dbName);
    QCOMPARE(info.value->schemaVersion, store::Migrator::latestVersion());
}

void TestStoreClient::detailOfMissingEventIsNotFound() {
    auto client = makeClient();
    QVERIFY(client);
    const auto detail = await<store::EventDetail>(client.get(), &StoreClient::detailReady,
                                                  client->requestDetail(QUuid::createUuid()));
    QVERIFY(!detail.value);
    QVERIFY(detail.error);
    QCOMPARE(detail.error->kind, core::ErrorKind::NotFound);

    // A failing statement is an error of that request only; the connection stays.
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("ALTER TABLE outbox_events RENAME TO outbox_events_gone")));
    const auto bad = await<console::PageResult>(client.get(), &StoreClient::pageReady,
                                                client->requestPage(store::PageRequest{}));
    QVERIFY(bad.error);
    QCOMPARE(client->connectionState(), ConnectionState::Connected);
}

void TestStoreClient::supersededAnswersAreDropped() {
    insertEvents(30, QStringLiteral("pending"));
    auto client = makeClient();
    QVERIFY(client);

    QList<RequestId> answered;
    connect(client.get(), &StoreClient::pageReady, this,
            [&](RequestId id, const console::PageResult &) { answered.append(id); });

    const QString lane = QStringLiteral("view-1");
    store::PageRequest request;
    request.limit = 5;
    // The first one is in flight, held by a lock on the table; the second
    // waits and is replaced by the third.
    QVERIFY(m_db.transaction());
    QVERIFY(testing::sqlExec(m_db,
                             QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
    const RequestId first = client->requestPage(request, lane);
    request.limit = 7;
    const RequestId second = client->requestPage(request, lane);
    request.limit = 9;
    const RequestId third = client->requestPage(request, lane);
    // A request without a lane is never superseded.
    const RequestId unrelated = client->requestPage(request);
    QTest::qWait(300);
    QVERIFY(answered.isEmpty());
    QVERIFY(m_db.commit());

    QTRY_VERIFY_WITH_TIMEOUT(answered.contains(third) && answered.contains(unrelated), 20000);
    QTest::qWait(300); // anything else would have arrived by now
    QVERIFY(!answered.contains(first));
    QVERIFY(!answered.contains(second));
    QCOMPARE(answered.count(third), 1);
}

void TestStoreClient::aggregatesDoNotQueueBehindOtherRequests() {
    insertEvents(3, QStringLiteral("dead"), 5, QStringLiteral("HTTP 503"));
    auto client = makeClient();
    QVERIFY(client);

    QElapsedTimer clock;
    clock.start();
    std::optional<qint64> infoAt;
    std::optional<qint64> countedAt;
    std::optional<qint64> groupedAt;
    // The server information reads the schema version: a lock on that table
    // holds the first connection, which counts and error groups never read.
    QVERIFY(m_db.transaction());
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("LOCK TABLE outbox_schema_version IN ACCESS EXCLUSIVE MODE")));
    const RequestId info = client->requestServerInfo();
    const RequestId counts = client->requestCounts();
    const RequestId groups = client->requestErrorGroups(store::EventFilter{});
    connect(client.get(), &StoreClient::serverInfoReady, this,
            [&](RequestId id, const store::ServerInfo &) {
                if (id == info)
                    infoAt = clock.elapsed();
            });
    connect(client.get(), &StoreClient::countsReady, this,
            [&](RequestId id, const store::StatusCounts &c) {
                if (id == counts && c.dead == 3)
                    countedAt = clock.elapsed();
            });
    connect(client.get(), &StoreClient::errorGroupsReady, this,
            [&](RequestId id, const console::ErrorGroupsResult &) {
                if (id == groups)
                    groupedAt = clock.elapsed();
            });
    QTRY_VERIFY_WITH_TIMEOUT(countedAt && groupedAt, 30000);
    // Counts and error groups have their own connection: they were answered
    // while the other one still waited.
    QVERIFY(!infoAt);
    QVERIFY(m_db.commit());
    QTRY_VERIFY_WITH_TIMEOUT(infoAt, 30000);
    QVERIFY2(
        *countedAt < *infoAt,
        qPrintable(
            QStringLiteral("counts at %1 ms, server info at %2 ms").arg(*countedAt).arg(*infoAt)));
    QVERIFY(*groupedAt < *infoAt);
}

void TestStoreClient::sameQuestionAnswersAreNotStarved() {
    insertEvents(4, QStringLiteral("pending"));
    auto client = makeClient();
    QVERIFY(client);

    QList<RequestId> delivered;
    QList<qint64> deliveredAt;
    QElapsedTimer clock;
    clock.start();
    connect(client.get(), &StoreClient::countsReady, this,
            [&](RequestId id, const store::StatusCounts &c) {
                if (c.pending == 4) {
                    delivered.append(id);
                    deliveredAt.append(clock.elapsed());
                }
            });
    // Hold the counts statement until both requests are in the lane: the
    // first is in flight (blocked on the lock), the second waits.
    QVERIFY(m_db.transaction());
    QVERIFY(testing::sqlExec(m_db,
                             QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
    const QString lane = QStringLiteral("counts");
    const RequestId first = client->requestCounts(lane);
    QTest::qWait(200);
    const RequestId second = client->requestCounts(lane);
    QVERIFY(m_db.commit());

    // The first answer asks the same as the newest request, so it is shown
    // (as the newest's answer) instead of being dropped; then the newest's own.
    QTRY_COMPARE_WITH_TIMEOUT(delivered.size(), 2, 20000);
    QCOMPARE(delivered, (QList<RequestId>{second, second}));
    QVERIFY(!delivered.contains(first));
    // Paced: the first took at least the 200 ms it waited for the lock, so
    // the waiting request was sent no sooner than that after its answer.
    QVERIFY2(deliveredAt.at(1) - deliveredAt.at(0) >= 150,
             qPrintable(
                 QStringLiteral("answers %1 ms apart").arg(deliveredAt.at(1) - deliveredAt.at(0))));
}

void TestStoreClient::slowQueryDoesNotBlockGuiThread() {
    auto client = makeClient();
    QVERIFY(client);

    QElapsedTimer clock;
    clock.start();
    QList<qint64> ticks;
    QTimer timer;
    timer.setInterval(10);
    connect(&timer, &QTimer::timeout, this, [&] { ticks.append(clock.elapsed()); });
    timer.start();

    // The page waits two seconds for a lock the test holds.
    QVERIFY(m_db.transaction());
    QVERIFY(testing::sqlExec(m_db,
                             QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
    bool committed = false;
    QTimer::singleShot(2000, Qt::PreciseTimer, this, [&] { committed = m_db.commit(); });
    std::optional<qint64> finishedAt;
    const qint64 before = clock.elapsed();
    const RequestId id = client->requestPage(store::PageRequest{});
    const qint64 returnedAt = clock.elapsed();
    connect(client.get(), &StoreClient::pageReady, this,
            [&](RequestId got, const console::PageResult &) {
                if (got == id)
                    finishedAt = clock.elapsed();
            });
    QTRY_VERIFY_WITH_TIMEOUT(finishedAt.has_value(), 30000);
    timer.stop();
    QVERIFY(committed);

    // The query took its two seconds, but the request call returned long
    // before that ...
    QVERIFY2(*finishedAt - before >= 1900, "the page finished too early: not the worker?");
    QVERIFY(returnedAt < *finishedAt);
    // ... and the GUI thread's timer kept firing the whole time: a blocked
    // event loop would show one gap as long as the query.
    qint64 maxGap = 0;
    qint64 last = returnedAt;
    int during = 0;
    for (qint64 t : std::as_const(ticks)) {
        if (t <= returnedAt || t > *finishedAt)
            continue;
        maxGap = std::max(maxGap, t - last);
        last = t;
        ++during;
    }
    maxGap = std::max(maxGap, *finishedAt - last);
    const qint64 ideal = (*finishedAt - returnedAt) / 10;
    QVERIFY2(maxGap < 1000,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(maxGap)));
    QVERIFY2(during >= ideal / 10,
             qPrintable(QStringLiteral("only %1 of ~%2 ticks").arg(during).arg(ideal)));
}

void TestStoreClient::listenEmitsDebouncedChanged() {
    console::StoreClientOptions options;
    options.changeDebounce = std::chrono::milliseconds(1000);
    auto client = makeClient(options);
    QVERIFY(client);
    QSignalSpy changed(client.get(), &StoreClient::changed);

    // Ten transactions, ten notifications (another connection than the
    // client's): they fold into fewer signals.
    for (int i = 0; i < 10; ++i) {
        QVERIFY(testing::sqlExec(m_db, QStringLiteral("SELECT * FROM outbox_enqueue('billing', "
                                                      "'invoice.paid', '{\"n\": %1}'::jsonb)")
                                           .arg(i)));
    }
    QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 20000);
    QTest::qWait(1500);
    QVERIFY2(changed.count() < 10, "notifications were not debounced");
}

void TestStoreClient::bulkJobReportsProgressAndFinishes() {
    insertEvents(300, QStringLiteral("dead"), 10, QStringLiteral("HTTP 500"));
    auto client = makeClient();
    QVERIFY(client);

    store::BulkOptions options;
    options.batchSize = 100;
    options.reason = QStringLiteral("test redrive");
    console::BulkJob *job = requeueDead(*client, options);
    QVERIFY(job);
    QVERIFY(job->isRunning());
    QSignalSpy progress(job, &console::BulkJob::progress);
    std::optional<store::BulkResult> result;
    connect(job, &console::BulkJob::finished, this,
            [&](const store::BulkResult &r) { result = r; });
    connect(job, &console::BulkJob::failed, this,
            [](const core::Error &e) { qWarning().noquote() << "bulk failed:" << e.message; });
    QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 30000);

    QVERIFY(!job->isRunning());
    QVERIFY(!result->cancelled);
    QCOMPARE(result->matched, 300);
    QCOMPARE(result->changed, 300);
    QVERIFY(result->auditId > 0);
    QVERIFY(progress.count() >= 1);
    QCOMPARE(progress.last().at(0).toLongLong(), 300);
    QCOMPARE(countWhere(QStringLiteral("status = 'dead'")), 0);
    QCOMPARE(countWhere(QStringLiteral("status = 'pending' AND attempts = 0")), 300);
}

void TestStoreClient::bulkJobCancel() {
    insertEvents(2000, QStringLiteral("dead"), 10, QStringLiteral("HTTP 500"));
    auto client = makeClient();
    QVERIFY(client);

    store::BulkOptions options;
    options.batchSize = 50;
    console::BulkJob *job = requeueDead(*client, options);
    std::optional<store::BulkResult> result;
    connect(job, &console::BulkJob::finished, this,
            [&](const store::BulkResult &r) { result = r; });
    job->cancel();
    QVERIFY(job->isCancelRequested());
    QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 30000);

    // Stopped after the batch that was running, at the latest.
    QVERIFY(result->cancelled);
    QVERIFY2(result->changed <= options.batchSize,
             qPrintable(QStringLiteral("%1 rows changed after cancel").arg(result->changed)));
    QCOMPARE(countWhere(QStringLiteral("status = 'dead'")), 2000 - result->changed);
}

void TestStoreClient::bulkJobDryRunChangesNothing() {
    insertEvents(40, QStringLiteral("delivered"), 1);
    auto client = makeClient();
    QVERIFY(client);

    store::EventFilter filter;
    filter.status = core::Status::Delivered;
    store::BulkOptions options;
    options.dryRun = true;
    console::BulkJob *job = client->startBulk(store::Action::Purge, filter, options);
    QVERIFY(job->dryRun());
    std::optional<store::BulkResult> result;
    connect(job, &console::BulkJob::finished, this,
            [&](const store::BulkResult &r) { result = r; });
    QTRY_VERIFY_WITH_TIMEOUT(result.has_value(), 30000);
    QVERIFY(result->dryRun);
    QCOMPARE(result->matched, 40);
    QCOMPARE(countWhere(QStringLiteral("status = 'delivered'")), 40);
}

void TestStoreClient::readOnlyClientCannotWrite() { // --read-only reaches the server
    insertEvents(5, QStringLiteral("dead"), 3);
    auto client = makeClient({.readOnly = true});
    std::optional<core::Error> failure;
    connect(client->startBulk(store::Action::Requeue, {}, {}), &console::BulkJob::failed, this,
            [&](const core::Error &e) { failure = e; });
    QTRY_VERIFY_WITH_TIMEOUT(failure && failure->message.contains(u"read-only transaction"), 30000);
    QCOMPARE(countWhere(QStringLiteral("status = 'dead'")), 5);
}

void TestStoreClient::requestsFailFastWhileUnreachable() {
    // Nothing listens on this socket: the client keeps retrying, and a
    // request meanwhile fails at once instead of waiting for a connection.
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    QVERIFY(info.ok());
    info->port = 1;
    console::StoreClientOptions options;
    options.reconnectMin = std::chrono::milliseconds(100);
    options.reconnectMax = std::chrono::milliseconds(500);
    StoreClient client(info.value(), options);
    QSignalSpy states(&client, &StoreClient::connectionStateChanged);
    client.start();
    QTRY_COMPARE_WITH_TIMEOUT(client.connectionState(), ConnectionState::Reconnecting, 20000);
    const QString message = states.last().at(1).toString();
    QVERIFY(!message.isEmpty());
    QVERIFY(!message.contains(QLatin1String("password")));

    const auto counts =
        await<store::StatusCounts>(&client, &StoreClient::countsReady, client.requestCounts());
    QVERIFY(!counts.value);
    QVERIFY(counts.error);
    QCOMPARE(counts.error->kind, core::ErrorKind::Unavailable);
    QVERIFY2(counts.error->message.contains(QLatin1String("not connected")),
             qPrintable(counts.error->message));
}

void TestStoreClient::reconnectsAfterServerRestart() {
    console::StoreClientOptions options;
    options.healthCheckInterval = std::chrono::milliseconds(200);
    options.reconnectMin = std::chrono::milliseconds(100);
    options.reconnectMax = std::chrono::milliseconds(1000);
    options.changeDebounce = std::chrono::milliseconds(50);
    auto client = makeClient(options);
    QVERIFY(client);
    QList<ConnectionState> states;
    connect(client.get(), &StoreClient::connectionStateChanged, this,
            [&](ConnectionState state, const QString &) { states.append(state); });
    QSignalSpy changed(client.get(), &StoreClient::changed);

    // Down: the client notices on its own (health check) and says so;
    // requests fail instead of hanging.
    const QString testConnection = m_db.connectionName();
    m_db = QSqlDatabase();
    m_pg->close(testConnection);
    QVERIFY(m_pg->cluster().stop().ok());
    QTRY_VERIFY_WITH_TIMEOUT(states.contains(ConnectionState::Reconnecting), 20000);
    const auto during = await<store::StatusCounts>(client.get(), &StoreClient::countsReady,
                                                   client->requestCounts());
    QVERIFY(during.error);
    QCOMPARE(during.error->kind, core::ErrorKind::Unavailable);

    // Up again: reconnected, LISTEN renewed, a refresh hint sent.
    QVERIFY(m_pg->cluster().start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(client->connectionState(), ConnectionState::Connected, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 5000);
    const auto after = await<store::StatusCounts>(client.get(), &StoreClient::countsReady,
                                                  client->requestCounts());
    QVERIFY(after.value);

    changed.clear();
    m_db = m_pg->open(m_dbName);
    QVERIFY(m_db.isOpen());
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("SELECT * FROM outbox_enqueue('billing', "
                                                  "'invoice.paid', '{}'::jsonb)")));
    QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 1, 20000);

    // A restart (stop + start in one go) is survived just the same.
    states.clear();
    QVERIFY(m_pg->cluster().restart().ok());
    QTRY_VERIFY_WITH_TIMEOUT(states.contains(ConnectionState::Reconnecting), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(client->connectionState(), ConnectionState::Connected, 30000);
    const auto afterRestart = await<store::StatusCounts>(client.get(), &StoreClient::countsReady,
                                                         client->requestCounts());
    QVERIFY(afterRestart.value);
    QCOMPARE(afterRestart.value->pending, 1);
}

QTEST_MAIN(TestStoreClient)
#include "tst_storeclient.moc"
