// The console asks for a password when the store classified the failure as
// one (StoreClient::needsPassword), not when the message has the word
// "password" in it: against a server that answers in German, a wrong
// password stops the client (Disconnected, asking) instead of retrying as if
// the server were down, and a missing database stops it without asking.

#include "console/model/storeclient.h"
#include "support/serverlogin.h"

#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using console::ConnectionState;
using console::StoreClient;

class TestStoreClientLogin final : public outbox::testing::GermanServerSuite {
    Q_OBJECT

private:
    // Starts a client on `info` and waits for the first state after
    // Connecting.
    static std::pair<ConnectionState, bool> settle(const core::ConnInfo &info) {
        console::StoreClientOptions options;
        options.reconnectMin = std::chrono::milliseconds(50);
        options.reconnectMax = std::chrono::milliseconds(200);
        StoreClient client(info, options);
        QSignalSpy states(&client, &StoreClient::connectionStateChanged);
        client.start();
        const auto settled = [&states] {
            return !states.isEmpty() &&
                   states.last().at(0).value<ConnectionState>() != ConnectionState::Connecting;
        };
        if (!QTest::qWaitFor(settled, 20000))
            return {ConnectionState::Connecting, false};
        return {states.last().at(0).value<ConnectionState>(), client.needsPassword()};
    }

private Q_SLOTS:
    void wrongPasswordAsksForOne() {
        // Not Reconnecting: retrying would not make the password right.
        const auto [state, asks] = settle(passwordLogin(QStringLiteral("wrong")));
        QCOMPARE(state, ConnectionState::Disconnected);
        QVERIFY(asks);
    }

    void missingDatabaseDoesNotAskForAPassword() {
        const auto [state, asks] = settle(passwordLogin(rightPassword(), QStringLiteral("nope")));
        QCOMPARE(state, ConnectionState::Disconnected);
        QVERIFY(!asks);
    }

    void rightPasswordConnects() {
        const auto [state, asks] = settle(passwordLogin(rightPassword()));
        QCOMPARE(state, ConnectionState::Connected);
        QVERIFY(!asks);
    }
};

QTEST_GUILESS_MAIN(TestStoreClientLogin)
#include "tst_storeclientlogin.moc"
