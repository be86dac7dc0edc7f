#include "support/pgtestcase.h"

namespace outbox::testing {

bool PgTestCase::startPg(PgFixture::TemplatePreparer preparer,
                         const devtools::EmbeddedPostgres::Options &options) {
    m_pg = std::make_unique<PgFixture>();
    const auto started = m_pg->start(options);
    if (!started.ok()) {
        QTest::qFail(qPrintable(started.errorMessage()), __FILE__, __LINE__);
        return false;
    }
    if (preparer)
        m_pg->setTemplatePreparer(std::move(preparer));
    return true;
}

bool PgTestCase::openFreshDb() {
    m_db = m_pg->openFreshMigrated(m_dbName);
    return QTest::qVerify(m_db.isOpen(), "m_db.isOpen()", "", __FILE__, __LINE__);
}

void PgTestCase::dropFreshDb() {
    m_pg->closeAndDrop(m_db, m_dbName);
}

void PgTestCase::stopPg() {
    m_db = QSqlDatabase();
    m_pg.reset();
}

bool PgTestCase::createLoginRoles(const QString &prefix, const QStringList &groups) {
    QString name;
    QSqlDatabase admin = m_pg->openFreshMigrated(name);
    bool ok = QTest::qVerify(admin.isOpen(), "admin.isOpen()", "", __FILE__, __LINE__);
    for (const QString &group : groups) {
        if (!ok)
            break;
        ok = QTest::qVerify(
            sqlExec(admin,
                    QStringLiteral("CREATE ROLE %1%2 LOGIN IN ROLE outbox_%2").arg(prefix, group)),
            "sqlExec(CREATE ROLE)", qPrintable(prefix + group), __FILE__, __LINE__);
    }
    m_pg->closeAndDrop(admin, name);
    return ok;
}

} // namespace outbox::testing
