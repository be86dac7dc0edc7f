#include "core/conninfo.h"

#include <QTest>

using namespace outbox::core;

namespace {

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
    void parseGood_data();
    void parseGood();
    void roundTripKeyValue_data() { parseGood_data(); }
    void roundTripKeyValue();
    void qtConnectOptionsSurviveQpsql_data() { parseGood_data(); }
    void qtConnectOptionsSurviveQpsql();
    void parseBad_data();
    void parseBad();
    void redactedHidesSecrets();
    void quoting();
    void qtConnectOptionsFormat();
    void optionAccessors();
    void fromEnvironment();
};

void TestConnInfo::parseGood_data() {
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

    QTest::newRow("empty") << QString() << none << 0 << none << none << none << none << noOptions;
    QTest::newRow("blank") << QStringLiteral("  \t ") << none << 0 << none << none << none << none
                           << noOptions;
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
    QTest::newRow("kv host list") << QStringLiteral("host=a,b port=5432") << QStringLiteral("a,b")
                                  << 5432 << none << none << none << none << noOptions;
    QTest::newRow("kv options with spaces")
        << QStringLiteral("options='-c statement_timeout=5s' hostaddr=127.0.0.1") << none << 0
        << none << none << none << none
        << QStringList{QStringLiteral("options=-c statement_timeout=5s"),
                       QStringLiteral("hostaddr=127.0.0.1")};
    QTest::newRow("kv max port") << QStringLiteral("port=65535") << none << 65535 << none << none
                                 << none << none << noOptions;
    QTest::newRow("kv empty port is default")
        << QStringLiteral("port=''") << none << 0 << none << none << none << none << noOptions;
    QTest::newRow("kv unicode") << QStringLiteral("dbname=b\u00e4ckerei user='J\u00fcrgen K'")
                                << none << 0 << QStringLiteral("b\u00e4ckerei")
                                << QStringLiteral("J\u00fcrgen K") << none << none << noOptions;

    QTest::newRow("uri basic") << QStringLiteral("postgresql://me@host:5432/app?sslmode=require")
                               << QStringLiteral("host") << 5432 << QStringLiteral("app")
                               << QStringLiteral("me") << none << QStringLiteral("require")
                               << noOptions;
    QTest::newRow("uri postgres scheme")
        << QStringLiteral("postgres://user:p%40ss@db.example.com/app")
        << QStringLiteral("db.example.com") << 0 << QStringLiteral("app") << QStringLiteral("user")
        << QStringLiteral("p@ss") << none << noOptions;
    QTest::newRow("uri unencoded @ in password")
        << QStringLiteral("postgresql://u:p@ss:w@host/db") << QStringLiteral("host") << 0
        << QStringLiteral("db") << QStringLiteral("u") << QStringLiteral("p@ss:w") << none
        << noOptions;
    QTest::newRow("uri empty password")
        << QStringLiteral("postgresql://u:@host") << QStringLiteral("host") << 0 << none
        << QStringLiteral("u") << none << none << noOptions;
    QTest::newRow("uri ipv6") << QStringLiteral("postgresql://[::1]:5433/db")
                              << QStringLiteral("::1") << 5433 << QStringLiteral("db") << none
                              << none << none << noOptions;
    QTest::newRow("uri ipv6 zone")
        << QStringLiteral("postgresql://[fe80::1%25eth0]/db") << QStringLiteral("fe80::1%eth0") << 0
        << QStringLiteral("db") << none << none << none << noOptions;
    QTest::newRow("uri socket dir encoded")
        << QStringLiteral("postgresql://%2Fvar%2Frun%2Fpostgresql/app")
        << QStringLiteral("/var/run/postgresql") << 0 << QStringLiteral("app") << none << none
        << none << noOptions;
    QTest::newRow("uri socket dir in query")
        << QStringLiteral("postgresql:///app?host=/run/pg") << QStringLiteral("/run/pg") << 0
        << QStringLiteral("app") << none << none << none << noOptions;
    QTest::newRow("uri scheme only") << QStringLiteral("postgresql://") << none << 0 << none << none
                                     << none << none << noOptions;
    QTest::newRow("uri host only") << QStringLiteral("postgresql://db1") << QStringLiteral("db1")
                                   << 0 << none << none << none << none << noOptions;
    QTest::newRow("uri host list same port")
        << QStringLiteral("postgresql://h1:5432,h2:5432/db") << QStringLiteral("h1,h2") << 5432
        << QStringLiteral("db") << none << none << none << noOptions;
    QTest::newRow("uri host list no port")
        << QStringLiteral("postgresql://h1,[::1]/db") << QStringLiteral("h1,::1") << 0
        << QStringLiteral("db") << none << none << none << noOptions;
    QTest::newRow("uri ssl=true") << QStringLiteral("postgresql://host/db?ssl=true")
                                  << QStringLiteral("host") << 0 << QStringLiteral("db") << none
                                  << none << QStringLiteral("require") << noOptions;
    QTest::newRow("uri encoded query")
        << QStringLiteral("postgresql://host/my%20db?application_name=a%26b%3Dc&connect_timeout=10")
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
        << QStringLiteral("host") << 6543 << QStringLiteral("other") << QStringLiteral("u2") << none
        << none << noOptions;
    QTest::newRow("uri utf-8 host")
        << QStringLiteral("postgresql://h%C3%A9/db") << QStringLiteral("h\u00e9") << 0
        << QStringLiteral("db") << none << none << none << noOptions;
    QTest::newRow("uri trimmed") << QStringLiteral("  postgresql://host/db  ")
                                 << QStringLiteral("host") << 0 << QStringLiteral("db") << none
                                 << none << none << noOptions;
}

void TestConnInfo::parseGood() {
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
    QCOMPARE(flatten(parsed->options), options);
}

void TestConnInfo::roundTripKeyValue() {
    QFETCH(QString, text);
    const auto parsed = ConnInfo::parse(text);
    QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
    const QString rendered = parsed->toKeyValue();
    const auto again = ConnInfo::parse(rendered);
    QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
    QVERIFY2(again.value() == parsed.value(), qPrintable(rendered));
}

void TestConnInfo::qtConnectOptionsSurviveQpsql() {
    QFETCH(QString, text);
    const auto parsed = ConnInfo::parse(text);
    QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
    // What the QPSQL driver does with the value before handing it to libpq.
    QString asDriverSeesIt = parsed->qtConnectOptions();
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

void TestConnInfo::parseBad_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("secret"); // must not appear in the message

    const QString noSecret;
    QTest::newRow("misspelt keyword")
        << QStringLiteral("hots=localhost")
        << QStringLiteral("unknown connection option \"hots\"; did you mean host?") << noSecret;
    QTest::newRow("alias keyword")
        << QStringLiteral("database=app") << QStringLiteral("\"database\"; did you mean dbname?")
        << noSecret;
    QTest::newRow("keyword newer than PG15")
        << QStringLiteral("load_balance_hosts=random")
        << QStringLiteral("unknown connection option \"load_balance_hosts\"") << noSecret;
    QTest::newRow("keyword case matters")
        << QStringLiteral("HOST=x") << QStringLiteral("\"HOST\"; did you mean host?") << noSecret;
    QTest::newRow("port zero") << QStringLiteral("port=0") << QStringLiteral("invalid port \"0\"")
                               << noSecret;
    QTest::newRow("port too big") << QStringLiteral("port=65536")
                                  << QStringLiteral("invalid port \"65536\"; use a number from 1 "
                                                    "to 65535")
                                  << noSecret;
    QTest::newRow("port text") << QStringLiteral("port=abc")
                               << QStringLiteral("invalid port \"abc\"") << noSecret;
    QTest::newRow("port sign") << QStringLiteral("port=+5432")
                               << QStringLiteral("invalid port \"+5432\"") << noSecret;
    QTest::newRow("port list") << QStringLiteral("port=5432,5433")
                               << QStringLiteral("several ports") << noSecret;
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
        << QStringLiteral("mydb") << QStringLiteral("missing \"=\" after \"mydb\"; write key=value")
        << noSecret;
    QTest::newRow("missing keyword")
        << QStringLiteral("=value") << QStringLiteral("keyword is missing") << noSecret;
    QTest::newRow("password then bad port")
        << QStringLiteral("password=hunter2 port=99999") << QStringLiteral("invalid port")
        << QStringLiteral("hunter2");
    QTest::newRow("password equal to bad port")
        << QStringLiteral("password=5432x port=5432x") << QStringLiteral("invalid port")
        << QStringLiteral("5432x");

    QTest::newRow("uri bad port") << QStringLiteral("postgresql://u:hunter2@host:99999/db")
                                  << QStringLiteral("invalid port \"99999\"")
                                  << QStringLiteral("hunter2");
    QTest::newRow("uri unknown param")
        << QStringLiteral("postgresql://u:hunter2@host/db?hots=x")
        << QStringLiteral("unknown connection option \"hots\"") << QStringLiteral("hunter2");
    QTest::newRow("uri bad escape in password")
        << QStringLiteral("postgresql://u:hun%ZZter@host/db")
        << QStringLiteral("invalid percent-encoding in the password") << QStringLiteral("hun");
    QTest::newRow("uri truncated escape") << QStringLiteral("postgresql://host/db%2")
                                          << QStringLiteral("invalid percent-encoding in the "
                                                            "database name")
                                          << noSecret;
    QTest::newRow("uri nul byte") << QStringLiteral("postgresql://host/db%00")
                                  << QStringLiteral("invalid percent-encoding") << noSecret;
    QTest::newRow("uri unclosed ipv6")
        << QStringLiteral("postgresql://[::1/db") << QStringLiteral("closing \"]\"") << noSecret;
    QTest::newRow("uri text after ipv6")
        << QStringLiteral("postgresql://u:hunter2@[::1]x/db")
        << QStringLiteral("unexpected text after an IPv6 address") << QStringLiteral("hunter2");
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

void TestConnInfo::parseBad() {
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

void TestConnInfo::redactedHidesSecrets() {
    const auto parsed = ConnInfo::parse(
        QStringLiteral("host=db user=me password='s3cr3t value' sslpassword=k3yp4ss "
                       "sslkey=/k.pem"));
    QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
    const QString redacted = parsed->redacted();
    QCOMPARE(redacted, QStringLiteral("host=db user=me password=*** sslpassword=*** "
                                      "sslkey=/k.pem"));
    QVERIFY(!redacted.contains(QStringLiteral("s3cr3t")));
    QVERIFY(!redacted.contains(QStringLiteral("k3yp4ss")));

    // No password: nothing to mask, and no hint that there is one.
    const auto plain = ConnInfo::parse(QStringLiteral("host=db"));
    QVERIFY(plain.ok());
    QCOMPARE(plain->redacted(), QStringLiteral("host=db"));
}

void TestConnInfo::quoting() {
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

void TestConnInfo::qtConnectOptionsFormat() {
    const auto parsed = ConnInfo::parse(
        QStringLiteral("host=db port=5432 dbname=app user=me password=pw sslmode=verify-ca "
                       "sslrootcert='/etc/my certs/ca.pem' connect_timeout=5"));
    QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
    QCOMPARE(parsed->qtConnectOptions(),
             QStringLiteral("sslmode=verify-ca;sslrootcert='/etc/my certs/ca.pem';"
                            "connect_timeout=5"));
    QCOMPARE(ConnInfo().qtConnectOptions(), QString());
}

void TestConnInfo::optionAccessors() {
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

void TestConnInfo::fromEnvironment() {
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

    qputenv("OUTBOX_DB", "password=topsecret hots=db");
    auto bad = ConnInfo::fromEnvironment();
    QVERIFY(!bad.ok());
    QVERIFY2(bad.errorMessage().startsWith(QStringLiteral("OUTBOX_DB: ")),
             qPrintable(bad.errorMessage()));
    QVERIFY(bad.errorMessage().contains(QStringLiteral("\"hots\"")));
    QVERIFY(!bad.errorMessage().contains(QStringLiteral("topsecret")));

    if (wasSet)
        qputenv("OUTBOX_DB", saved);
    else
        qunsetenv("OUTBOX_DB");
}

QTEST_GUILESS_MAIN(TestConnInfo)
#include "tst_conninfo.moc"
