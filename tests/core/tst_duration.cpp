#include "core/duration.h"

#include <QTest>

#include <limits>

using namespace outbox::core;
using namespace std::chrono_literals;

class TestDuration final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void parseGood_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ms");

        QTest::newRow("ms") << QStringLiteral("500ms") << qint64(500);
        QTest::newRow("zero seconds") << QStringLiteral("0s") << qint64(0);
        QTest::newRow("zero ms") << QStringLiteral("0ms") << qint64(0);
        QTest::newRow("seconds") << QStringLiteral("30s") << qint64(30000);
        QTest::newRow("minutes") << QStringLiteral("5m") << qint64(300000);
        QTest::newRow("hours") << QStringLiteral("2h") << qint64(7200000);
        QTest::newRow("days") << QStringLiteral("7d") << qint64(604800000);
        QTest::newRow("combined h m") << QStringLiteral("1h30m") << qint64(5400000);
        QTest::newRow("combined all")
            << QStringLiteral("1d2h3m4s5ms") << qint64(86400000 + 7200000 + 180000 + 4000 + 5);
        QTest::newRow("skip units") << QStringLiteral("1h5s") << qint64(3605000);
        QTest::newRow("leading zeros") << QStringLiteral("007s") << qint64(7000);
        QTest::newRow("whitespace trimmed") << QStringLiteral("  \t10s\n") << qint64(10000);
        QTest::newRow("fraction s") << QStringLiteral("1.5s") << qint64(1500);
        QTest::newRow("fraction h") << QStringLiteral("0.5h") << qint64(1800000);
        QTest::newRow("fraction trailing zeros") << QStringLiteral("2.250000s") << qint64(2250);
        QTest::newRow("fraction m") << QStringLiteral("1m30.25s") << qint64(90250);
        QTest::newRow("fraction d third-free") << QStringLiteral("0.125d") << qint64(10800000);
        QTest::newRow("large ms") << QStringLiteral("9223372036854775807ms")
                                  << std::numeric_limits<qint64>::max();
        QTest::newRow("large days")
            << QStringLiteral("106751991167d") << qint64(106751991167) * 86400000;
    }

    void parseGood() {
        QFETCH(QString, text);
        QFETCH(qint64, ms);
        const auto parsed = parseDuration(text);
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        QCOMPARE(parsed.value().count(), ms);
    }

    void parseBad_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problem"); // must appear in the message

        QTest::newRow("empty") << QString() << QStringLiteral("empty");
        QTest::newRow("blank") << QStringLiteral("   ") << QStringLiteral("empty");
        QTest::newRow("bare number") << QStringLiteral("5") << QStringLiteral("unit is missing");
        QTest::newRow("bare zero") << QStringLiteral("0") << QStringLiteral("unit is missing");
        QTest::newRow("bare fraction")
            << QStringLiteral("1.5") << QStringLiteral("unit is missing");
        QTest::newRow("unknown unit")
            << QStringLiteral("5x") << QStringLiteral("unknown unit \"x\"");
        QTest::newRow("long unit name")
            << QStringLiteral("5sec") << QStringLiteral("unknown unit \"sec\"");
        QTest::newRow("upper-case unit")
            << QStringLiteral("5S") << QStringLiteral("unexpected \"S\"");
        QTest::newRow("negative") << QStringLiteral("-5s") << QStringLiteral("negative");
        QTest::newRow("plus sign") << QStringLiteral("+5s") << QStringLiteral("unexpected \"+\"");
        QTest::newRow("unit only") << QStringLiteral("ms") << QStringLiteral("needs a number");
        QTest::newRow("inner space")
            << QStringLiteral("1h 30m") << QStringLiteral("unexpected \" \"");
        QTest::newRow("wrong order") << QStringLiteral("30m1h") << QStringLiteral("largest first");
        QTest::newRow("repeated unit") << QStringLiteral("1s1s") << QStringLiteral("largest first");
        QTest::newRow("trailing number")
            << QStringLiteral("1h30") << QStringLiteral("unit is missing");
        QTest::newRow("dot without digits")
            << QStringLiteral("1.s") << QStringLiteral("decimal point");
        QTest::newRow("sub-millisecond") << QStringLiteral("1.5ms") << QStringLiteral("1ms");
        QTest::newRow("sub-millisecond s") << QStringLiteral("0.0001s") << QStringLiteral("1ms");
        QTest::newRow("too many digits")
            << QStringLiteral("99999999999999999999ms") << QStringLiteral("too large");
        QTest::newRow("overflow on unit")
            << QStringLiteral("106751991168d") << QStringLiteral("too large");
        QTest::newRow("repeated large unit")
            << QStringLiteral("106751991167d1d") << QStringLiteral("largest first");
        QTest::newRow("overflow on sum of units")
            << QStringLiteral("106751991167d23h59m59s999ms") << QStringLiteral("too large");
    }

    void parseBad() {
        QFETCH(QString, text);
        QFETCH(QString, problem);
        const auto parsed = parseDuration(text);
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.errorKind(), ErrorKind::Invalid);
        const QString message = parsed.errorMessage();
        QVERIFY2(message.contains(problem), qPrintable(message));
        QVERIFY2(
            message.startsWith(QStringLiteral("invalid duration \"") + text + QLatin1Char('"')),
            qPrintable(message));
        QVERIFY2(
            message.endsWith(QStringLiteral("use a number with a unit: 500ms, 30s, 5m, 2h, 7d")),
            qPrintable(message));
    }

    void format_data() {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("text");

        QTest::newRow("zero") << qint64(0) << QStringLiteral("0s");
        QTest::newRow("ms") << qint64(500) << QStringLiteral("500ms");
        QTest::newRow("1ms") << qint64(1) << QStringLiteral("1ms");
        QTest::newRow("second") << qint64(1000) << QStringLiteral("1s");
        QTest::newRow("1.5s") << qint64(1500) << QStringLiteral("1.5s");
        QTest::newRow("1.005s") << qint64(1005) << QStringLiteral("1.005s");
        QTest::newRow("1m30s") << qint64(90000) << QStringLiteral("1m30s");
        QTest::newRow("1h30m") << qint64(5400000) << QStringLiteral("1h30m");
        QTest::newRow("minute and ms") << qint64(60500) << QStringLiteral("1m500ms");
        QTest::newRow("day") << qint64(86400000) << QStringLiteral("1d");
        QTest::newRow("everything")
            << qint64(86400000 + 3600000 + 60000 + 1000 + 1) << QStringLiteral("1d1h1m1.001s");
        QTest::newRow("negative") << qint64(-1500) << QStringLiteral("-1.5s");
        QTest::newRow("max") << std::numeric_limits<qint64>::max()
                             << QStringLiteral("106751991167d7h12m55.807s");
        QTest::newRow("min") << std::numeric_limits<qint64>::min()
                             << QStringLiteral("-106751991167d7h12m55.808s");
    }

    void format() {
        QFETCH(qint64, ms);
        QFETCH(QString, text);
        QCOMPARE(formatDuration(Millis(ms)), text);
    }

    void formatParsesBack_data() {
        QTest::addColumn<qint64>("ms");
        for (qint64 ms : {qint64(0), qint64(1), qint64(999), qint64(1000), qint64(1001),
                          qint64(59999), qint64(60001), qint64(3599999), qint64(86399999),
                          qint64(123456789012), std::numeric_limits<qint64>::max()})
            QTest::addRow("%lld", static_cast<long long>(ms)) << ms;
    }

    void formatParsesBack() {
        QFETCH(qint64, ms);
        const QString text = formatDuration(Millis(ms));
        const auto parsed = parseDuration(text);
        QVERIFY2(parsed.ok(), qPrintable(parsed.errorMessage()));
        QCOMPARE(parsed.value().count(), ms);
    }
};

QTEST_GUILESS_MAIN(TestDuration)
#include "tst_duration.moc"
