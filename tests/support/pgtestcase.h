#pragma once

#include "support/pgfixture.h"

#include <QObject>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <memory>

namespace outbox::testing {

// What most database test classes share: one cluster per test executable
// and, per test, a fresh migrated database with a connection to it. A test
// class derives from it beside QObject and calls one helper per QtTest slot:
//
//   class TestX : public QObject, protected PgTestCase {
//       void initTestCase() { startPg(migrateSchema); }
//       void init() { openFreshDb(); }
//       void cleanup() { dropFreshDb(); }
//       void cleanupTestCase() { stopPg(); }
//   };
//
// The helpers fail the current test function (QFAIL/QVERIFY) with the
// reason; those returning bool say whether it may go on.
class PgTestCase {
protected:
    PgTestCase() = default;
    ~PgTestCase() = default;
    Q_DISABLE_COPY_MOVE(PgTestCase)

    // Starts the cluster (with `options`) and sets `preparer` as its template
    // preparer (none: the suite makes its own databases).
    bool startPg(PgFixture::TemplatePreparer preparer = {},
                 const devtools::EmbeddedPostgres::Options &options = {});
    // m_db, a connection to a fresh migrated database m_dbName.
    bool openFreshDb();
    // Closes m_db and drops m_dbName.
    void dropFreshDb();
    // Stops the cluster and removes its directory.
    void stopPg();

    // Creates the LOGIN role `<prefix><group>` in each group role
    // `outbox_<group>` (roles are cluster-wide: a throwaway migrated
    // database serves to create them).
    bool createLoginRoles(const QString &prefix, const QStringList &groups);

    std::unique_ptr<PgFixture> m_pg;
    QString m_dbName;
    QSqlDatabase m_db;
};

// A test class whose fixture is PgTestCase's and nothing more: its
// constructor names the template preparer (the plain schema unless told),
// and these slots run the helpers
// (QtTest finds them in the base class). A suite that needs more in one of
// them declares its own slot of that name, calling the helper.
class PgTestSuite : public QObject, protected PgTestCase {
    Q_OBJECT

public:
    enum class PerTest { FreshDatabase, Nothing };

protected:
    explicit PgTestSuite(PgFixture::TemplatePreparer preparer = migrateSchema,
                         PerTest perTest = PerTest::FreshDatabase)
        : m_preparer(std::move(preparer))
        , m_perTest(perTest) {}

private Q_SLOTS:
    void initTestCase() { startPg(m_preparer); }
    void init() {
        if (m_perTest == PerTest::FreshDatabase)
            openFreshDb();
    }
    void cleanup() {
        if (m_perTest == PerTest::FreshDatabase)
            dropFreshDb();
    }
    void cleanupTestCase() { stopPg(); }

private:
    PgFixture::TemplatePreparer m_preparer;
    PerTest m_perTest;
};

} // namespace outbox::testing
