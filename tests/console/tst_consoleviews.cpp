// Console widgets on their own, without a main window: the demo panel's
// controls, the navigator view keeping its expansion over in-place model
// updates, and the documentation screenshots of the demo (dispatcher panel
// and demo controls). The models themselves are tested headless
// (tst_navmodels, tst_eventtablemodel, tst_demoenvironment).

#include "console/model/statusnavmodel.h"
#include "console/widgets/dispatcherpanel.h"
#include "devtools/demo/demoenvironment.h"
#include "devtools/demo/demopanel.h"
#include "store/database.h"
#include "store/queries.h"

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

#include <memory>

using namespace outbox;
using console::DemoEnvironment;
using console::StatusNavModel;

namespace {

store::StatusCounts counts(const QList<store::TopicCount> &topics) {
    store::StatusCounts c;
    c.serverTime = QDateTime::currentDateTimeUtc();
    for (const auto &t : topics) {
        c.pending += t.pending;
        c.processing += t.processing;
        c.dead += t.dead;
    }
    c.topics = topics;
    return c;
}

store::TopicCount topic(const QString &ns, const QString &name, qint64 pending, qint64 dead) {
    return store::TopicCount{ns, name, pending, 0, dead};
}

} // namespace

class TestConsoleViews : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void demoPanelControls();
    void navigatorKeepsExpansion();
    // Documentation screenshots; runs only with OUTBOX_SCREENSHOT_DIR set.
    void demoScreenshots();
};

void TestConsoleViews::demoPanelControls() {
    DemoEnvironment demo;
    console::DemoPanel panel(&demo);
    auto *failRate = panel.findChild<QSpinBox *>(QStringLiteral("demoFailRate"));
    auto *latency = panel.findChild<QSpinBox *>(QStringLiteral("demoLatency"));
    auto *paused = panel.findChild<QCheckBox *>(QStringLiteral("demoPaused"));
    QVERIFY(failRate && latency && paused);
    QCOMPARE(failRate->value(), 10);
    QCOMPARE(latency->value(), 20);
    failRate->setValue(35);
    QCOMPARE(demo.settings().failRate, 0.35);
    latency->setValue(120);
    QCOMPARE(demo.settings().latency, core::Millis(120));
    paused->setChecked(true);
    QVERIFY(demo.settings().producerPaused);
    demo.setProducerRate(55.0);
    auto *rate = panel.findChild<QDoubleSpinBox *>(QStringLiteral("demoProducerRate"));
    QVERIFY(rate);
    QCOMPARE(rate->value(), 55.0);
}

void TestConsoleViews::navigatorKeepsExpansion() {
    StatusNavModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.applyCounts(
        counts({topic(QStringLiteral("billing"), QStringLiteral("invoice.paid"), 6, 5),
                topic(QStringLiteral("files"), QStringLiteral("file.stored"), 2, 0)}));
    QTreeView view;
    view.setModel(&model);
    view.expandAll();
    const QString selectedKey =
        StatusNavModel::namespaceKey(core::Status::Pending, QStringLiteral("files"));
    const QPersistentModelIndex selected(model.indexForKey(selectedKey));
    view.selectionModel()->setCurrentIndex(selected, QItemSelectionModel::ClearAndSelect |
                                                         QItemSelectionModel::Rows);
    QVERIFY(view.isExpanded(selected));

    // A namespace appears before the selected one, the dead rows go.
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.applyCounts(
        counts({topic(QStringLiteral("billing"), QStringLiteral("invoice.paid"), 6, 0),
                topic(QStringLiteral("crm"), QStringLiteral("contact.merged"), 4, 0),
                topic(QStringLiteral("files"), QStringLiteral("file.stored"), 3, 0)}));
    QCOMPARE(reset.count(), 0);
    QVERIFY(selected.isValid());
    QCOMPARE(StatusNavModel::keyAt(view.selectionModel()->currentIndex()), selectedKey);
    QVERIFY(view.selectionModel()->isSelected(selected));
    QVERIFY(view.isExpanded(selected));
    QVERIFY(view.isExpanded(model.indexForKey(StatusNavModel::statusKey(core::Status::Pending))));
}

void TestConsoleViews::demoScreenshots() {
    const QString shots = qEnvironmentVariable("OUTBOX_SCREENSHOT_DIR");
    if (shots.isEmpty())
        QSKIP("set OUTBOX_SCREENSHOT_DIR to write the documentation screenshots");
    const int seconds = qEnvironmentVariableIntValue("OUTBOX_SCREENSHOT_SECONDS");

    DemoEnvironment demo;
    QSignalSpy ready(&demo, &DemoEnvironment::ready);
    demo.start();
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 180'000);
    console::DispatcherPanel panel;
    panel.resize(1440, 620);
    panel.setConfig(demo.dispatcherConfig(), false);
    panel.setPublisherFactory(demo.publisherFactory());
    panel.setConnInfo(demo.connInfo());
    panel.show();
    panel.start();
    QTRY_COMPARE_WITH_TIMEOUT(panel.state(), dispatch::DispatcherState::Running, 30000);

    const QString connection = store::uniqueConnectionName(QStringLiteral("tst-views"));
    QSqlDatabase db;
    {
        auto opened = store::openDatabase(demo.connInfo(), connection);
        QVERIFY2(opened.ok(), qPrintable(opened.errorMessage()));
        db = opened.value();
    }
    auto queries = std::make_unique<store::EventQueries>(db);
    QTimer countTimer;
    QObject::connect(&countTimer, &QTimer::timeout, &panel, [&] {
        if (const auto c = queries->counts())
            panel.addBacklogSample(c.value());
    });
    countTimer.start(1000);
    // A burst halfway makes the backlog chart worth looking at.
    QTimer::singleShot((seconds > 0 ? seconds : 90) * 500, &demo, [&] {
        demo.setProducerRate(120.0);
        QTimer::singleShot(8000, &demo, [&] { demo.setProducerRate(20.0); });
    });
    QTest::qWait((seconds > 0 ? seconds : 90) * 1000);
    QVERIFY(panel.lastStats().delivered > 0);
    QVERIFY(panel.grab().save(shots + QStringLiteral("/dispatcher-panel.png")));

    console::DemoPanel controls(&demo);
    controls.resize(360, 260);
    controls.show();
    QTest::qWait(300);
    QVERIFY(controls.grab().save(shots + QStringLiteral("/demo-panel.png")));

    countTimer.stop();
    queries.reset();
    db = QSqlDatabase();
    store::closeDatabase(connection);
    QSignalSpy readyToClose(&panel, &console::DispatcherPanel::readyToClose);
    panel.stopForClose();
    QTRY_COMPARE_WITH_TIMEOUT(readyToClose.count(), 1, 30000);
    QSignalSpy stopped(&demo, &DemoEnvironment::stopped);
    demo.stop();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 120000);
}

QTEST_MAIN(TestConsoleViews)
#include "tst_consoleviews.moc"
