// The console's one filter (FilterState) in the real window against a real
// PostgreSQL: a navigator click loads the page and groups the errors once
// each, and a click on an error group changes the filter once, loads the
// page once and groups nothing again, without a round trip through the
// filter bar.

#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
#include "console/model/filterstate.h"
#include "console/model/statusnavmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/errorgroupsview.h"
#include "console/widgets/filterbar.h"
#include "windowtestbase.h"

#include <QSignalSpy>
#include <QTableView>
#include <QToolButton>
#include <QTreeView>
#include <QtTest>

using namespace outbox;
using console::RequestKind;
using console::StatusNavModel;
using testing::kWindowTimeout;

namespace {

int requestsOf(const QSignalSpy &requests, RequestKind kind) {
    int n = 0;
    for (const QList<QVariant> &request : requests)
        n += request.at(1).value<RequestKind>() == kind ? 1 : 0;
    return n;
}

} // namespace

class TestFilterWiring final : public testing::WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    void navigatorClickLoadsOnce();
    void errorGroupClickChangesTheFilterOnce();

private:
    console::StoreClient *client() const { return page(core::Status::Dead)->model()->client(); }
    // Past the filter bar's typing pause: anything debounced has gone out.
    static void settle() { QTest::qWait(600); }
};

void TestFilterWiring::navigatorClickLoadsOnce() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503"));
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("timeout after"));
    openWindow();
    setLive(false); // no tick, no refresh on NOTIFY: only what the click asks
    auto *tree = part<QTreeView>(QStringLiteral("navigatorView"));
    QVERIFY(tree);
    auto *navigator = qobject_cast<StatusNavModel *>(tree->model());
    QVERIFY(navigator);
    const QString key =
        StatusNavModel::namespaceKey(core::Status::Dead, QStringLiteral("shipping"));
    QTRY_VERIFY_WITH_TIMEOUT(navigator->indexForKey(key).isValid(), kWindowTimeout);
    auto *groups = part<console::ErrorGroupsView>()->model();
    settle();

    QSignalSpy requests(client(), &console::StoreClient::requestMade);
    const QModelIndex shipping = navigator->indexForKey(key);
    tree->expandAll();
    tree->scrollTo(shipping);
    QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(shipping).center());
    QTRY_COMPARE_WITH_TIMEOUT(currentPage(), page(core::Status::Dead), kWindowTimeout);
    console::EventView *view = currentPage();
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(groups->rowCount(), 1, kWindowTimeout);
    settle();
    QCOMPARE(view->filter().nameSpace, QStringLiteral("shipping"));
    QCOMPARE(requestsOf(requests, RequestKind::Page), 1);
    QCOMPARE(requestsOf(requests, RequestKind::ErrorGroups), 1);
    // The navigator shows the place; the filter bar the namespace.
    QCOMPARE(StatusNavModel::keyAt(tree->currentIndex()), key);
    QCOMPARE(part<console::FilterBar>()->filter().nameSpace, QStringLiteral("shipping"));
}

void TestFilterWiring::errorGroupClickChangesTheFilterOnce() {
    insertDead(3, QStringLiteral("billing"), QStringLiteral("HTTP 503 for request"));
    insertDead(2, QStringLiteral("shipping"), QStringLiteral("timeout after"));
    openWindow();
    setLive(false);
    console::EventView *view = showLoaded(core::Status::Dead, 5);
    QVERIFY(!QTest::currentTestFailed());
    auto *errors = part<console::ErrorGroupsView>();
    QTRY_COMPARE_WITH_TIMEOUT(errors->model()->rowCount(), 2, kWindowTimeout);
    auto *state = part<console::FilterState>();
    QVERIFY(state);
    auto *chip = part<console::FilterBar>()->findChild<QToolButton *>(QStringLiteral("errorChip"));
    QVERIFY(chip);
    QVERIFY(!chip->isVisible());
    settle();

    QSignalSpy changes(state, &console::FilterState::changed);
    QSignalSpy requests(client(), &console::StoreClient::requestMade);
    const int row =
        errors->model()->groups().at(0).signature.startsWith(QLatin1String("timeout")) ? 0 : 1;
    const QString signature = errors->model()->groups().at(row).signature;
    const QModelIndex cell = errors->model()->index(row, 0);
    QTest::mouseClick(errors->view()->viewport(), Qt::LeftButton, {},
                      errors->view()->visualRect(cell).center());
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
    settle();
    QCOMPARE(changes.count(), 1);
    QCOMPARE(changes.at(0).at(0).value<store::EventFilter>().errorSignature, signature);
    QCOMPARE(requestsOf(requests, RequestKind::Page), 1);
    // The same events: grouped already, only the mark moves.
    QCOMPARE(requestsOf(requests, RequestKind::ErrorGroups), 0);
    QCOMPARE(errors->view()->currentIndex().row(), row);
    QVERIFY(chip->isVisible());
    QVERIFY2(chip->toolTip().contains(signature), qPrintable(chip->toolTip()));

    // The chip's ✕ widens it again, once.
    QTest::mouseClick(chip, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 5, kWindowTimeout);
    settle();
    QCOMPARE(changes.count(), 2);
    QCOMPARE(changes.at(1).at(0).value<store::EventFilter>().errorSignature, QString());
    QVERIFY(!chip->isVisible());
    QVERIFY(!errors->view()->selectionModel()->hasSelection());
    QCOMPARE(requestsOf(requests, RequestKind::Page), 2);
    QCOMPARE(requestsOf(requests, RequestKind::ErrorGroups), 0);
}

QTEST_MAIN(TestFilterWiring)
#include "tst_filterwiring.moc"
