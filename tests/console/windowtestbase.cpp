#include "windowtestbase.h"

#include "console/model/eventtablemodel.h"
#include "console/model/storeclient.h"
#include "store/database.h"

#include <QTableView>
#include <QtTest>

namespace outbox::testing {

QString uuidArray(const QList<QUuid> &ids) {
    QStringList parts;
    for (const QUuid &id : ids)
        parts << id.toString(QUuid::WithoutBraces);
    return QLatin1Char('{') + parts.join(QLatin1Char(',')) + QLatin1Char('}');
}

void WindowTestBase::startCluster() {
    m_pg = std::make_unique<PgFixture>();
    OUTBOX_START_PG(*m_pg);
    m_pg->setTemplatePreparer(migrateSchemaWithRoles);
}

void WindowTestBase::setUpDatabase() {
    m_dbName = m_pg->freshMigratedDatabase();
    QVERIFY(!m_dbName.isEmpty());
    m_db = m_pg->open(m_dbName);
    QVERIFY(m_db.isOpen());
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
    const QString connection = m_db.connectionName();
    m_db = QSqlDatabase();
    m_pg->close(connection);
    m_pg->dropDatabase(m_dbName);
}

void WindowTestBase::stopCluster() {
    m_pg.reset();
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
    QTRY_COMPARE_WITH_TIMEOUT(m_window->client()->connectionState(),
                              console::ConnectionState::Connected, kWindowTimeout);
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
    m_window->showStatus(status);
    console::EventView *view = m_window->view(status);
    if (!m_tester) {
        m_tester = std::make_unique<QAbstractItemModelTester>(
            view->table()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    m_window->refreshNow();
    [&] { QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), rows, kWindowTimeout); }();
    return view;
}

QString WindowTestBase::scalar(const QString &sql, const QVariantList &values) {
    return sqlScalar(m_db, sql, values);
}

} // namespace outbox::testing
