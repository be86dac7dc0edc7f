// The models fed by a real StoreClient: keyset paging through fetchMore,
// refreshes diffed in, counts and error groups from the database.

#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
#include "console/model/statusnavmodel.h"
#include "console/model/storeclient.h"
#include "store/database.h"
#include "support/pgtestcase.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSet>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using console::ConnectionState;
using console::EventTableModel;
using console::StatusNavModel;
using console::StoreClient;

namespace {

QList<QUuid> modelIds(const EventTableModel &model) {
    QList<QUuid> ids;
    for (int row = 0; row < model.rowCount(); ++row)
        ids.append(model.index(row, 0).data(EventTableModel::IdRole).toUuid());
    return ids;
}

int rowsIn(const QSignalSpy &spy) {
    int n = 0;
    for (const auto &args : spy)
        n += args.at(2).toInt() - args.at(1).toInt() + 1;
    return n;
}

} // namespace

class TestLiveEventModel : public outbox::testing::PgTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void init() {
        if (!openFreshDb())
            return;
        auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
        QVERIFY(info.ok());
        m_client = std::make_unique<StoreClient>(info.value());
        m_client->start();
        QTRY_COMPARE_WITH_TIMEOUT(m_client->connectionState(), ConnectionState::Connected, 20000);
    }
    void cleanup() {
        m_client.reset();
        dropFreshDb();
    }

    void fetchMorePagesThroughEveryRowOnce_data();
    void fetchMorePagesThroughEveryRowOnce();
    void refreshAppliesDatabaseChangesMinimally();
    void failedLoadIsReported();
    void countsAndErrorGroupsFeedTheirModels();
    void aStoppedSearchIsNotRereadByTheLiveTick();

private:
    void insertPending(int count, const QString &topicExpr = QStringLiteral("'invoice.paid'"));
    QList<QUuid> idsInOrder(const QString &order);

    std::unique_ptr<StoreClient> m_client;
};

void TestLiveEventModel::insertPending(int count, const QString &topicExpr) {
    // Distinct created_at per row: the keyset order is fully determined.
    QVERIFY(testing::sqlExec(
        m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, "
                             "created_at) "
                             "SELECT outbox_uuid_v7(), 'billing', %1, jsonb_build_object('n', g), "
                             "  now() - make_interval(secs => g) "
                             "FROM generate_series(1, %2) AS g")
                  .arg(topicExpr, QString::number(count))));
}

QList<QUuid> TestLiveEventModel::idsInOrder(const QString &order) {
    QList<QUuid> ids;
    QSqlQuery query(m_db);
    if (!query.exec(QStringLiteral("SELECT id FROM outbox_events WHERE status = 'pending' "
                                   "ORDER BY ") +
                    order)) {
        qWarning() << query.lastError().text();
        return ids;
    }
    while (query.next())
        ids.append(query.value(0).toUuid());
    return ids;
}

void TestLiveEventModel::fetchMorePagesThroughEveryRowOnce_data() {
    QTest::addColumn<store::SortOrder>("order");
    QTest::addColumn<QString>("sql");
    QTest::newRow("oldest first") << store::SortOrder::OldestFirst
                                  << QStringLiteral("created_at, id");
    QTest::newRow("newest first") << store::SortOrder::NewestFirst
                                  << QStringLiteral("created_at DESC, id DESC");
}

void TestLiveEventModel::fetchMorePagesThroughEveryRowOnce() {
    QFETCH(store::SortOrder, order);
    QFETCH(QString, sql);
    insertPending(1000);

    EventTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setClient(m_client.get());
    model.setPageSize(128);
    store::EventFilter filter;
    filter.status = core::Status::Pending;
    model.setQuery(filter, order);
    QVERIFY(model.isLoading());
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 20000);
    QCOMPARE(model.rowCount(), 128);

    int fetches = 0;
    while (model.canFetchMore({})) {
        QVERIFY2(++fetches <= 20, "fetchMore never reaches the end");
        model.fetchMore({});
        QVERIFY(model.isLoading());
        QVERIFY(!model.canFetchMore({})); // one fetch at a time
        QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 20000);
    }
    QCOMPARE(model.rowCount(), 1000);
    const QList<QUuid> ids = modelIds(model);
    QCOMPARE(QSet<QUuid>(ids.cbegin(), ids.cend()).size(), 1000);
    QCOMPARE(ids, idsInOrder(sql));
}

void TestLiveEventModel::refreshAppliesDatabaseChangesMinimally() {
    insertPending(50);
    EventTableModel model;
    model.setClockRunning(false);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setClient(m_client.get());
    store::EventFilter filter;
    filter.status = core::Status::Pending;
    model.setQuery(filter, store::SortOrder::OldestFirst);
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading() && model.rowCount() == 50, 20000);

    QItemSelectionModel selection(&model);
    const int selectedRow = 30;
    const QUuid selectedId = model.eventAt(selectedRow).id;
    selection.select(model.index(selectedRow, 0),
                     QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    // Another session delivers 3 events before the selection, fails 2
    // others and enqueues 1 (the newest, so last when oldest first).
    const auto idAt = [&](int row) { return model.eventAt(row).id.toString(QUuid::WithoutBraces); };
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered', "
                                                  "delivered_at = now() WHERE id IN ('%1', '%2', "
                                                  "'%3')")
                                       .arg(idAt(4), idAt(5), idAt(17))));
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET attempts = 1, "
                                                  "last_error = 'HTTP 502' WHERE id IN ('%1', "
                                                  "'%2')")
                                       .arg(idAt(10), idAt(40))));
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("SELECT * FROM outbox_enqueue('billing', "
                                                  "'invoice.paid', '{}'::jsonb)")));

    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 20000);

    QCOMPARE(reset.count(), 0);
    QCOMPARE(removed.count(), 2); // rows 4-5 and row 17
    QCOMPARE(rowsIn(removed), 3);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), 47);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(model.rowCount(), 48);
    const QModelIndexList selected = selection.selectedRows();
    QCOMPARE(selected.size(), 1);
    QCOMPARE(selected.first().data(EventTableModel::IdRole).toUuid(), selectedId);
    QCOMPARE(selected.first().row(), selectedRow - 3);
    QCOMPARE(modelIds(model), idsInOrder(QStringLiteral("created_at, id")));
}

void TestLiveEventModel::failedLoadIsReported() {
    EventTableModel model;
    model.setClient(m_client.get());
    QSignalSpy failed(&model, &EventTableModel::loadFailed);
    // Lose the client's session behind its back while the database takes
    // no new connections (a read that meets a closed connection is run once
    // more on a new one, which must fail too): the page request fails with a
    // message, and the model is not left loading forever.
    // (A database's connections are switched from another database.)
    const QSqlDatabase admin = m_pg->open(QStringLiteral("postgres"));
    QVERIFY(testing::sqlExec(
        admin, QStringLiteral("ALTER DATABASE %1 ALLOW_CONNECTIONS false").arg(m_dbName)));
    QVERIFY(
        testing::sqlExec(m_db, QStringLiteral("SELECT pg_terminate_backend(pid) FROM "
                                              "pg_stat_activity WHERE datname = current_database() "
                                              "AND pid <> pg_backend_pid()")));
    QTRY_COMPARE_WITH_TIMEOUT(
        testing::sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE "
                                                "datname = current_database() AND pid <> "
                                                "pg_backend_pid()")),
        QStringLiteral("0"), 20000);
    model.setQuery({}, store::SortOrder::NewestFirst);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 20000);
    QVERIFY(!model.isLoading());
    QVERIFY(!failed.first().at(0).toString().isEmpty());
    // The client reconnects by itself once connections are allowed again; a
    // retry then works.
    QVERIFY(testing::sqlExec(
        admin, QStringLiteral("ALTER DATABASE %1 ALLOW_CONNECTIONS true").arg(m_dbName)));
    QTRY_COMPARE_WITH_TIMEOUT(m_client->connectionState(), ConnectionState::Connected, 30000);
    insertPending(3);
    model.refresh();
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading() && model.rowCount() == 3, 20000);
}

void TestLiveEventModel::countsAndErrorGroupsFeedTheirModels() {
    insertPending(6, QStringLiteral("'invoice.' || mod(g, 2)"));
    QVERIFY(testing::sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'dead', "
                                                  "attempts = 10, last_error = 'HTTP 500 on "
                                                  "request ' || id WHERE topic = 'invoice.1'")));

    console::StatusNavModel nav;
    QAbstractItemModelTester navTester(&nav,
                                       QAbstractItemModelTester::FailureReportingMode::QtTest);
    console::ErrorGroupModel groups;
    QAbstractItemModelTester groupTester(&groups,
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    connect(m_client.get(), &StoreClient::countsReady, &nav,
            [&](console::RequestId, const store::StatusCounts &c) { nav.applyCounts(c); });
    connect(
        m_client.get(), &StoreClient::errorGroupsReady, &groups,
        [&](console::RequestId, const console::ErrorGroupsResult &r) { groups.applySnapshot(r); });

    QSignalSpy countsSpy(m_client.get(), &StoreClient::countsReady);
    QSignalSpy groupsSpy(m_client.get(), &StoreClient::errorGroupsReady);
    m_client->requestCounts();
    store::EventFilter dead;
    dead.status = core::Status::Dead;
    m_client->requestErrorGroups(dead);
    QTRY_COMPARE_WITH_TIMEOUT(countsSpy.count(), 1, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(groupsSpy.count(), 1, 20000);

    const QModelIndex deadTopic = nav.indexForKey(StatusNavModel::topicKey(
        core::Status::Dead, QStringLiteral("billing"), QStringLiteral("invoice.1")));
    QVERIFY(deadTopic.isValid());
    QCOMPARE(deadTopic.data(StatusNavModel::CountRole).toLongLong(), 3);
    QCOMPARE(nav.indexForKey(StatusNavModel::statusKey(core::Status::Pending))
                 .data(StatusNavModel::CountRole)
                 .toLongLong(),
             3);
    // Three errors that differ only in the event id: one group.
    QCOMPARE(groups.rowCount(), 1);
    QCOMPARE(groups.index(0, 0).data(console::ErrorGroupModel::CountRole).toLongLong(), 3);
}

void TestLiveEventModel::aStoppedSearchIsNotRereadByTheLiveTick() {
    insertPending(3);
    EventTableModel model;
    model.setClient(m_client.get());
    model.setSearchTimeout(core::Millis(300));
    QSignalSpy failed(&model, &EventTableModel::loadFailed);
    QSignalSpy loading(&model, &EventTableModel::loadingChanged);
    // Another session holds the table: the search waits and stops at its bound.
    QSqlDatabase locker = m_pg->open(m_dbName, QStringLiteral("locker"));
    QVERIFY(locker.transaction());
    QVERIFY(testing::sqlExec(locker,
                             QStringLiteral("LOCK TABLE outbox_events IN ACCESS EXCLUSIVE MODE")));
    store::EventFilter search;
    search.text = QStringLiteral("invoice");
    model.setQuery(search);
    QTRY_VERIFY_WITH_TIMEOUT(model.searchStopped(), 20000);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.first().at(0).toString().contains(QStringLiteral("narrow the filter"),
                                                      Qt::CaseInsensitive),
             qPrintable(failed.first().at(0).toString()));
    QVERIFY(model.hasAnswer());
    QVERIFY(locker.rollback());
    locker = QSqlDatabase();
    m_pg->close(QStringLiteral("locker"));

    // The live tick does not run the same search again...
    loading.clear();
    model.refresh();
    QVERIFY(!model.isLoading());
    QCOMPARE(loading.count(), 0);
    // ...asking again does, and now it answers.
    model.setQuery(search);
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading() && model.rowCount() == 3, 20000);
    QVERIFY(!model.searchStopped());
}

QTEST_MAIN(TestLiveEventModel)
#include "tst_liveeventmodel.moc"
