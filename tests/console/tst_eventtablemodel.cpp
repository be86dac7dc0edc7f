// EventTableModel without a database: snapshots in, minimal row changes out.

#include "console/model/eventtablemodel.h"

#include <QAbstractItemModelTester>
#include <QItemSelectionModel>
#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using console::EventTableModel;

namespace {

const QDateTime kBase = QDateTime(QDate(2024, 5, 1), QTime(12, 0), Qt::UTC);

QUuid idFor(const QString &name) {
    return QUuid::createUuidV5(QUuid(), name);
}

// Event `name`, created `age` seconds before kBase; `version` > 0 marks a
// changed value of the same event.
core::OutboxEvent makeEvent(const QString &name, int age, int version = 0) {
    core::OutboxEvent e;
    e.id = idFor(name);
    e.nameSpace = QStringLiteral("billing");
    e.topic = QStringLiteral("invoice.paid");
    e.payload = "{}";
    e.status = core::Status::Pending;
    e.attempts = version;
    e.nextAttemptAt = kBase;
    e.createdAt = kBase.addSecs(-age);
    e.updatedAt = e.createdAt;
    if (version > 0) {
        e.lastError = QStringLiteral("HTTP 503 (version %1)\nsecond line").arg(version);
    }
    return e;
}

// "a b* c" -> events a, b (changed), c, newest first.
QList<core::OutboxEvent> parse(const QString &spec) {
    QList<core::OutboxEvent> rows;
    const QStringList names = spec.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (const QString &token : names) {
        const bool changed = token.endsWith(QLatin1Char('*'));
        const QString name = changed ? token.chopped(1) : token;
        // Age from the letter, so the same letter always has the same time.
        rows.append(makeEvent(name, name.at(0).unicode(), changed ? 1 : 0));
    }
    return rows;
}

QList<QUuid> idsOf(const EventTableModel &model) {
    QList<QUuid> ids;
    for (int row = 0; row < model.rowCount(); ++row) {
        ids.append(model.index(row, 0).data(EventTableModel::IdRole).toUuid());
    }
    return ids;
}

QList<QUuid> idsOf(const QList<core::OutboxEvent> &rows) {
    QList<QUuid> ids;
    for (const auto &row : rows) {
        if (!ids.contains(row.id)) {
            ids.append(row.id);
        }
    }
    return ids;
}

int rowsIn(const QSignalSpy &spy) {
    int n = 0;
    for (const auto &args : spy) {
        n += args.at(2).toInt() - args.at(1).toInt() + 1;
    }
    return n;
}

} // namespace

class TestEventTableModel : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void diff_data() {
        QTest::addColumn<QString>("before");
        QTest::addColumn<QString>("after");
        QTest::addColumn<int>("removeSignals");
        QTest::addColumn<int>("insertSignals");
        QTest::addColumn<int>("changeSignals");

        QTest::newRow("identical") << "a b c d"
                                   << "a b c d" << 0 << 0 << 0;
        QTest::newRow("one contiguous removal") << "a b c d e"
                                                << "a d e" << 1 << 0 << 0;
        QTest::newRow("two removal runs") << "a b c d e f"
                                          << "a c f" << 2 << 0 << 0;
        QTest::newRow("insert at top") << "a b c"
                                       << "x a b c" << 0 << 1 << 0;
        QTest::newRow("two insert runs") << "a b c"
                                         << "x a y z b c" << 0 << 2 << 0;
        QTest::newRow("append at end") << "a b"
                                       << "a b x y" << 0 << 1 << 0;
        QTest::newRow("change two") << "a b c d"
                                    << "a b* c d*" << 0 << 0 << 2;
        QTest::newRow("replace all") << "a b c"
                                     << "x y z" << 1 << 1 << 0;
        QTest::newRow("from empty") << ""
                                    << "a b" << 0 << 1 << 0;
        QTest::newRow("to empty") << "a b"
                                  << "" << 1 << 0 << 0;
        QTest::newRow("duplicates in snapshot") << "a b c"
                                                << "a a b" << 1 << 0 << 0;
        QTest::newRow("mixed") << "a b c d e f g"
                               << "x a c* d g h" << 2 << 2 << 1;
        QTest::newRow("reorder") << "a b c"
                                 << "c a b" << 0 << 0 << 0;
    }

    void diff() {
        QFETCH(QString, before);
        QFETCH(QString, after);
        QFETCH(int, removeSignals);
        QFETCH(int, insertSignals);
        QFETCH(int, changeSignals);

        EventTableModel model;
        model.setClockRunning(false);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.applySnapshot(parse(before), kBase);
        QCOMPARE(idsOf(model), idsOf(parse(before)));

        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);

        const auto next = parse(after);
        model.applySnapshot(next, kBase);

        // The model now holds exactly the snapshot (first occurrence of an id wins).
        QList<core::OutboxEvent> expected;
        for (const auto &event : next) {
            if (idsOf(expected).contains(event.id)) {
                continue;
            }
            expected.append(event);
        }
        QCOMPARE(model.events(), expected);
        for (int row = 0; row < model.rowCount(); ++row) {
            const auto event = model.index(row, 0).data(EventTableModel::EventRole);
            QCOMPARE(event.value<core::OutboxEvent>(), expected.at(row));
        }
        QCOMPARE(removed.count(), removeSignals);
        QCOMPARE(inserted.count(), insertSignals);
        QCOMPARE(changed.count(), changeSignals);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(layout.count(), 0);
        for (const auto &args : changed) {
            // One row at a time, every column.
            const auto topLeft = args.at(0).toModelIndex();
            const auto bottomRight = args.at(1).toModelIndex();
            QCOMPARE(topLeft.row(), bottomRight.row());
            QCOMPARE(topLeft.column(), 0);
            QCOMPARE(bottomRight.column(), EventTableModel::ColumnCount - 1);
        }
    }

    void selectionSurvivesRefresh() {
        EventTableModel model;
        model.setClockRunning(false);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<core::OutboxEvent> rows;
        for (int i = 0; i < 50; ++i) {
            rows.append(makeEvent(QStringLiteral("e%1").arg(i), 100 + i));
        }
        model.applySnapshot(rows, kBase);
        QCOMPARE(model.rowCount(), 50);

        // The selection model a view would use: it follows the model's row
        // changes through persistent indexes, as a view's does.
        QItemSelectionModel selectionModel(&model);
        QItemSelectionModel *selection = &selectionModel;
        const int selectedRow = 30;
        const QUuid selectedId = rows.at(selectedRow).id;
        selection->setCurrentIndex(model.index(selectedRow, 0),
                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        const QPersistentModelIndex persistent(model.index(selectedRow, 2));

        // Remove 3 rows before the selection (two runs), change 2 others,
        // insert 1 new event at the top.
        QList<core::OutboxEvent> next = rows;
        next[5] = makeEvent(QStringLiteral("e5"), 105, 1);
        next[40] = makeEvent(QStringLiteral("e40"), 140, 1);
        next.remove(20);
        next.remove(10, 2);
        next.prepend(makeEvent(QStringLiteral("new"), 1));

        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
        model.applySnapshot(next, kBase);

        // The same event is still selected and current, two rows higher.
        const QModelIndexList selected = selection->selectedRows();
        QCOMPARE(selected.size(), 1);
        QCOMPARE(selected.first().data(EventTableModel::IdRole).toUuid(), selectedId);
        QCOMPARE(selected.first().row(), selectedRow - 3 + 1);
        QCOMPARE(selection->currentIndex().data(EventTableModel::IdRole).toUuid(), selectedId);
        QVERIFY(persistent.isValid());
        QCOMPARE(persistent.data(EventTableModel::IdRole).toUuid(), selectedId);
        QCOMPARE(persistent.column(), 2);

        // Minimal notifications: two removal runs (3 rows), one insert, two
        // single-row changes; never a reset or layout change.
        QCOMPARE(removed.count(), 2);
        QCOMPARE(rowsIn(removed), 3);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(rowsIn(inserted), 1);
        QCOMPARE(inserted.first().at(1).toInt(), 0);
        QCOMPARE(changed.count(), 2);
        QSet<QUuid> changedIds;
        for (const auto &args : changed) {
            const auto topLeft = args.at(0).toModelIndex();
            QCOMPARE(topLeft.row(), args.at(1).toModelIndex().row());
            changedIds.insert(topLeft.data(EventTableModel::IdRole).toUuid());
        }
        QCOMPARE(changedIds,
                 (QSet<QUuid>{idFor(QStringLiteral("e5")), idFor(QStringLiteral("e40"))}));
        QCOMPARE(reset.count(), 0);
        QCOMPARE(layout.count(), 0);
        QCOMPARE(idsOf(model), idsOf(next));
        QCOMPARE(model.rowOf(selectedId), selectedRow - 2);
    }

    void appendPageSkipsLoadedRows() {
        EventTableModel model;
        model.setClockRunning(false);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.applySnapshot(parse(QStringLiteral("a b c")), kBase, store::PageCursor{kBase, {}});
        QVERIFY(model.nextCursor().has_value());

        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        // "c" moved onto the next page meanwhile; it must not appear twice.
        model.appendPage(parse(QStringLiteral("c d e")), kBase, std::nullopt);
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.first().at(1).toInt(), 3);
        QCOMPARE(inserted.first().at(2).toInt(), 4);
        QCOMPARE(idsOf(model), idsOf(parse(QStringLiteral("a b c d e"))));
        QVERIFY(!model.nextCursor().has_value());
    }

    void relativeTimesUseServerClock() {
        // The database clock is an hour behind this machine: relative times must
        // follow the database, or every row would look an hour old.
        const QDateTime server = QDateTime::currentDateTimeUtc().addSecs(-3600);
        core::OutboxEvent e = makeEvent(QStringLiteral("a"), 0);
        e.createdAt = server.addSecs(-180);
        e.nextAttemptAt = server.addSecs(12);
        e.attempts = 2;
        e.lastError = QStringLiteral("connect timeout\nstack trace line");

        EventTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.applySnapshot({e}, server);

        const auto cell = [&](int column, int role = Qt::DisplayRole) {
            return model.index(0, column).data(role);
        };
        QCOMPARE(cell(EventTableModel::CreatedColumn).toString(), QStringLiteral("3m ago"));
        QCOMPARE(cell(EventTableModel::NextAttemptColumn).toString(), QStringLiteral("in 12s"));
        QCOMPARE(cell(EventTableModel::StatusColumn).toString(), QStringLiteral("retrying"));
        QCOMPARE(cell(EventTableModel::LastErrorColumn).toString(),
                 QStringLiteral("connect timeout"));
        QCOMPARE(cell(EventTableModel::LastErrorColumn, Qt::ToolTipRole).toString(), *e.lastError);
        QCOMPARE(cell(EventTableModel::CreatedColumn, Qt::ToolTipRole).toString(),
                 e.createdAt.toLocalTime().toString(Qt::ISODateWithMs));
        QCOMPARE(cell(EventTableModel::CreatedColumn, EventTableModel::RawRole).toDateTime(),
                 e.createdAt);
        QVERIFY(qAbs(model.serverNow().secsTo(server)) < 60);

        // The clock ticks: every second the time columns are repainted.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 2, 5000);
    }

    void expiredLeaseIsHighlighted() {
        const QDateTime server = QDateTime::currentDateTimeUtc();
        core::OutboxEvent expired = makeEvent(QStringLiteral("expired"), 10);
        expired.status = core::Status::Processing;
        expired.lockedBy = QUuid::createUuid();
        expired.lockedUntil = server.addSecs(-65);
        core::OutboxEvent leased = makeEvent(QStringLiteral("leased"), 20);
        leased.status = core::Status::Processing;
        leased.lockedBy = QUuid::createUuid();
        leased.lockedUntil = server.addSecs(30);

        EventTableModel model;
        model.setClockRunning(false);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.applySnapshot({expired, leased}, server);

        const auto lease = [&](int row, int role) {
            return model.index(row, EventTableModel::LeaseRemainingColumn).data(role);
        };
        QCOMPARE(lease(0, EventTableModel::LeaseExpiredRole).toBool(), true);
        QCOMPARE(lease(0, Qt::DisplayRole).toString(), QStringLiteral("expired 1m 5s ago"));
        QVERIFY(lease(0, Qt::ForegroundRole).isValid());
        QVERIFY(lease(0, Qt::BackgroundRole).isValid());
        QCOMPARE(lease(1, EventTableModel::LeaseExpiredRole).toBool(), false);
        QCOMPARE(lease(1, Qt::DisplayRole).toString(), QStringLiteral("in 30s"));
        QVERIFY(!lease(1, Qt::ForegroundRole).isValid());
        QCOMPARE(model.index(0, EventTableModel::LeaseHolderColumn).data().toString(),
                 expired.lockedBy->toString(QUuid::WithoutBraces).left(8));
        // A processing row has no "next attempt".
        QCOMPARE(model.index(0, EventTableModel::NextAttemptColumn).data().toString(), QString());
    }

    void noClientMeansNoFetchMore() {
        EventTableModel model;
        model.applySnapshot(parse(QStringLiteral("a b")), kBase, store::PageCursor{kBase, {}});
        QVERIFY(!model.canFetchMore({}));
        model.fetchMore({}); // harmless
        QCOMPARE(model.rowCount(), 2);
        QVERIFY(!model.isLoading());
    }
};

QTEST_MAIN(TestEventTableModel)
#include "tst_eventtablemodel.moc"
