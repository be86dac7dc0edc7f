#include "support/serverlogin.h"

#include "core/conninfo.h"
#include "store/session.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

namespace outbox::testing {

namespace {

QString quoted(QString text, QChar quote) {
    text.replace(quote, QString(quote) + quote);
    return quote + text + quote;
}

} // namespace

bool requirePassword(PgFixture &pg, const QString &role, const QString &password) {
    QSqlDatabase admin = pg.open(QStringLiteral("postgres"));
    if (!admin.isOpen() || !sqlExec(admin, QStringLiteral("CREATE ROLE %1 LOGIN PASSWORD %2")
                                               .arg(quoted(role, QLatin1Char('"')),
                                                    quoted(password, QLatin1Char('\'')))))
        return false;
    QFile hba(pg.cluster().dataDirectory() + QStringLiteral("/pg_hba.conf"));
    if (!hba.open(QIODevice::ReadOnly)) {
        qWarning() << "cannot read" << hba.fileName();
        return false;
    }
    const QByteArray rules = hba.readAll();
    hba.close();
    if (!hba.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        qWarning() << "cannot write" << hba.fileName();
        return false;
    }
    hba.write("host all " + quoted(role, QLatin1Char('"')).toUtf8() +
              " 127.0.0.1/32 scram-sha-256\n" + rules);
    hba.close();
    if (sqlScalar(admin, QStringLiteral("SELECT pg_reload_conf()")) != QLatin1String("true"))
        return false;
    // The reload takes effect shortly after pg_reload_conf() returns.
    core::ConnInfo wrong;
    wrong.host = QStringLiteral("127.0.0.1");
    wrong.port = pg.cluster().port();
    wrong.dbname = QStringLiteral("postgres");
    wrong.user = role;
    wrong.password = QStringLiteral("not ") + password;
    const bool applied = QTest::qWaitFor(
        [&wrong] {
            store::Session session(wrong, {.applicationName = QStringLiteral("require-password")});
            return !session.open().ok();
        },
        10000);
    if (!applied)
        qWarning() << "the server still lets" << role << "in without its password";
    return applied;
}

GermanServerLocale::GermanServerLocale() {
    const QString localedef = QStandardPaths::findExecutable(QStringLiteral("localedef"));
    if (localedef.isEmpty()) {
        m_missing = QStringLiteral("localedef (Debian: libc-bin)");
        return;
    }
    if (QDir(QStringLiteral("/usr/share/locale/de/LC_MESSAGES"))
            .entryList({QStringLiteral("postgres-*.mo")})
            .isEmpty()) {
        m_missing = QStringLiteral("PostgreSQL's German messages "
                                   "(/usr/share/locale/de/LC_MESSAGES/postgres-*.mo, Debian: "
                                   "postgresql-15)");
        return;
    }
    if (!m_dir.isValid()) {
        m_missing = QStringLiteral("a temporary directory: ") + m_dir.errorString();
        return;
    }
    const QString target = m_dir.filePath(QStringLiteral("de_DE.UTF-8"));
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(localedef, {QStringLiteral("-i"), QStringLiteral("de_DE"), QStringLiteral("-f"),
                              QStringLiteral("UTF-8"), target});
    process.waitForFinished(120000);
    // localedef exits non-zero for mere warnings: what counts is the locale.
    if (!QFile::exists(target + QStringLiteral("/LC_MESSAGES"))) {
        m_missing = QStringLiteral("the de_DE locale source (Debian: locales); localedef said: ") +
                    QString::fromLocal8Bit(process.readAll()).trimmed();
        return;
    }
    // The server runs as another user: it must reach and read the locale.
    const auto readable = QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                          QFile::ReadGroup | QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther;
    for (const QString &dir :
         QStringList{m_dir.path(), target, target + QStringLiteral("/LC_MESSAGES")})
        QFile::setPermissions(dir, readable);
    m_hadLocPath = qEnvironmentVariableIsSet("LOCPATH");
    m_savedLocPath = qgetenv("LOCPATH");
    qputenv("LOCPATH", QFile::encodeName(m_dir.path()));
    m_set = true;
}

void GermanServerSuite::initTestCase() {
    m_locale = std::make_unique<GermanServerLocale>();
    if (!m_locale->missing().isEmpty())
        QSKIP(qPrintable(QStringLiteral("no German server to test with; missing: ") +
                         m_locale->missing()));
    devtools::EmbeddedPostgres::Options options;
    options.tcp = true;
    options.serverSettings << GermanServerLocale::serverSetting();
    if (startPg({}, options))
        QVERIFY(requirePassword(*m_pg, passwordRole(), rightPassword()));
}

void GermanServerSuite::cleanupTestCase() {
    stopPg();
    m_locale.reset();
}

core::ConnInfo GermanServerSuite::passwordLogin(const QString &password,
                                                const QString &dbname) const {
    core::ConnInfo info;
    info.host = QStringLiteral("127.0.0.1");
    info.port = m_pg->cluster().port();
    info.dbname = dbname;
    info.user = passwordRole();
    info.password = password;
    info.setOption(QStringLiteral("passfile"), QStringLiteral("/nonexistent"));
    return info;
}

GermanServerLocale::~GermanServerLocale() {
    if (!m_set)
        return;
    if (m_hadLocPath)
        qputenv("LOCPATH", m_savedLocPath);
    else
        qunsetenv("LOCPATH");
}

} // namespace outbox::testing
