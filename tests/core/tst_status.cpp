#include "core/status.h"

#include <QTest>

using namespace outbox::core;

class TestStatus final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data() {
        QTest::addColumn<Status>("status");
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("terminal");
        QTest::newRow("pending") << Status::Pending << QStringLiteral("pending") << false;
        QTest::newRow("processing") << Status::Processing << QStringLiteral("processing") << false;
        QTest::newRow("delivered") << Status::Delivered << QStringLiteral("delivered") << true;
        QTest::newRow("dead") << Status::Dead << QStringLiteral("dead") << true;
    }

    void roundTrip() {
        QFETCH(Status, status);
        QFETCH(QString, name);
        QFETCH(bool, terminal);
        QCOMPARE(statusName(status), name);
        QCOMPARE(statusFromName(name), std::optional<Status>(status));
        QCOMPARE(statusFromName(name.toUpper()), std::optional<Status>(status));
        QCOMPARE(isTerminal(status), terminal);
    }

    void unknownNames_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("empty") << QString();
        QTest::newRow("typo") << QStringLiteral("pendng");
        QTest::newRow("prefix") << QStringLiteral("pend");
        QTest::newRow("other") << QStringLiteral("failed");
    }

    void unknownNames() {
        QFETCH(QString, name);
        QVERIFY(!statusFromName(name).has_value());
    }
};

QTEST_GUILESS_MAIN(TestStatus)
#include "tst_status.moc"
