// Connection failures are classified by PostgreSQL's error code and libpq's
// state, not by the words of the message: against a server that speaks
// German (lc_messages = 'de_DE.UTF-8'), a wrong password is an
// authentication failure (asked for, never retried as if the server were
// down), a missing database or role is named, and a stopped server is
// transient.

#include "core/conninfo.h"
#include "store/errorclass.h"
#include "store/session.h"
#include "store/sessionkeeper.h"
#include "support/localport.h"
#include "support/serverlogin.h"

#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using core::ErrorKind;
using store::ErrorClass;

class TestErrorClass final : public outbox::testing::GermanServerSuite {
    Q_OBJECT

private:
    static core::Result<void> open(const core::ConnInfo &info) {
        store::Session session(info, {.applicationName = QStringLiteral("tst-errorclass")});
        return session.open();
    }

private Q_SLOTS:
    void wrongPasswordIsAnAuthenticationFailure() {
        const auto rejected = open(passwordLogin(QStringLiteral("Hx9q wrong")));
        QVERIFY(!rejected.ok());
        // The server answered in German: the message proves the locale.
        QVERIFY2(rejected.errorMessage().contains(QStringLiteral("Passwort-Authentifizierung")),
                 qPrintable(rejected.errorMessage()));
        QCOMPARE(rejected.errorKind(), ErrorKind::AuthenticationFailed);
        QVERIFY(!rejected.errorMessage().contains(QLatin1String("Hx9q")));

        QVERIFY2(open(passwordLogin(rightPassword())).ok(), "the right password should log in");
    }

    void missingPasswordIsAnAuthenticationFailure() {
        // libpq ends this one itself ("no password supplied"), without a
        // code: it says so through PQconnectionNeedsPassword().
        const auto asked = open(passwordLogin({}));
        QVERIFY(!asked.ok());
        QCOMPARE(asked.errorKind(), ErrorKind::AuthenticationFailed);
    }

    void keeperGivesUpOnAWrongPassword() {
        store::SessionKeeper::Options options;
        options.session.applicationName = QStringLiteral("tst-errorclass-keeper");
        options.reconnectMin = core::Millis(20);
        options.reconnectMax = core::Millis(50);
        options.giveUpOnInvalid = true;
        store::SessionKeeper keeper(passwordLogin(QStringLiteral("wrong")), options);
        QSignalSpy retrying(&keeper, &store::SessionKeeper::retrying);
        QSignalSpy gaveUp(&keeper, &store::SessionKeeper::gaveUp);
        keeper.start();
        QCOMPARE(gaveUp.size(), 1);
        QCOMPARE(gaveUp.first().at(1).value<ErrorKind>(), ErrorKind::AuthenticationFailed);
        QCOMPARE(retrying.size(), 0);
    }

    void missingObjectsAreNamed_data() {
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("dbname");
        QTest::addColumn<QString>("fix");
        QTest::newRow("database") << passwordRole() << QStringLiteral("no_such_db")
                                  << QStringLiteral("dbname=");
        QTest::newRow("role") << QStringLiteral("no_such_role") << QStringLiteral("outbox")
                              << QStringLiteral("user=");
    }

    void missingObjectsAreNamed() {
        QFETCH(QString, user);
        QFETCH(QString, dbname);
        QFETCH(QString, fix);
        core::ConnInfo info = passwordLogin(rightPassword(), dbname);
        info.user = user;
        // Over TCP the cluster asks every other role for its password first
        // (and so tells nothing about whether it exists); its socket, which
        // only this account may reach, trusts the user name.
        if (user != passwordRole())
            info.host = m_pg->cluster().socketDirectory();
        const auto missing = open(info);
        QVERIFY(!missing.ok());
        QVERIFY2(missing.errorMessage().contains(QStringLiteral("existiert nicht")),
                 qPrintable(missing.errorMessage()));
        QCOMPARE(missing.errorKind(), ErrorKind::Invalid);
        QVERIFY2(missing.errorMessage().contains(fix), qPrintable(missing.errorMessage()));
    }

    void refusedPortIsTransient() {
        core::ConnInfo info = passwordLogin(rightPassword());
        info.port = outbox::testing::closedPort();
        const auto refused = open(info);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), ErrorKind::Unavailable);
    }

    void codesAreClassified_data() {
        QTest::addColumn<QString>("code");
        QTest::addColumn<ErrorClass>("expected");
        QTest::addColumn<ErrorKind>("kind");
        const auto row = [](const char *code, ErrorClass expected, ErrorKind kind) {
            QTest::newRow(*code ? code : "none") << QString::fromLatin1(code) << expected << kind;
        };
        row("28P01", ErrorClass::Authentication, ErrorKind::AuthenticationFailed);
        row("28000", ErrorClass::LoginRefused, ErrorKind::Invalid);
        row("3D000", ErrorClass::NoSuchDatabase, ErrorKind::Invalid);
        row("42501", ErrorClass::PermissionDenied, ErrorKind::PermissionDenied);
        for (const char *transient :
             {"57P01", "57P02", "57P03", "57P04", "57P05", "08006", "53300"})
            row(transient, ErrorClass::Transient, ErrorKind::Unavailable);
        for (const char *other : {"53100", "XX000", "40001", ""})
            row(other, ErrorClass::Other, ErrorKind::Failed);
    }

    void codesAreClassified() {
        QFETCH(QString, code);
        QFETCH(ErrorClass, expected);
        QFETCH(ErrorKind, kind);
        QCOMPARE(store::classifySqlState(code), expected);
        QCOMPARE(store::errorKindFor(expected), kind);
    }

    // Last: the server stays down.
    void stoppedServerIsTransient() {
        const auto stopped = m_pg->cluster().stop();
        QVERIFY2(stopped.ok(), qPrintable(stopped.errorMessage()));
        const auto overTcp = open(passwordLogin(rightPassword()));
        QVERIFY(!overTcp.ok());
        QCOMPARE(overTcp.errorKind(), ErrorKind::Unavailable);

        core::ConnInfo socket = passwordLogin(rightPassword());
        socket.host = m_pg->cluster().socketDirectory();
        const auto overSocket = open(socket);
        QVERIFY(!overSocket.ok());
        QCOMPARE(overSocket.errorKind(), ErrorKind::Unavailable);
    }
};

QTEST_GUILESS_MAIN(TestErrorClass)
#include "tst_errorclass.moc"
