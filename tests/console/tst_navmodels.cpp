// StatusNavModel and ErrorGroupModel: snapshots update the models in place.

#include "console/model/errorgroupmodel.h"
#include "console/model/statusnavmodel.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using console::ErrorGroupModel;
using console::StatusNavModel;

namespace {

store::TopicCount topic(const QString &ns, const QString &name, qint64 pending, qint64 processing,
                        qint64 dead) {
    return store::TopicCount{ns, name, pending, processing, dead};
}

store::StatusCounts sampleCounts() {
    store::StatusCounts c;
    c.pending = 7;
    c.retrying = 3;
    c.processing = 4;
    c.expiredLeases = 1;
    c.delivered = 1200000;
    c.deliveredEstimated = true;
    c.dead = 5;
    c.serverTime = QDateTime::currentDateTimeUtc();
    c.oldestPendingAt = c.serverTime.addSecs(-90);
    c.topics = {
        topic(QStringLiteral("billing"), QStringLiteral("invoice.paid"), 6, 4, 0),
        topic(QStringLiteral("billing"), QStringLiteral("invoice.voided"), 2, 0, 5),
        topic(QStringLiteral("files"), QStringLiteral("file.stored"), 2, 0, 0),
    };
    return c;
}

QString countText(const StatusNavModel &model, const QString &key) {
    const QModelIndex index = model.indexForKey(key);
    return index.siblingAtColumn(StatusNavModel::CountColumn).data().toString();
}

store::ErrorGroup group(const QString &signature, qint64 count) {
    store::ErrorGroup g;
    g.signature = signature;
    g.example = signature + QStringLiteral(" (example)");
    g.count = count;
    g.latest = QDateTime::currentDateTimeUtc().addSecs(-count);
    return g;
}

} // namespace

class TestNavModels : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void statusTreeShape();
    void statusTreeUpdatesInPlace();
    void errorGroupsDiff();
    void errorGroupsFilterChangeResets();
};

void TestNavModels::statusTreeShape() {
    StatusNavModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 4); // the four states exist before any counts arrive
    model.applyCounts(sampleCounts());

    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("Pending"));
    QCOMPARE(model.index(3, 0).data().toString(), QStringLiteral("Dead"));

    const auto pending = core::Status::Pending;
    const auto processing = core::Status::Processing;
    const auto dead = core::Status::Dead;
    QCOMPARE(countText(model, StatusNavModel::statusKey(pending)), console::formatCount(10));
    QCOMPARE(countText(model, StatusNavModel::retryingKey()), console::formatCount(3));
    QCOMPARE(countText(model, StatusNavModel::statusKey(core::Status::Delivered)),
             console::formatCount(1200000, true));
    QVERIFY(countText(model, StatusNavModel::statusKey(core::Status::Delivered))
                .startsWith(QLatin1Char('~')));
    QVERIFY(countText(model, StatusNavModel::statusKey(processing))
                .contains(QStringLiteral("1 expired")));

    // Retrying comes first under Pending, then the namespaces by name.
    const QModelIndex pendingIndex = model.indexForKey(StatusNavModel::statusKey(pending));
    QCOMPARE(model.rowCount(pendingIndex), 3);
    QCOMPARE(StatusNavModel::keyAt(model.index(0, 0, pendingIndex)), StatusNavModel::retryingKey());
    QCOMPARE(model.index(1, 0, pendingIndex).data().toString(), QStringLiteral("billing"));
    QCOMPARE(model.index(2, 0, pendingIndex).data().toString(), QStringLiteral("files"));
    QCOMPARE(countText(model, StatusNavModel::namespaceKey(pending, QStringLiteral("billing"))),
             console::formatCount(8));

    // Dead: only namespaces/topics that have dead rows.
    const QModelIndex deadIndex = model.indexForKey(StatusNavModel::statusKey(dead));
    QCOMPARE(model.rowCount(deadIndex), 1);
    const QModelIndex deadBilling = model.index(0, 0, deadIndex);
    QCOMPARE(model.rowCount(deadBilling), 1);
    QCOMPARE(model.index(0, 0, deadBilling).data().toString(), QStringLiteral("invoice.voided"));

    // Selecting a node yields the filter a view should load.
    const auto topicFilter = StatusNavModel::filterAt(model.indexForKey(StatusNavModel::topicKey(
        dead, QStringLiteral("billing"), QStringLiteral("invoice.voided"))));
    QCOMPARE(topicFilter.status, std::optional<core::Status>(dead));
    QCOMPARE(topicFilter.nameSpace, QStringLiteral("billing"));
    QCOMPARE(topicFilter.topic, QStringLiteral("invoice.voided"));
    const auto retryingFilter =
        StatusNavModel::filterAt(model.indexForKey(StatusNavModel::retryingKey()));
    QCOMPARE(retryingFilter.status, std::optional<core::Status>(pending));
    QCOMPARE(retryingFilter.retrying, std::optional<bool>(true));
}

void TestNavModels::statusTreeUpdatesInPlace() {
    StatusNavModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.applyCounts(sampleCounts());

    // A view's selection model; that a view's expansion survives too is
    // checked in tst_consoleviews.
    QItemSelectionModel selection(&model);
    const QString selectedKey =
        StatusNavModel::namespaceKey(core::Status::Pending, QStringLiteral("files"));
    const QModelIndex selected = model.indexForKey(selectedKey);
    selection.setCurrentIndex(selected,
                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    const QPersistentModelIndex persistent(selected);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy applied(&model, &StatusNavModel::countsApplied);

    // Same counts again: nothing at all changes, but the counts are fresh.
    model.applyCounts(sampleCounts());
    QCOMPARE(changed.count(), 0);
    QCOMPARE(applied.count(), 1);
    QCOMPARE(inserted.count(), 0);
    QCOMPARE(removed.count(), 0);

    // A new namespace appears under Pending (sorted before "files"), the dead
    // rows are requeued, counts move.
    auto next = sampleCounts();
    next.pending = 20;
    next.dead = 0;
    next.topics = {
        topic(QStringLiteral("billing"), QStringLiteral("invoice.paid"), 6, 4, 0),
        topic(QStringLiteral("billing"), QStringLiteral("invoice.voided"), 7, 0, 0),
        topic(QStringLiteral("crm"), QStringLiteral("contact.merged"), 4, 0, 0),
        topic(QStringLiteral("files"), QStringLiteral("file.stored"), 3, 0, 0),
    };
    model.applyCounts(next);

    QCOMPARE(applied.count(), 2);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(layout.count(), 0);
    QCOMPARE(inserted.count(), 1); // the "crm" subtree
    QCOMPARE(removed.count(), 1);  // Dead/billing
    QVERIFY(changed.count() > 0);
    QVERIFY(persistent.isValid());
    QCOMPARE(StatusNavModel::keyAt(persistent), selectedKey);
    QCOMPARE(StatusNavModel::keyAt(selection.currentIndex()), selectedKey);
    QVERIFY(selection.isSelected(persistent));
    QCOMPARE(countText(model, selectedKey), console::formatCount(3));
    QCOMPARE(countText(model, StatusNavModel::statusKey(core::Status::Pending)),
             console::formatCount(23));
    QVERIFY(!model
                 .indexForKey(
                     StatusNavModel::namespaceKey(core::Status::Dead, QStringLiteral("billing")))
                 .isValid());
}

void TestNavModels::errorGroupsDiff() {
    ErrorGroupModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    console::ErrorGroupsResult first;
    first.serverTime = QDateTime::currentDateTimeUtc();
    first.set.groups = {group(QStringLiteral("HTTP 503 from <url>"), 40),
                        group(QStringLiteral("connect timeout after <n>ms"), 12),
                        group(QStringLiteral("HTTP 410 gone"), 2)};
    model.applySnapshot(first);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.totalCount(), 54);
    QCOMPARE(model.index(0, ErrorGroupModel::CountColumn).data().toString(),
             console::formatCount(40));

    QItemSelectionModel selection(&model);
    selection.select(model.index(1, 0),
                     QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    console::ErrorGroupsResult second = first;
    second.set.groups = {group(QStringLiteral("TLS handshake failed"), 50),
                         group(QStringLiteral("HTTP 503 from <url>"), 41),
                         group(QStringLiteral("connect timeout after <n>ms"), 12)};
    second.set.groups[2].latest = first.set.groups[1].latest; // unchanged group
    model.applySnapshot(second);

    QCOMPARE(reset.count(), 0);
    QCOMPARE(removed.count(), 1);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(model.rowCount(), 3);
    const QModelIndexList rows = selection.selectedRows();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows.first().data(ErrorGroupModel::SignatureRole).toString(),
             QStringLiteral("connect timeout after <n>ms"));
    QCOMPARE(model.rowOf(QStringLiteral("HTTP 503 from <url>")), 1);
    QCOMPARE(model.index(1, 0).data(ErrorGroupModel::CountRole).toLongLong(), 41);

    const auto filter =
        model.index(1, 0).data(ErrorGroupModel::FilterRole).value<store::EventFilter>();
    QCOMPARE(filter.errorSignature, QStringLiteral("HTTP 503 from <url>"));
}

void TestNavModels::errorGroupsFilterChangeResets() {
    ErrorGroupModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    console::ErrorGroupsResult dead;
    dead.filter.status = core::Status::Dead;
    dead.set.groups = {group(QStringLiteral("HTTP 500"), 3)};
    model.applySnapshot(dead);

    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    console::ErrorGroupsResult pending;
    pending.filter.status = core::Status::Pending;
    pending.set.groups = {group(QStringLiteral("HTTP 500"), 9)};
    model.applySnapshot(pending);
    QCOMPARE(reset.count(), 1);
    const auto filter =
        model.index(0, 0).data(ErrorGroupModel::FilterRole).value<store::EventFilter>();
    QCOMPARE(filter.status, std::optional<core::Status>(core::Status::Pending));
    QCOMPARE(filter.errorSignature, QStringLiteral("HTTP 500"));
}

QTEST_MAIN(TestNavModels)
#include "tst_navmodels.moc"
