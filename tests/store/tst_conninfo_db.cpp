// Connection strings through the real QPSQL driver (store::openDatabase) to a
// real server: every value arrives as written or is refused before anything
// connects, and no value sets another keyword.

#include "core/conninfo.h"
#include "store/database.h"
#include "support/pgtestcase.h"
#include "support/serverlogin.h"

#include <QUrl>
#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::testing::sqlExec;

namespace {

QString kvQuoted(QString value) {
    value.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    value.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') + value + QLatin1Char('\'');
}

core::Result<core::ConnInfo> parseText(const QString &text) {
    return core::ConnInfo::parse(text);
}

// Opens `info` through store::openDatabase, runs `sql` and closes again;
// the first column of the first row, or the error.
core::Result<QString> queryWith(const core::ConnInfo &info, const QString &sql) {
    const QString name = store::uniqueConnectionName(QStringLiteral("conninfo-db"));
    core::Result<QString> outcome = QString();
    {
        auto db = store::openDatabase(info, name);
        if (!db)
            return db.error();
        auto query = store::exec(db.value(), sql);
        if (!query)
            outcome = query.error();
        else if (!query->next())
            outcome = core::Error{core::ErrorKind::Failed, QStringLiteral("no row")};
        else
            outcome = query->value(0).toString();
    }
    store::closeDatabase(name);
    return outcome;
}

} // namespace

class TestConnInfoDb final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    // Over TCP, so that inet_server_port() tells which port was reached.
    core::ConnInfo tcp() const { return parseText(m_pg->cluster().uri()).value(); }
    QString serverPort() const { return QString::number(m_pg->cluster().port()); }

private Q_SLOTS:
    void initTestCase() {
        devtools::EmbeddedPostgres::Options options;
        options.tcp = true;
        startPg({}, options);
    }
    void cleanupTestCase() { stopPg(); }

    void issueExampleIsRefusedBeforeConnecting() {
        // From a string: refused by the parser, naming the keyword and the fix.
        const auto parsed =
            parseText(m_pg->cluster().uri() + QStringLiteral("?application_name=x%3Bport%3D1"));
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.errorMessage().contains(QStringLiteral("application_name contains \";\"")),
                 qPrintable(parsed.errorMessage()));

        // Set in code: refused by openDatabase, before QPSQL sees it.
        core::ConnInfo info = tcp();
        info.setOption(QStringLiteral("application_name"), QStringLiteral("x;port=1"));
        const auto opened = queryWith(info, QStringLiteral("SELECT 1"));
        QVERIFY(!opened.ok());
        QCOMPARE(opened.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(opened.errorMessage().startsWith(
                     QStringLiteral("invalid connection settings: application_name contains "
                                    "\";\"")),
                 qPrintable(opened.errorMessage()));
    }

    void valuesArriveVerbatim_data() {
        QTest::addColumn<QString>("value");
        QTest::newRow("quote and backslash") << QStringLiteral("it's a \\ test");
        QTest::newRow("quote that tries port") << QStringLiteral("x' port='1");
        QTest::newRow("escaped quote that tries port") << QStringLiteral("x\\' port=1");
        QTest::newRow("spaces and =") << QStringLiteral("a b=c sslmode=disable port=1");
        QTest::newRow("trailing backslash") << QStringLiteral("x\\");
    }

    void valuesArriveVerbatim() {
        QFETCH(QString, value);
        const QString sql = QStringLiteral("SELECT current_setting('application_name') || '|' || "
                                           "inet_server_port() || '|' || current_database()");
        const QString expected =
            value + QLatin1Char('|') + serverPort() + QStringLiteral("|outbox");

        core::ConnInfo inCode = tcp();
        inCode.setOption(QStringLiteral("application_name"), value);
        const auto fromCode = queryWith(inCode, sql);
        QVERIFY2(fromCode.ok(), qPrintable(fromCode.errorMessage()));
        QCOMPARE(fromCode.value(), expected);

        const auto uri = parseText(m_pg->cluster().uri() + QStringLiteral("?application_name=") +
                                   QString::fromLatin1(QUrl::toPercentEncoding(value)));
        QVERIFY2(uri.ok(), qPrintable(uri.errorMessage()));
        const auto fromUri = queryWith(uri.value(), sql);
        QVERIFY2(fromUri.ok(), qPrintable(fromUri.errorMessage()));
        QCOMPARE(fromUri.value(), expected);

        const auto keyValue = parseText(QStringLiteral("host=127.0.0.1 port=") + serverPort() +
                                        QStringLiteral(" dbname=outbox user=outbox password=") +
                                        kvQuoted(m_pg->cluster().password()) +
                                        QStringLiteral(" application_name=") + kvQuoted(value));
        QVERIFY2(keyValue.ok(), qPrintable(keyValue.errorMessage()));
        const auto fromKeyValue = queryWith(keyValue.value(), sql);
        QVERIFY2(fromKeyValue.ok(), qPrintable(fromKeyValue.errorMessage()));
        QCOMPARE(fromKeyValue.value(), expected);
    }

    void sslmodeRequireCannotBeUndone() {
        // This server has no TLS: a connection that still requires it fails,
        // one that lost sslmode=require on the way would succeed.
        core::ConnInfo plain = tcp();
        plain.setOption(QStringLiteral("application_name"), QStringLiteral("x' sslmode='disable"));
        QVERIFY2(queryWith(plain, QStringLiteral("SELECT 1")).ok(), "the server should be up");

        core::ConnInfo tls = plain;
        tls.sslmode = QStringLiteral("require");
        const auto refused = queryWith(tls, QStringLiteral("SELECT 1"));
        QVERIFY2(!refused.ok(), "connected without TLS although sslmode=require");
        QVERIFY2(refused.errorMessage().contains(QStringLiteral("SSL"), Qt::CaseInsensitive),
                 qPrintable(refused.errorMessage()));

        // The reported attack, set in code and from a URI: never a connection.
        core::ConnInfo semicolon = tls;
        semicolon.setOption(QStringLiteral("application_name"),
                            QStringLiteral("a;sslmode=disable"));
        const auto attacked = queryWith(semicolon, QStringLiteral("SELECT 1"));
        QVERIFY2(!attacked.ok(), "connected without TLS although sslmode=require");
        QCOMPARE(attacked.errorKind(), core::ErrorKind::Invalid);
        const auto parsed =
            parseText(m_pg->cluster().uri() +
                      QStringLiteral("?sslmode=require&application_name=a%3Bsslmode%3Ddisable"));
        QVERIFY(!parsed.ok());
    }

    void fieldsQpsqlQuotesTakeSemicolons() {
        // host, dbname, user and password reach libpq through QPSQL's own
        // quoting, where ';' is an ordinary character.
        const QString dbName = QStringLiteral("odd;port=1 db'name\\");
        QSqlDatabase admin = m_pg->open(QStringLiteral("outbox"));
        QVERIFY(admin.isOpen());
        QVERIFY(sqlExec(admin, QStringLiteral("CREATE DATABASE \"odd;port=1 db'name\\\"")));
        core::ConnInfo info = tcp();
        info.dbname = dbName;
        const auto reached = queryWith(
            info, QStringLiteral("SELECT current_database() || '|' || inet_server_port()"));
        QVERIFY2(reached.ok(), qPrintable(reached.errorMessage()));
        QCOMPARE(reached.value(), dbName + QLatin1Char('|') + serverPort());
    }

    void passwordArrivesVerbatimAndIsNeverShown() {
        const QString password = QStringLiteral("p;w d' sslmode=disable \\ \"x");
        QVERIFY(testing::requirePassword(*m_pg, QStringLiteral("conninfo_pw"), password));

        core::ConnInfo wrong = tcp();
        wrong.user = QStringLiteral("conninfo_pw");
        wrong.password = QStringLiteral("Hx9q;Vb4k wrong");
        const auto rejected = queryWith(wrong, QStringLiteral("SELECT 1"));
        QVERIFY2(!rejected.ok(), "a wrong password was accepted");
        QCOMPARE(rejected.errorKind(), core::ErrorKind::AuthenticationFailed);
        QVERIFY2(rejected.errorMessage().contains(QStringLiteral("password authentication failed")),
                 qPrintable(rejected.errorMessage()));
        QVERIFY(!rejected.errorMessage().contains(QStringLiteral("Hx9q")));
        QVERIFY(!rejected.errorMessage().contains(QStringLiteral("Vb4k")));

        core::ConnInfo right = wrong;
        right.password = password;
        const auto reached =
            queryWith(right, QStringLiteral("SELECT current_user || '|' || inet_server_port()"));
        QVERIFY2(reached.ok(), qPrintable(reached.errorMessage()));
        QCOMPARE(reached.value(), QStringLiteral("conninfo_pw|") + serverPort());
    }
};

QTEST_GUILESS_MAIN(TestConnInfoDb)
#include "tst_conninfo_db.moc"
