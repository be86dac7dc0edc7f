#pragma once

// What the main-window tests share: one throwaway cluster per executable
// (migrated with the least-privilege roles), a fresh database and settings
// file per test, and a MainWindow connected to it.

#include "console/model/consolesettings.h"
#include "console/widgets/eventview.h"
#include "console/widgets/mainwindow.h"
#include "support/pgfixture.h"

#include <QAbstractItemModelTester>
#include <QObject>
#include <QSettings>
#include <QSqlDatabase>
#include <QTemporaryDir>

#include <memory>

namespace outbox::testing {

constexpr int kWindowTimeout = 20000;

// "{id,id}" for binding to a uuid[] parameter.
QString uuidArray(const QList<QUuid> &ids);

class WindowTestBase : public QObject {
    Q_OBJECT

protected:
    // Call from initTestCase / init / cleanup / cleanupTestCase.
    void startCluster();
    void setUpDatabase();
    void tearDownDatabase();
    void stopCluster();

    // A window on the test's database (as `user` when given), shown and
    // connected. Health checks and reconnects are quick.
    void openWindow(bool readOnly = false, const QString &user = {});
    // `count` dead events of one namespace with errors "<error> <n>" and,
    // with a prefix, dedupe keys "<prefix><n>".
    void insertDead(int count, const QString &nameSpace, const QString &error,
                    const QString &dedupePrefix = {});
    // Shows the status page and waits until it holds `rows` rows; its model
    // (the view's proxy) is checked by a QAbstractItemModelTester.
    console::EventView *showLoaded(core::Status status, int rows);
    QString scalar(const QString &sql, const QVariantList &values = {});

    std::unique_ptr<PgFixture> m_pg;
    QString m_dbName;
    QSqlDatabase m_db;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<console::ConsoleSettings> m_settings;
    std::unique_ptr<console::MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
};

} // namespace outbox::testing
