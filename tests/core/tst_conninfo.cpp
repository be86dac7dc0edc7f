#include "core/conninfo.h"

#include <QMap>
#include <QTest>
#include <QUrl>

#include <libpq-fe.h>
#include <memory>
#include <optional>

using namespace outbox::core;

namespace {

using Values = QMap<QString, QString>;

// What libpq's parser reads from `conninfo`; nullopt if it cannot.
std::optional<Values> libpqReads(const QByteArray &conninfo) {
    char *error = nullptr;
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
        PQconninfoParse(conninfo.constData(), &error), &PQconninfoFree);
    PQfreemem(error);
    if (!options)
        return std::nullopt;
    Values values;
    for (const PQconninfoOption *o = options.get(); o->keyword; ++o) {
        if (o->val)
            values.insert(QString::fromUtf8(o->keyword), QString::fromUtf8(o->val));
    }
    return values;
}

// The conninfo string Qt 6.4's QPSQLDriver::open() builds from what
// store::openDatabase() gives it (qsql_psql.cpp: qQuote() for host, dbname,
// user, password and port, then the connect options with every ';' turned
// into a space), as the C string PQconnectdb() receives.
QByteArray qpsqlConnectString(const ConnInfo &info, const QString &connectOptions) {
    const auto qQuote = [](QString s) -> QString {
        s.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
        s.replace(QLatin1Char('\''), QLatin1String("\\'"));
        return QLatin1Char('\'') + s + QLatin1Char('\'');
    };
    QString s;
    if (!info.host.isEmpty())
        s += QStringLiteral("host=") + qQuote(info.host);
    if (!info.dbname.isEmpty())
        s += QStringLiteral(" dbname=") + qQuote(info.dbname);
    if (!info.user.isEmpty())
        s += QStringLiteral(" user=") + qQuote(info.user);
    if (!info.password.isEmpty())
        s += QStringLiteral(" password=") + qQuote(info.password);
    if (info.port > 0)
        s += QStringLiteral(" port=") + qQuote(QString::number(info.port));
    if (!connectOptions.isEmpty()) {
        QString options = connectOptions;
        options.replace(QLatin1Char(';'), QLatin1Char(' '));
        s += QLatin1Char(' ') + options;
    }
    // QPSQL passes toLocal8Bit().constData(): the string ends at a NUL.
    return QByteArray(s.toLocal8Bit().constData());
}

// What libpq receives when `info` is opened through QPSQL; nullopt when
// ConnInfo refuses to hand it over (with the reason in `refusal`).
std::optional<Values> throughQpsql(const ConnInfo &info, QString *refusal = nullptr) {
    const auto options = info.qtConnectOptions();
    if (!options) {
        if (refusal)
            *refusal = options.errorMessage();
        return std::nullopt;
    }
    return libpqReads(qpsqlConnectString(info, options.value()));
}

Result<ConnInfo> parseText(const QString &text) {
    return ConnInfo::parse(text);
}

QString kvQuoted(QString value) {
    value.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    value.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') + value + QLatin1Char('\'');
}

// Every keyword of the libpq this test runs with.
QStringList allKeywords() {
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
        PQconninfoParse("", nullptr), &PQconninfoFree);
    QStringList keywords;
    for (const PQconninfoOption *o = options.get(); o && o->keyword; ++o)
        keywords << QString::fromUtf8(o->keyword);
    return keywords;
}

// Empty when libpq, given `info` through QPSQL, reads exactly `expected`
// (no keyword more, none changed); else what it read instead. A ConnInfo
// that refuses to reach QPSQL (`refused`) is not a failure.
QString compareThroughQpsql(const ConnInfo &info, const Values &expected, bool *refused) {
    const auto got = throughQpsql(info);
    *refused = !got;
    if (!got || *got == expected)
        return {};
    QStringList read;
    for (auto it = got->begin(); it != got->end(); ++it)
        read << it.key() + QLatin1Char('=') + it.value();
    return QStringLiteral("libpq read: ") + read.join(QStringLiteral(" | "));
}

QStringList flatten(const QList<QPair<QString, QString>> &options) {
    QStringList out;
    for (const auto &[key, value] : options)
        out << key + QLatin1Char('=') + value;
    return out;
}

} // namespace

class TestConnInfo final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parseGood_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<QString>("dbname");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("sslmode");
        QTest::addColumn<QStringList>("options");

        const QString none;
        const QStringList noOptions;

        QTest::newRow("empty") << QString() << none << 0 << none << none << none << none
                               << noOptions;
        QTest::newRow("blank") << QStringLiteral("  \t ") << none << 0 << none << none << none
                               << none << noOptions;
        QTest::newRow("kv socket dir")
            << QStringLiteral("host=/run/pg dbname=app user=me") << QStringLiteral("/run/pg") << 0
            << QStringLiteral("app") << QStringLiteral("me") << none << none << noOptions;
        QTest::newRow("kv spaces around =")
            << QStringLiteral("host = localhost   port =5433 dbname= app")
            << QStringLiteral("localhost") << 5433 << QStringLiteral("app") << none << none << none
            << noOptions;
        QTest::newRow("kv tabs and newlines")
            << QStringLiteral("\thost=db\n\tport=6432\r\n") << QStringLiteral("db") << 6432 << none
            << none << none << none << noOptions;
        QTest::newRow("kv quoted values")
            << QStringLiteral("password='se cret' application_name='it\\'s \\\\ here'") << none << 0
            << none << none << QStringLiteral("se cret") << none
            << QStringList{QStringLiteral("application_name=it's \\ here")};
        QTest::newRow("kv backslash unquoted")
            << QStringLiteral("password=a\\ b\\'c") << none << 0 << none << none
            << QStringLiteral("a b'c") << none << noOptions;
        QTest::newRow("kv quoted empty")
            << QStringLiteral("application_name='' dbname=x") << none << 0 << QStringLiteral("x")
            << none << none << none << QStringList{QStringLiteral("application_name=")};
        QTest::newRow("kv quote adjacent to next key")
            << QStringLiteral("host='a'port=1") << QStringLiteral("a") << 1 << none << none << none
            << none << noOptions;
        QTest::newRow("kv later wins")
            << QStringLiteral("dbname=a dbname=b connect_timeout=3 connect_timeout=4") << none << 0
            << QStringLiteral("b") << none << none << none
            << QStringList{QStringLiteral("connect_timeout=4")};
        QTest::newRow("kv ssl options")
            << QStringLiteral("sslmode=verify-full sslrootcert=/etc/ca.pem connect_timeout=5 "
                              "target_session_attrs=read-write gssencmode=disable "
                              "ssl_min_protocol_version=TLSv1.2")
            << none << 0 << none << none << none << QStringLiteral("verify-full")
            << QStringList{QStringLiteral("sslrootcert=/etc/ca.pem"),
                           QStringLiteral("connect_timeout=5"),
                           QStringLiteral("target_session_attrs=read-write"),
                           QStringLiteral("gssencmode=disable"),
                           QStringLiteral("ssl_min_protocol_version=TLSv1.2")};
        QTest::newRow("kv host list")
            << QStringLiteral("host=a,b port=5432") << QStringLiteral("a,b") << 5432 << none << none
            << none << none << noOptions;
        QTest::newRow("kv options with spaces")
            << QStringLiteral("options='-c statement_timeout=5s' hostaddr=127.0.0.1") << none << 0
            << none << none << none << none
            << QStringList{QStringLiteral("options=-c statement_timeout=5s"),
                           QStringLiteral("hostaddr=127.0.0.1")};
        QTest::newRow("kv max port") << QStringLiteral("port=65535") << none << 65535 << none
                                     << none << none << none << noOptions;
        QTest::newRow("kv empty port is default")
            << QStringLiteral("port=''") << none << 0 << none << none << none << none << noOptions;
        QTest::newRow("kv unicode") << QStringLiteral("dbname=b\u00e4ckerei user='J\u00fcrgen K'")
                                    << none << 0 << QStringLiteral("b\u00e4ckerei")
                                    << QStringLiteral("J\u00fcrgen K") << none << none << noOptions;

        QTest::newRow("uri basic")
            << QStringLiteral("postgresql://me@host:5432/app?sslmode=require")
            << QStringLiteral("host") << 5432 << QStringLiteral("app") << QStringLiteral("me")
            << none << QStringLiteral("require") << noOptions;
        QTest::newRow("uri postgres scheme")
            << QStringLiteral("postgres://user:p%40ss@db.example.com/app")
            << QStringLiteral("db.example.com") << 0 << QStringLiteral("app")
            << QStringLiteral("user") << QStringLiteral("p@ss") << none << noOptions;
        QTest::newRow("uri encoded @ and : in password")
            << QStringLiteral("postgresql://u:p%40ss%3Aw@host/db") << QStringLiteral("host") << 0
            << QStringLiteral("db") << QStringLiteral("u") << QStringLiteral("p@ss:w") << none
            << noOptions;
        QTest::newRow("uri empty password")
            << QStringLiteral("postgresql://u:@host") << QStringLiteral("host") << 0 << none
            << QStringLiteral("u") << none << none << noOptions;
        QTest::newRow("uri ipv6") << QStringLiteral("postgresql://[::1]:5433/db")
                                  << QStringLiteral("::1") << 5433 << QStringLiteral("db") << none
                                  << none << none << noOptions;
        QTest::newRow("uri ipv6 zone")
            << QStringLiteral("postgresql://[fe80::1%25eth0]/db") << QStringLiteral("fe80::1%eth0")
            << 0 << QStringLiteral("db") << none << none << none << noOptions;
        QTest::newRow("uri socket dir encoded")
            << QStringLiteral("postgresql://%2Fvar%2Frun%2Fpostgresql/app")
            << QStringLiteral("/var/run/postgresql") << 0 << QStringLiteral("app") << none << none
            << none << noOptions;
        QTest::newRow("uri socket dir in query")
            << QStringLiteral("postgresql:///app?host=/run/pg") << QStringLiteral("/run/pg") << 0
            << QStringLiteral("app") << none << none << none << noOptions;
        QTest::newRow("uri scheme only") << QStringLiteral("postgresql://") << none << 0 << none
                                         << none << none << none << noOptions;
        QTest::newRow("uri host only")
            << QStringLiteral("postgresql://db1") << QStringLiteral("db1") << 0 << none << none
            << none << none << noOptions;
        QTest::newRow("uri host list same port")
            << QStringLiteral("postgresql://h1:5432,h2:5432/db") << QStringLiteral("h1,h2") << 5432
            << QStringLiteral("db") << none << none << none << noOptions;
        QTest::newRow("uri host list no port")
            << QStringLiteral("postgresql://h1,[::1]/db") << QStringLiteral("h1,::1") << 0
            << QStringLiteral("db") << none << none << none << noOptions;
        QTest::newRow("uri ssl=true")
            << QStringLiteral("postgresql://host/db?ssl=true") << QStringLiteral("host") << 0
            << QStringLiteral("db") << none << none << QStringLiteral("require") << noOptions;
        QTest::newRow("uri encoded query")
            << QStringLiteral(
                   "postgresql://host/my%20db?application_name=a%26b%3Dc&connect_timeout=10")
            << QStringLiteral("host") << 0 << QStringLiteral("my db") << none << none << none
            << QStringList{QStringLiteral("application_name=a&b=c"),
                           QStringLiteral("connect_timeout=10")};
        QTest::newRow("uri user without host")
            << QStringLiteral("postgresql://user@/db") << none << 0 << QStringLiteral("db")
            << QStringLiteral("user") << none << none << noOptions;
        QTest::newRow("uri empty port")
            << QStringLiteral("postgresql://host:/db") << QStringLiteral("host") << 0
            << QStringLiteral("db") << none << none << none << noOptions;
        QTest::newRow("uri query overrides")
            << QStringLiteral("postgresql://host:5432/db?port=6543&dbname=other&user=u2")
            << QStringLiteral("host") << 6543 << QStringLiteral("other") << QStringLiteral("u2")
            << none << none << noOptions;
        QTest::newRow("uri utf-8 host")
            << QStringLiteral("postgresql://h%C3%A9/db") << QStringLiteral("h\u00e9") << 0
            << QStringLiteral("db") << none << none << none << noOptions;
        QTest::newRow("uri @ in database name")
            << QStringLiteral("postgresql://h/my@db") << QStringLiteral("h") << 0
            << QStringLiteral("my@db") << none << none << none << noOptions;
        QTest::newRow("uri @ in query")
            << QStringLiteral("postgresql://h:5432/db?application_name=me@x") << QStringLiteral("h")
            << 5432 << QStringLiteral("db") << none << none << none
            << QStringList{QStringLiteral("application_name=me@x")};
        QTest::newRow("uri ? in password")
            << QStringLiteral("postgresql://u:ab?cd@h/db") << QStringLiteral("h") << 0
            << QStringLiteral("db") << QStringLiteral("u") << QStringLiteral("ab?cd") << none
            << noOptions;
        QTest::newRow("kv same port for a host list")
            << QStringLiteral("host=a,b port=5432,5432") << QStringLiteral("a,b") << 5432 << none
            << none << none << none << noOptions;
        QTest::newRow("kv service")
            << QStringLiteral("service=reporting") << none << 0 << none << none << none << none
            << QStringList{QStringLiteral("service=reporting")};
        QTest::newRow("uri trimmed")
            << QStringLiteral("  postgresql://host/db  ") << QStringLiteral("host") << 0
            << QStringLiteral("db") << none << none << none << noOptions;
    }

    void parseGood() {
        QFETCH(QString, text);
        QFETCH(QString, host);
        QFETCH(int, port);
        QFETCH(QString, dbname);
        QFETCH(QString, user);
        QFETCH(QString, password);
        QFETCH(QString, sslmode);
        QFETCH(QStringList, options);

        const auto parsed = ConnInfo::parse(text);
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        QCOMPARE(parsed->host, host);
        QCOMPARE(parsed->port, port);
        QCOMPARE(parsed->dbname, dbname);
        QCOMPARE(parsed->user, user);
        QCOMPARE(parsed->password, password);
        QCOMPARE(parsed->sslmode, sslmode);
        // libpq returns the keywords in its own order, each once.
        QStringList actual = flatten(parsed->options);
        actual.sort();
        options.sort();
        QCOMPARE(actual, options);
    }

    void roundTripKeyValue_data() { parseGood_data(); }

    void roundTripKeyValue() {
        QFETCH(QString, text);
        const auto parsed = ConnInfo::parse(text);
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        const QString rendered = parsed->toKeyValue();
        const auto again = ConnInfo::parse(rendered);
        QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
        QVERIFY2(again.value() == parsed.value(), qPrintable(rendered));
    }

    void qtConnectOptionsSurviveQpsql_data() { parseGood_data(); }

    void qtConnectOptionsSurviveQpsql() {
        QFETCH(QString, text);
        const auto parsed = ConnInfo::parse(text);
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        // What the QPSQL driver does with the value before handing it to libpq.
        const auto options = parsed->qtConnectOptions();
        QVERIFY2(options.ok(), qPrintable(options.errorMessage()));
        QString asDriverSeesIt = options.value();
        asDriverSeesIt.replace(QLatin1Char(';'), QLatin1Char(' '));
        const auto reparsed = ConnInfo::parse(asDriverSeesIt);
        QVERIFY2(reparsed.ok(), qPrintable(reparsed.errorMessage()));
        ConnInfo expected = parsed.value();
        expected.host.clear();
        expected.port = 0;
        expected.dbname.clear();
        expected.user.clear();
        expected.password.clear();
        QVERIFY2(reparsed.value() == expected, qPrintable(asDriverSeesIt));
    }

    void parseBad_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problem");
        QTest::addColumn<QString>("secret"); // must not appear in the message

        const QString noSecret;
        QTest::newRow("misspelt keyword")
            << QStringLiteral("hots=localhost")
            << QStringLiteral("unknown connection option \"hots\"; did you mean host?") << noSecret;
        QTest::newRow("alias keyword")
            << QStringLiteral("database=app")
            << QStringLiteral("\"database\"; did you mean dbname?") << noSecret;
        QTest::newRow("keyword case matters")
            << QStringLiteral("HOST=x") << QStringLiteral("\"HOST\"; did you mean host?")
            << noSecret;
        QTest::newRow("port zero")
            << QStringLiteral("port=0") << QStringLiteral("invalid port \"0\"") << noSecret;
        QTest::newRow("port too big")
            << QStringLiteral("port=65536")
            << QStringLiteral("invalid port \"65536\"; use a number from 1 "
                              "to 65535")
            << noSecret;
        QTest::newRow("port text")
            << QStringLiteral("port=abc") << QStringLiteral("invalid port \"abc\"") << noSecret;
        QTest::newRow("port sign")
            << QStringLiteral("port=+5432") << QStringLiteral("invalid port \"+5432\"") << noSecret;
        QTest::newRow("port list")
            << QStringLiteral("port=5432,5433") << QStringLiteral("several ports") << noSecret;
        QTest::newRow("bad sslmode")
            << QStringLiteral("sslmode=requre")
            << QStringLiteral("invalid sslmode \"requre\"; use one of disable, allow, prefer, "
                              "require, verify-ca, verify-full")
            << noSecret;
        QTest::newRow("bad target_session_attrs")
            << QStringLiteral("target_session_attrs=master")
            << QStringLiteral("invalid target_session_attrs \"master\"") << noSecret;
        QTest::newRow("bad connect_timeout")
            << QStringLiteral("connect_timeout=soon")
            << QStringLiteral("invalid connect_timeout \"soon\"") << noSecret;
        QTest::newRow("unterminated quote")
            << QStringLiteral("host=localhost password='hunter2 dbname=x")
            << QStringLiteral("unterminated quoted value for \"password\"")
            << QStringLiteral("hunter2");
        QTest::newRow("keyword without =")
            << QStringLiteral("host=a port") << QStringLiteral("missing \"=\" after \"port\"")
            << noSecret;
        QTest::newRow("bare database name")
            << QStringLiteral("mydb")
            << QStringLiteral("missing \"=\" after \"mydb\"; write key=value") << noSecret;
        QTest::newRow("missing keyword")
            << QStringLiteral("=value") << QStringLiteral("keyword is missing") << noSecret;
        QTest::newRow("password then bad port")
            << QStringLiteral("password=hunter2 port=99999") << QStringLiteral("invalid port")
            << QStringLiteral("hunter2");
        QTest::newRow("password equal to bad port")
            << QStringLiteral("password=5432x port=5432x") << QStringLiteral("invalid port")
            << QStringLiteral("5432x");

        QTest::newRow("uri bad port")
            << QStringLiteral("postgresql://u:hunter2@host:99999/db")
            << QStringLiteral("invalid port \"99999\"") << QStringLiteral("hunter2");
        QTest::newRow("uri unknown param")
            << QStringLiteral("postgresql://u:hunter2@host/db?hots=x")
            << QStringLiteral("unknown connection option \"hots\"") << QStringLiteral("hunter2");
        QTest::newRow("uri bad escape in password")
            << QStringLiteral("postgresql://u:hun%ZZter@host/db")
            << QStringLiteral("invalid percent-encoding in the password") << QStringLiteral("hun");
        QTest::newRow("uri truncated escape")
            << QStringLiteral("postgresql://host/db%2")
            << QStringLiteral("invalid percent-encoding in \"db%2\"") << noSecret;
        QTest::newRow("uri nul byte") << QStringLiteral("postgresql://host/db%00")
                                      << QStringLiteral("invalid percent-encoding") << noSecret;
        QTest::newRow("uri unclosed ipv6") << QStringLiteral("postgresql://[::1/db")
                                           << QStringLiteral("closing \"]\"") << noSecret;
        QTest::newRow("uri text after ipv6")
            << QStringLiteral("postgresql://u:hunter2@[::1]x/db")
            << QStringLiteral("unexpected text after an IPv6 address") << QStringLiteral("hunter2");
        QTest::newRow("uri unencoded @ in password")
            << QStringLiteral("postgresql://u:p@ss:w@host/db")
            << QStringLiteral("more than one \"@\" before the database name; percent-encode an @ "
                              "in the user name or password as %40")
            << QStringLiteral("ss:w");
        QTest::newRow("uri different ports") << QStringLiteral("postgresql://h1:5432,h2:5433/db")
                                             << QStringLiteral("different ports") << noSecret;
        QTest::newRow("uri port on one host only") << QStringLiteral("postgresql://h1:5433,h2/db")
                                                   << QStringLiteral("different ports") << noSecret;
        QTest::newRow("uri param without value")
            << QStringLiteral("postgresql://host/db?sslmode")
            << QStringLiteral("not of the form key=value") << noSecret;
        QTest::newRow("uri ssl=false") << QStringLiteral("postgresql://host/db?ssl=false")
                                       << QStringLiteral("ssl only accepts \"true\"") << noSecret;
        QTest::newRow("uri bad sslmode")
            << QStringLiteral("postgresql://u:pw@host/db?sslmode=on")
            << QStringLiteral("invalid sslmode \"on\"") << QStringLiteral(":pw@");
    }

    void parseBad() {
        QFETCH(QString, text);
        QFETCH(QString, problem);
        QFETCH(QString, secret);

        const auto parsed = ConnInfo::parse(text);
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.errorKind(), ErrorKind::Invalid);
        const QString message = parsed.errorMessage();
        QVERIFY2(message.contains(problem), qPrintable(message));
        if (!secret.isEmpty())
            QVERIFY2(!message.contains(secret), qPrintable(message));
    }

    void redactedHidesSecrets() {
        const auto parsed = ConnInfo::parse(
            QStringLiteral("host=db user=me password='s3cr3t value' sslpassword=k3yp4ss "
                           "sslkey=/k.pem"));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        const QString redacted = parsed->redacted();
        // Options in libpq's keyword order.
        QCOMPARE(redacted, QStringLiteral("host=db user=me password=*** sslkey=/k.pem "
                                          "sslpassword=***"));
        QVERIFY(!redacted.contains(QStringLiteral("s3cr3t")));
        QVERIFY(!redacted.contains(QStringLiteral("k3yp4ss")));

        // No password: nothing to mask, and no hint that there is one.
        const auto plain = ConnInfo::parse(QStringLiteral("host=db"));
        QVERIFY(plain.ok());
        QCOMPARE(plain->redacted(), QStringLiteral("host=db"));
    }

    void quoting() {
        ConnInfo info;
        info.host = QStringLiteral("db.internal");
        info.port = 5433;
        info.dbname = QStringLiteral("my app");
        info.user = QStringLiteral("o'neil");
        info.password = QStringLiteral("a\\b c");
        info.sslmode = QStringLiteral("require");
        info.setOption(QStringLiteral("application_name"), QString());
        QCOMPARE(info.toKeyValue(),
                 QStringLiteral("host=db.internal port=5433 dbname='my app' user='o\\'neil' "
                                "password='a\\\\b c' sslmode=require application_name=''"));
    }

    void qtConnectOptionsFormat() {
        const auto parsed = ConnInfo::parse(
            QStringLiteral("host=db port=5432 dbname=app user=me password=pw sslmode=verify-ca "
                           "sslrootcert='/etc/my certs/ca.pem' connect_timeout=5"));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        // Every value quoted: QPSQL's ';' -> ' ' can only separate options.
        QCOMPARE(parsed->qtConnectOptions().value(),
                 QStringLiteral("sslmode='verify-ca';connect_timeout='5';"
                                "sslrootcert='/etc/my certs/ca.pem'"));
        QCOMPARE(ConnInfo().qtConnectOptions().value(), QString());
    }

    void optionAccessors() {
        ConnInfo info;
        info.setOption(QStringLiteral("host"), QStringLiteral("h"));
        info.setOption(QStringLiteral("port"), QStringLiteral("6000"));
        info.setOption(QStringLiteral("connect_timeout"), QStringLiteral("3"));
        info.setOption(QStringLiteral("connect_timeout"), QStringLiteral("7"));
        QCOMPARE(info.host, QStringLiteral("h"));
        QCOMPARE(info.port, 6000);
        QCOMPARE(info.option(QStringLiteral("port")), QStringLiteral("6000"));
        QCOMPARE(info.option(QStringLiteral("connect_timeout")), QStringLiteral("7"));
        QCOMPARE(info.options.size(), 1);
        QCOMPARE(info.option(QStringLiteral("sslcert")), QString());
        QCOMPARE(info.toKeyValue(), QStringLiteral("host=h port=6000 connect_timeout=7"));
    }

    void fromEnvironment() {
        const QByteArray saved = qgetenv("OUTBOX_DB");
        const bool wasSet = qEnvironmentVariableIsSet("OUTBOX_DB");

        qunsetenv("OUTBOX_DB");
        auto unset = ConnInfo::fromEnvironment();
        QVERIFY(unset.ok());
        QVERIFY(unset.value() == ConnInfo());

        qputenv("OUTBOX_DB", "");
        auto empty = ConnInfo::fromEnvironment();
        QVERIFY(empty.ok());
        QVERIFY(empty.value() == ConnInfo());

        qputenv("OUTBOX_DB", "postgresql://me:pw@db:6543/app");
        auto uri = ConnInfo::fromEnvironment();
        QVERIFY2(uri.ok(), qPrintable(uri.errorMessage()));
        QCOMPARE(uri->host, QStringLiteral("db"));
        QCOMPARE(uri->port, 6543);
        QCOMPARE(uri->user, QStringLiteral("me"));
        QCOMPARE(uri->password, QStringLiteral("pw"));

        qputenv("OUTBOX_DB", "hots=db password=topsecret");
        auto bad = ConnInfo::fromEnvironment();
        QVERIFY(!bad.ok());
        QVERIFY2(bad.errorMessage().startsWith(QStringLiteral("OUTBOX_DB: ")),
                 qPrintable(bad.errorMessage()));
        QVERIFY(bad.errorMessage().contains(QStringLiteral("\"hots\"")));
        QVERIFY(!bad.errorMessage().contains(QStringLiteral("topsecret")));

        // Behind the password, "hots" may be the rest of an unquoted password.
        qputenv("OUTBOX_DB", "password=topsecret hots=db");
        auto behind = ConnInfo::fromEnvironment();
        QVERIFY(!behind.ok());
        QVERIFY2(
            behind.errorMessage().startsWith(QStringLiteral("OUTBOX_DB: invalid connection "
                                                            "string: unknown connection option")),
            qPrintable(behind.errorMessage()));
        QVERIFY(!behind.errorMessage().contains(QStringLiteral("topsecret")));
        QVERIFY(!behind.errorMessage().contains(QStringLiteral("hots")));

        if (wasSet)
            qputenv("OUTBOX_DB", saved);
        else
            qunsetenv("OUTBOX_DB");
    }

    void keywordsAreLibpqs() {
        // Whatever the linked libpq knows is accepted, and nothing else.
        const QStringList keywords = allKeywords();
        QVERIFY(keywords.contains(QStringLiteral("sslrootcert")));
        for (const QString &keyword : keywords) {
            const auto parsed = parseText(keyword + QStringLiteral("=''"));
            QVERIFY2(parsed.ok(),
                     qPrintable(keyword + QStringLiteral(": ") + parsed.errorMessage()));
        }
        // libpq 16 added load_balance_hosts; an older libpq refuses it.
        const auto newer = parseText(QStringLiteral("load_balance_hosts=random"));
        QCOMPARE(newer.ok(), PQlibVersion() >= 160000);
        if (!newer.ok())
            QVERIFY2(newer.errorMessage().contains(
                         QStringLiteral("unknown connection option \"load_balance_hosts\"")),
                     qPrintable(newer.errorMessage()));
    }

    void valuesNeverInjectKeywords() {
        // Once, `application_name='x;port=1'` connected to port 1, because
        // QPSQL turns every ';' of its connect options into a space. Here every
        // keyword carries values built to end early: through a key=value string,
        // a URI and a field set in code, libpq must read the other settings
        // unchanged and this one verbatim, or ConnInfo must refuse it.
        const QStringList payloads{
            QStringLiteral("x;sslmode=disable"),
            QStringLiteral("x;port=1"),
            QStringLiteral("x;host=evil.invalid"),
            QStringLiteral("a; sslmode=disable port=1 host=evil.invalid"),
            QStringLiteral("x' sslmode='disable"),
            QStringLiteral("x\\' port=1"),
            QStringLiteral("x\\;host=evil.invalid"),
            QStringLiteral("';sslmode=disable;'"),
            QStringLiteral("x\\"),
        };
        const Values base{{QStringLiteral("host"), QStringLiteral("db.internal")},
                          {QStringLiteral("port"), QStringLiteral("5432")},
                          {QStringLiteral("sslmode"), QStringLiteral("require")}};
        int delivered = 0;
        int refused = 0;
        for (const QString &key : allKeywords()) {
            for (const QString &payload : payloads) {
                Values expected = base;
                expected.insert(key, payload);
                ConnInfo inCode;
                inCode.host = base[QStringLiteral("host")];
                inCode.port = 5432;
                inCode.sslmode = base[QStringLiteral("sslmode")];
                inCode.setOption(key, payload);
                const QList<QPair<QString, Result<ConnInfo>>> forms{
                    {QStringLiteral("key=value"),
                     parseText(QStringLiteral("host=db.internal port=5432 sslmode=require ") + key +
                               QLatin1Char('=') + kvQuoted(payload))},
                    {QStringLiteral("URI"),
                     parseText(QStringLiteral("postgresql://db.internal:5432?sslmode=require&") +
                               key + QLatin1Char('=') +
                               QString::fromLatin1(QUrl::toPercentEncoding(payload)))},
                    {QStringLiteral("in code"), inCode},
                };
                for (const auto &[form, parsed] : forms) {
                    if (key == QLatin1String("port") && form == QLatin1String("in code"))
                        continue; // ConnInfo::port is a number: no text to inject
                    const QString context = form + QStringLiteral(", ") + key +
                                            QStringLiteral(" = ") + payload + QStringLiteral(": ");
                    if (!parsed) {
                        ++refused;
                        QCOMPARE(parsed.errorKind(), ErrorKind::Invalid);
                        continue;
                    }
                    bool wasRefused = false;
                    const QString problem =
                        compareThroughQpsql(parsed.value(), expected, &wasRefused);
                    QVERIFY2(problem.isEmpty(), qPrintable(context + problem));
                    ++(wasRefused ? refused : delivered);
                }
            }
        }
        // Both outcomes occur: values QPSQL can carry arrive verbatim.
        QVERIFY(delivered > 100);
        QVERIFY(refused > 100);
    }

    void tlsSettingsCannotBeWeakened() {
        const Values tls{
            {QStringLiteral("sslmode"), QStringLiteral("verify-full")},
            {QStringLiteral("sslrootcert"), QStringLiteral("/etc/ssl/ca.pem")},
            {QStringLiteral("sslcrl"), QStringLiteral("/etc/ssl/crl.pem")},
            {QStringLiteral("sslcert"), QStringLiteral("/etc/ssl/client.pem")},
            {QStringLiteral("sslkey"), QStringLiteral("/etc/ssl/client.key")},
            {QStringLiteral("ssl_min_protocol_version"), QStringLiteral("TLSv1.3")},
            {QStringLiteral("channel_binding"), QStringLiteral("require")},
            {QStringLiteral("sslsni"), QStringLiteral("1")},
            {QStringLiteral("requirepeer"), QStringLiteral("postgres")},
        };
        const Values weak{
            {QStringLiteral("sslmode"), QStringLiteral("disable")},
            {QStringLiteral("sslrootcert"), QStringLiteral("/tmp/evil.pem")},
            {QStringLiteral("sslcrl"), QStringLiteral("/dev/null")},
            {QStringLiteral("sslcert"), QStringLiteral("/tmp/evil.pem")},
            {QStringLiteral("sslkey"), QStringLiteral("/tmp/evil.key")},
            {QStringLiteral("ssl_min_protocol_version"), QStringLiteral("TLSv1")},
            {QStringLiteral("channel_binding"), QStringLiteral("disable")},
            {QStringLiteral("sslsni"), QStringLiteral("0")},
            {QStringLiteral("requirepeer"), QStringLiteral("evil")},
        };
        const QStringList templates{QStringLiteral("x;%1=%2"), QStringLiteral("x' %1='%2"),
                                    QStringLiteral("x\\' %1=%2"), QStringLiteral("x;%1='%2'")};
        QString tlsText;
        QString tlsQuery;
        ConnInfo tlsInCode;
        tlsInCode.host = QStringLiteral("db.internal");
        for (auto it = tls.begin(); it != tls.end(); ++it) {
            tlsText += it.key() + QLatin1Char('=') + it.value() + QLatin1Char(' ');
            tlsQuery += it.key() + QLatin1Char('=') + it.value() + QLatin1Char('&');
            tlsInCode.setOption(it.key(), it.value());
        }
        int checked = 0;
        for (const QString &key : allKeywords()) {
            if (tls.contains(key))
                continue; // setting a TLS keyword itself is not "another field"
            for (auto attack = weak.begin(); attack != weak.end(); ++attack) {
                for (const QString &pattern : templates) {
                    const QString value = pattern.arg(attack.key(), attack.value());
                    ConnInfo inCode = tlsInCode;
                    inCode.setOption(key, value);
                    const QList<Result<ConnInfo>> forms{
                        parseText(QStringLiteral("host=db.internal ") + tlsText + key +
                                  QLatin1Char('=') + kvQuoted(value)),
                        parseText(QStringLiteral("postgresql://db.internal/?") + tlsQuery + key +
                                  QLatin1Char('=') +
                                  QString::fromLatin1(QUrl::toPercentEncoding(value))),
                        inCode,
                    };
                    for (const auto &parsed : forms) {
                        if (!parsed)
                            continue;
                        const auto got = throughQpsql(parsed.value());
                        if (!got)
                            continue;
                        for (auto it = tls.begin(); it != tls.end(); ++it)
                            QVERIFY2(got->value(it.key()) == it.value(),
                                     qPrintable(key + QStringLiteral(" = ") + value +
                                                QStringLiteral(" changed ") + it.key()));
                        ++checked;
                    }
                }
            }
        }
        QVERIFY(checked > 100);
    }

    void semicolonRefusedWithReason() {
        // The attack as it was reported, word for word.
        const auto attack = parseText(
            QStringLiteral("host=db sslmode=require application_name='a;sslmode=disable'"));
        QVERIFY(!attack.ok());
        QCOMPARE(attack.errorKind(), ErrorKind::Invalid);
        QVERIFY2(attack.errorMessage().contains(QStringLiteral(
                     "application_name contains \";\", which the Qt PostgreSQL driver "
                     "(QPSQL) turns into a space on the way to libpq; remove the "
                     "\";\"")),
                 qPrintable(attack.errorMessage()));

        // The same value set in code is refused when it would be handed over.
        ConnInfo inCode;
        inCode.setOption(QStringLiteral("application_name"), QStringLiteral("x;port=1"));
        const auto options = inCode.qtConnectOptions();
        QVERIFY(!options.ok());
        QVERIFY2(options.errorMessage().startsWith(QStringLiteral("invalid connection settings: "
                                                                  "application_name contains")),
                 qPrintable(options.errorMessage()));

        // QPSQL quotes host, dbname, user and password itself: there a ';' is
        // just a character, and arrives as one.
        const auto fields =
            parseText(QStringLiteral("host='/run/a;b' dbname='x;port=1' user=u;v password='p;w d' "
                                     "sslmode=require"));
        QVERIFY2(fields.ok(), qPrintable(fields.errorMessage()));
        const auto got = throughQpsql(fields.value());
        QVERIFY(got.has_value());
        QCOMPARE(got->value(QStringLiteral("host")), QStringLiteral("/run/a;b"));
        QCOMPARE(got->value(QStringLiteral("dbname")), QStringLiteral("x;port=1"));
        QCOMPARE(got->value(QStringLiteral("user")), QStringLiteral("u;v"));
        QCOMPARE(got->value(QStringLiteral("password")), QStringLiteral("p;w d"));
        QCOMPARE(got->value(QStringLiteral("sslmode")), QStringLiteral("require"));
        QVERIFY(!got->contains(QStringLiteral("port")));
    }

    void nulCharacterRefused() {
        // QPSQL hands libpq a C string: a NUL in the password would end it
        // before the connect options, and sslmode=require with them.
        ConnInfo info;
        info.host = QStringLiteral("db.internal");
        info.password = QStringLiteral("Hx9q") + QChar(0) + QStringLiteral("Vb4k");
        info.sslmode = QStringLiteral("require");
        const auto options = info.qtConnectOptions();
        QVERIFY(!options.ok());
        QVERIFY2(
            options.errorMessage().contains(QStringLiteral("password contains a NUL character")),
            qPrintable(options.errorMessage()));
        QVERIFY(!options.errorMessage().contains(QStringLiteral("Hx9q")));
        QVERIFY(!options.errorMessage().contains(QStringLiteral("Vb4k")));

        const QString text =
            QStringLiteral("host=db.internal ") + QChar(0) + QStringLiteral(" sslmode=require");
        const auto parsed = parseText(text);
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.errorMessage().contains(QStringLiteral("NUL character")),
                 qPrintable(parsed.errorMessage()));
    }

    void unknownOrRepeatedKeyRefused() {
        // `options` is a public list: what is put there directly is checked
        // when it is handed to QPSQL, so a key can neither smuggle a keyword
        // nor override sslmode.
        ConnInfo repeated;
        repeated.sslmode = QStringLiteral("require");
        repeated.options.append({QStringLiteral("sslmode"), QStringLiteral("disable")});
        const auto twice = repeated.qtConnectOptions();
        QVERIFY(!twice.ok());
        QVERIFY2(twice.errorMessage().contains(QStringLiteral("sslmode is set twice")),
                 qPrintable(twice.errorMessage()));

        ConnInfo smuggled;
        smuggled.options.append(
            {QStringLiteral("application_name=x sslmode"), QStringLiteral("a")});
        const auto unknown = smuggled.qtConnectOptions();
        QVERIFY(!unknown.ok());
        QVERIFY2(unknown.errorMessage().contains(QStringLiteral("unknown connection option")),
                 qPrintable(unknown.errorMessage()));

        ConnInfo typo;
        typo.options.append({QStringLiteral("sslmod"), QStringLiteral("require")});
        QVERIFY2(typo.qtConnectOptions().errorMessage().contains(
                     QStringLiteral("\"sslmod\"; did you mean sslmode?")),
                 qPrintable(typo.qtConnectOptions().errorMessage()));
    }

    void passwordNeverInErrors_data() {
        // Malformed strings whose writer meant a password made of Hx9q, Vb4k
        // and Zt7w: no error may show any of them, wherever libpq's reading
        // of the string ends the password.
        QTest::addColumn<QString>("text");
        QTest::newRow("space in password") << QStringLiteral("password=Hx9q Vb4kZt7w");
        QTest::newRow("reported example") << QStringLiteral("host=db password=Hx9q Vb4k dbname=x");
        QTest::newRow("= in password tail") << QStringLiteral("password=Hx9q Vb4k=Zt7w");
        QTest::newRow("keyword-like tail") << QStringLiteral("password=Hx9q Vb4k port=Zt7w");
        QTest::newRow("unterminated") << QStringLiteral("host=h password='Hx9q Vb4k");
        QTest::newRow("unterminated by escape") << QStringLiteral("host=h password='Hx9q\\' Vb4k");
        QTest::newRow("unterminated after password")
            << QStringLiteral("password=Hx9q Vb4k='Zt7w dbname=x");
        QTest::newRow("sslpassword tail") << QStringLiteral("sslpassword=Hx9q Vb4k");
        QTest::newRow("tail looks like sslmode") << QStringLiteral("password=Hx9q sslmode=Vb4k");
        QTest::newRow("tail looks like port") << QStringLiteral("password=Hx9q port=Vb4k");
        QTest::newRow("tail looks like a port list") << QStringLiteral("password=Hx9q port=1,Vb4k");
        QTest::newRow("tail looks like a timeout")
            << QStringLiteral("password=Hx9q connect_timeout=Vb4k");
        QTest::newRow("tail with ;")
            << QStringLiteral("password=Hx9q application_name='Vb4k;Zt7w'");
        QTest::newRow("uri two @") << QStringLiteral("postgresql://u:Hx9q@Vb4k@host/db");
        QTest::newRow("uri / in password") << QStringLiteral("postgresql://u:Hx9q/Vb4k@host/db");
        QTest::newRow("uri digits and / in password")
            << QStringLiteral("postgresql://u:1234/Vb4k@host/db");
        QTest::newRow("uri : in password, bad port")
            << QStringLiteral("postgresql://u:Hx9q:Vb4k@host:99999/db");
        QTest::newRow("uri bad escape") << QStringLiteral("postgresql://u:Hx9q%ZZVb4k@host/db");
        QTest::newRow("uri unclosed ipv6") << QStringLiteral("postgresql://u:Hx9q@[::1/db");
        QTest::newRow("uri text after ipv6") << QStringLiteral("postgresql://u:Hx9q@[::1]x/db");
        QTest::newRow("uri empty ipv6") << QStringLiteral("postgresql://u:Hx9q@[]/db");
        QTest::newRow("uri unknown parameter")
            << QStringLiteral("postgresql://u:Hx9q@host/db?hots=1");
        QTest::newRow("uri parameter without =")
            << QStringLiteral("postgresql://u:Hx9q@h/db?sslmode");
        QTest::newRow("uri parameter with two =")
            << QStringLiteral("postgresql://u:Hx9q@h/db?sslmode=a=b");
        QTest::newRow("uri zero byte") << QStringLiteral("postgresql://u:Hx9q@h/db%00");
        QTest::newRow("uri query password bad escape")
            << QStringLiteral("postgresql://h/db?password=Hx9q%ZZVb4k");
        QTest::newRow("uri query password then bad value")
            << QStringLiteral("postgresql://h/db?password=Hx9q&sslmode=Vb4k");
        QTest::newRow("uri encoded password keyword")
            << QStringLiteral("postgresql://h/db?pass%77ord=Hx9q&sslmode=Vb4k");
        QTest::newRow("uri query password with &")
            << QStringLiteral("postgresql://h/db?password=Hx9q&Vb4k=Zt7w");
    }

    void passwordNeverInErrors() {
        QFETCH(QString, text);
        const auto parsed = parseText(text);
        QVERIFY2(!parsed.ok(), "a malformed string was accepted");
        QCOMPARE(parsed.errorKind(), ErrorKind::Invalid);
        const QString message = parsed.errorMessage();
        QVERIFY2(message.startsWith(QStringLiteral("invalid connection string: ")),
                 qPrintable(message));
        for (const char *part : {"Hx9q", "Vb4k", "Zt7w", "1234"})
            QVERIFY2(!message.contains(QLatin1String(part), Qt::CaseInsensitive),
                     qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestConnInfo)
#include "tst_conninfo.moc"
