#pragma once

// Logins the test server judges: a role that must give its password over
// TCP, and a server that answers in German — for tests of what must not
// depend on the words of the server's messages.

#include "core/conninfo.h"
#include "support/pgfixture.h"
#include "support/pgtestcase.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QTemporaryDir>

#include <memory>

namespace outbox::testing {

// Creates the LOGIN role `role` with `password` and puts a scram-sha-256
// line for it over TCP (127.0.0.1) ahead of the cluster's trust lines, then
// waits until the server applies it. False (with a qWarning) on failure.
bool requirePassword(PgFixture &pg, const QString &role, const QString &password);

// de_DE.UTF-8 for a test cluster, nothing system-wide: localedef compiles it
// into a temporary directory that the server finds through LOCPATH, set in
// this process's environment (which the server inherits) until destruction.
// Start the cluster with serverSetting() after this was made.
class GermanServerLocale final {
public:
    GermanServerLocale();
    ~GermanServerLocale();
    Q_DISABLE_COPY_MOVE(GermanServerLocale)

    // Empty when the locale is ready; else what is missing, and its package.
    const QString &missing() const { return m_missing; }
    static QString serverSetting() { return QStringLiteral("lc_messages=de_DE.UTF-8"); }

private:
    QTemporaryDir m_dir;
    QByteArray m_savedLocPath;
    bool m_hadLocPath = false;
    bool m_set = false;
    QString m_missing;
};

// A test class on a cluster that answers in German, reached over TCP, where
// passwordRole() logs in with rightPassword() only. Its slots start and stop
// the cluster (QtTest finds them in this base class); without a German
// locale the whole class is skipped, saying what to install.
class GermanServerSuite : public QObject, protected PgTestCase {
    Q_OBJECT

protected:
    static QString passwordRole() { return QStringLiteral("tst_password_role"); }
    static QString rightPassword() { return QStringLiteral("right horse battery"); }
    // passwordRole() over TCP with `password` (empty: none); never one from
    // ~/.pgpass or PGPASSWORD.
    core::ConnInfo passwordLogin(const QString &password,
                                 const QString &dbname = QStringLiteral("outbox")) const;

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

private:
    std::unique_ptr<GermanServerLocale> m_locale;
};

} // namespace outbox::testing
