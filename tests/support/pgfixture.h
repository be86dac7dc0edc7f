#pragma once

#include "core/result.h"
#include "devtools/embeddedpostgres.h"

#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QtTest>

#include <functional>
#include <memory>

namespace outbox::testing {

// One throwaway PostgreSQL cluster per test executable. Create it in
// initTestCase() with OUTBOX_START_PG and destroy it in cleanupTestCase()
// (or let the test object's destructor do it): the destructor closes the
// connections it opened, stops the server and removes its directory. A
// cluster that cannot start fails the test run; it is never skipped.
//
//   std::unique_ptr<PgFixture> m_pg;
//   void initTestCase() { m_pg = std::make_unique<PgFixture>(); OUTBOX_START_PG(*m_pg); }
//   void cleanupTestCase() { m_pg.reset(); }
class PgFixture final {
public:
    using TemplatePreparer = std::function<core::Result<void>(const QString &connInfo)>;

    PgFixture();
    ~PgFixture();
    Q_DISABLE_COPY_MOVE(PgFixture)

    core::Result<void> start(const devtools::EmbeddedPostgres::Options &options = {});
    bool isStarted() const;

    // A new empty database with a unique name; empty (with a warning) on failure.
    QString freshDatabase();
    // Runs `preparer` once, lazily, against the database `outbox_template`
    // (e.g. to apply the migrations); each freshMigratedDatabase() is then a
    // fast CREATE DATABASE ... TEMPLATE copy of it.
    void setTemplatePreparer(TemplatePreparer preparer);
    QString freshMigratedDatabase();
    // DROP DATABASE ... WITH (FORCE); false with a warning on failure.
    bool dropDatabase(const QString &name);

    // Opens a QPSQL connection to `dbName` (a unique connection name unless
    // given) as `user` (the cluster's superuser unless given). On failure
    // the database is returned closed, with a qWarning of the reason, so
    // QVERIFY(db.isOpen()) reports it. The fixture removes these connections
    // when it is destroyed; use them in this thread only.
    QSqlDatabase open(const QString &dbName, const QString &connectionName = {},
                      const QString &user = {});
    // Closes and removes a connection opened by open().
    void close(const QString &connectionName);

    // The per-test database of most suites (init/cleanup): a fresh migrated
    // database in `dbName` and a connection to it (closed on failure).
    QSqlDatabase openFreshMigrated(QString &dbName);
    // Clears `db`, removes its connection and drops `dbName` (while the
    // cluster runs: a test may have stopped it).
    void closeAndDrop(QSqlDatabase &db, const QString &dbName);

    const devtools::EmbeddedPostgres &cluster() const { return m_cluster; }
    devtools::EmbeddedPostgres &cluster() { return m_cluster; } // for stop/kill/restart tests
    QString connInfo(const QString &dbName = {}) const { return m_cluster.connInfo(dbName); }

    static constexpr const char *templateDatabase = "outbox_template";

private:
    QString nextName(const char *prefix);
    bool adminExec(const QString &sql);

    devtools::EmbeddedPostgres m_cluster;
    QStringList m_connections;
    QString m_adminConnection;
    TemplatePreparer m_preparer;
    bool m_templateReady = false;
    QString m_templateError;
    int m_counter = 0;
};

// First column of the first row as text; a null QString (and a qWarning
// with the SQL error) when the statement fails or returns no row.
QString sqlScalar(QSqlDatabase db, const QString &sql, const QVariantList &values = {});
// The first column of every row as text; empty (with a qWarning) on failure.
QStringList sqlColumn(QSqlDatabase db, const QString &sql, const QVariantList &values = {});

// Template preparers (PgFixture::setTemplatePreparer): the outbox schema
// applied by the store's Migrator, the same with the four roles, and the
// same with delivery in aggregate order on (`migrate --aggregate-order`).
core::Result<void> migrateSchema(const QString &connInfo);
core::Result<void> migrateSchemaWithRoles(const QString &connInfo);
core::Result<void> migrateSchemaWithAggregateOrder(const QString &connInfo);
// Runs one statement; false (with a qWarning) on failure.
bool sqlExec(QSqlDatabase db, const QString &sql, const QVariantList &values = {});

} // namespace outbox::testing

// Starts `fixture` (optionally with EmbeddedPostgres::Options) or fails the
// current test function with the reason.
#define OUTBOX_START_PG(fixture, ...)                                                              \
    do {                                                                                           \
        const auto outboxPgStarted_ = (fixture).start(__VA_ARGS__);                                \
        if (!outboxPgStarted_.ok())                                                                \
            QFAIL(qPrintable(outboxPgStarted_.errorMessage()));                                    \
    } while (false)
