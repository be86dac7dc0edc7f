#include "windowtestbase.h"

#include "console/model/eventtablemodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/detailpane.h"
#include "store/database.h"

#include <QDir>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScopeGuard>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include <memory>

namespace outbox::testing {

QString uuidArray(const QList<QUuid> &ids) {
    QStringList parts;
    for (const QUuid &id : ids)
        parts << id.toString(QUuid::WithoutBraces);
    return QLatin1Char('{') + parts.join(QLatin1Char(',')) + QLatin1Char('}');
}

void WindowTestBase::startCluster() {
    startPg(migrateSchemaWithRoles);
}

void WindowTestBase::setUpDatabase() {
    if (!openFreshDb())
        return;
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_qsettings = std::make_unique<QSettings>(m_dir->filePath(QStringLiteral("console.ini")),
                                              QSettings::IniFormat);
    m_settings = std::make_unique<console::ConsoleSettings>(m_qsettings.get());
}

void WindowTestBase::tearDownDatabase() {
    m_tester.reset();
    m_window.reset();
    m_settings.reset();
    m_qsettings.reset();
    m_dir.reset();
    dropFreshDb();
}

void WindowTestBase::stopCluster() {
    stopPg();
}

void WindowTestBase::openWindow(bool readOnly, const QString &user) {
    console::MainWindowOptions options;
    options.readOnly = readOnly;
    // Notice a dead server and come back quickly.
    options.client.healthCheckInterval = std::chrono::milliseconds(300);
    options.client.reconnectMin = std::chrono::milliseconds(200);
    options.client.reconnectMax = std::chrono::milliseconds(1000);
    m_window = std::make_unique<console::MainWindow>(m_settings.get(), options);
    auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
    QVERIFY(info.ok());
    if (!user.isEmpty())
        info->user = user;
    m_window->connectTo(info.value());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QTRY_VERIFY2_WITH_TIMEOUT(isConnected(), qPrintable(connectionText()), kWindowTimeout);
}

void WindowTestBase::insertDead(int count, const QString &nameSpace, const QString &error,
                                const QString &dedupePrefix) {
    QVERIFY(sqlExec(
        m_db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, dedupe_key, payload, "
                       " status, attempts, last_error, created_at) "
                       "SELECT outbox_uuid_v7(), ?, 'invoice.paid', "
                       "  CASE WHEN ? = '' THEN NULL ELSE ? || g END, "
                       "  jsonb_build_object('n', g), 'dead', 5, ? || ' ' || g, "
                       "  now() - make_interval(secs => g) "
                       "FROM generate_series(1, ?) AS g"),
        {nameSpace, dedupePrefix, dedupePrefix, error, count}));
}

console::EventView *WindowTestBase::showLoaded(core::Status status, int rows) {
    showPage(status);
    console::EventView *view = page(status);
    if (!m_tester) {
        m_tester = std::make_unique<QAbstractItemModelTester>(
            view->table()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    refresh();
    [&] { QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), rows, kWindowTimeout); }();
    return view;
}

QAction *WindowTestBase::action(console::ActionController::Kind kind) const {
    return actions()->action(kind);
}

console::EventView *WindowTestBase::page(core::Status status) const {
    return part<console::EventView>(QStringLiteral("eventView_") + core::statusName(status));
}

console::EventView *WindowTestBase::currentPage() const {
    return qobject_cast<console::EventView *>(
        part<QTabWidget>(QStringLiteral("statusTabs"))->currentWidget());
}

void WindowTestBase::showPage(core::Status status) {
    auto *tabs = part<QTabWidget>(QStringLiteral("statusTabs"));
    QTabBar *bar = tabs->tabBar();
    QTest::mouseClick(bar, Qt::LeftButton, {}, bar->tabRect(tabs->indexOf(page(status))).center());
    QCOMPARE(currentPage(), page(status));
}

void WindowTestBase::refresh() {
    part<QAction>(QStringLiteral("refreshAction"))->trigger();
}

QString WindowTestBase::connectionText() const {
    return part<QLabel>(QStringLiteral("connectionStateLabel"))->text();
}

bool WindowTestBase::isConnected() const {
    // "● connected", not "● disconnected".
    return connectionText().endsWith(QLatin1String(" connected"));
}

bool WindowTestBase::isLive() const {
    return part<QToolButton>(QStringLiteral("liveButton"))->isChecked();
}

void WindowTestBase::setLive(bool live) {
    auto *button = part<QToolButton>(QStringLiteral("liveButton"));
    if (button->isChecked() != live)
        QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(button->isChecked(), live);
}

int WindowTestBase::clickRows(console::EventView *view, const QList<QUuid> &ids) {
    QTableView *table = view->table();
    const QAbstractItemModel *shown = table->model();
    const QHeaderView *header = table->horizontalHeader();
    int column = 0; // the leftmost visible one
    for (int visual = header->count() - 1; visual >= 0; --visual) {
        if (!header->isSectionHidden(header->logicalIndex(visual)))
            column = header->logicalIndex(visual);
    }
    const auto idAt = [&](int row) {
        return shown->index(row, column).data(console::EventTableModel::IdRole).toUuid();
    };
    table->doItemsLayout(); // rows may just have arrived
    bool first = true;
    for (const QUuid &id : ids) {
        for (int row = 0; row < shown->rowCount(); ++row) {
            if (idAt(row) != id)
                continue;
            const QModelIndex cell = shown->index(row, column);
            table->scrollTo(cell);
            QTest::mouseClick(table->viewport(), Qt::LeftButton,
                              first ? Qt::NoModifier : Qt::ControlModifier,
                              table->visualRect(cell).center());
            first = false;
        }
    }
    // Only the rows asked for: a click that landed elsewhere counts as none.
    const QModelIndexList selected = table->selectionModel()->selectedRows(column);
    for (const QModelIndex &index : selected) {
        if (!ids.contains(idAt(index.row())))
            return -1;
    }
    return int(selected.size());
}

QList<QUuid> WindowTestBase::clickRowsAt(console::EventView *view, const QList<int> &rows) {
    QList<QUuid> ids;
    for (const int row : rows)
        ids << view->model()->eventAt(row).id;
    if (const int selected = clickRows(view, ids); selected != int(rows.size())) {
        qWarning("%d rows selected, expected %d", selected, int(rows.size()));
        return {};
    }
    return ids;
}

void WindowTestBase::selectAllRows(console::EventView *view) {
    QTest::keyClick(view->table(), Qt::Key_A, Qt::ControlModifier);
}

QString WindowTestBase::detailTitle() const {
    return part<console::DetailPane>()->findChild<QLabel *>(QStringLiteral("titleLabel"))->text();
}

QString WindowTestBase::detailExplanation() const {
    return part<console::DetailPane>()->findChild<QLabel *>(QStringLiteral("whyLabel"))->text();
}

QString WindowTestBase::detailPayload() const {
    return part<console::DetailPane>()
        ->findChild<QPlainTextEdit *>(QStringLiteral("payloadEdit"))
        ->toPlainText();
}

QString WindowTestBase::saveAs(QAction *action) {
    const QString oldCwd = QDir::currentPath();
    if (!QDir::setCurrent(m_dir->path())) {
        qWarning().noquote() << "cannot change to" << m_dir->path();
        return {};
    }
    const auto restoreCwd = qScopeGuard([&] { QDir::setCurrent(oldCwd); });
    // Shared: the answer outlives this call when no dialog comes.
    auto path = std::make_shared<QString>();
    answerNext<QFileDialog>([path](QFileDialog *dialog) {
        *path = dialog->selectedFiles().value(0);
        static_cast<QDialog *>(dialog)->accept(); // "Save"
    });
    action->trigger();
    return *path;
}

QString WindowTestBase::scalar(const QString &sql, const QVariantList &values) {
    return sqlScalar(m_db, sql, values);
}

} // namespace outbox::testing
