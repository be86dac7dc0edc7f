#include "core/retrypolicy.h"

#include <QSet>
#include <QTest>

#include <climits>
#include <cmath>
#include <limits>

using namespace outbox::core;
using namespace std::chrono_literals;

class TestRetryPolicy final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cappedDelay_data() {
        QTest::addColumn<qint64>("base");
        QTest::addColumn<qint64>("max");
        QTest::addColumn<int>("attempts");
        QTest::addColumn<qint64>("expected");

        QTest::newRow("first") << qint64(1000) << qint64(300000) << 1 << qint64(1000);
        QTest::newRow("second") << qint64(1000) << qint64(300000) << 2 << qint64(2000);
        QTest::newRow("ninth") << qint64(1000) << qint64(300000) << 9 << qint64(256000);
        QTest::newRow("tenth capped") << qint64(1000) << qint64(300000) << 10 << qint64(300000);
        QTest::newRow("zero attempts as one")
            << qint64(1000) << qint64(300000) << 0 << qint64(1000);
        QTest::newRow("negative attempts as one")
            << qint64(1000) << qint64(300000) << -5 << qint64(1000);
        QTest::newRow("INT_MIN attempts")
            << qint64(1000) << qint64(300000) << INT_MIN << qint64(1000);
        QTest::newRow("INT_MAX attempts")
            << qint64(1000) << qint64(300000) << INT_MAX << qint64(300000);
        QTest::newRow("shift 62") << qint64(1) << std::numeric_limits<qint64>::max() << 63
                                  << (qint64(1) << 62);
        QTest::newRow("shift 63 capped") << qint64(1) << std::numeric_limits<qint64>::max() << 64
                                         << std::numeric_limits<qint64>::max();
        QTest::newRow("huge base and max at INT_MAX")
            << std::numeric_limits<qint64>::max() << std::numeric_limits<qint64>::max() << INT_MAX
            << std::numeric_limits<qint64>::max();
        QTest::newRow("huge base and max first")
            << std::numeric_limits<qint64>::max() << std::numeric_limits<qint64>::max() << 1
            << std::numeric_limits<qint64>::max();
        QTest::newRow("base above max") << qint64(5000) << qint64(3000) << 1 << qint64(3000);
        QTest::newRow("near-overflow product")
            << qint64(1) << (std::numeric_limits<qint64>::max() / 2) << 63
            << std::numeric_limits<qint64>::max() / 2;
        QTest::newRow("zero base") << qint64(0) << qint64(1000) << 5 << qint64(0);
        QTest::newRow("zero max") << qint64(1000) << qint64(0) << 5 << qint64(0);
    }

    void cappedDelay() {
        QFETCH(qint64, base);
        QFETCH(qint64, max);
        QFETCH(int, attempts);
        QFETCH(qint64, expected);
        const RetryPolicy policy{Millis(base), Millis(max)};
        QCOMPARE(policy.cappedDelay(attempts).count(), expected);
    }

    void propertiesOverManyAttempts_data() {
        QTest::addColumn<qint64>("base");
        QTest::addColumn<qint64>("max");
        QTest::newRow("defaults") << qint64(1000) << qint64(300000);
        QTest::newRow("tiny") << qint64(1) << qint64(7);
        QTest::newRow("equal") << qint64(4000) << qint64(4000);
        QTest::newRow("odd") << qint64(333) << qint64(99999);
        QTest::newRow("huge") << std::numeric_limits<qint64>::max() / 3
                              << std::numeric_limits<qint64>::max();
        QTest::newRow("max/max") << std::numeric_limits<qint64>::max()
                                 << std::numeric_limits<qint64>::max();
    }

    void propertiesOverManyAttempts() {
        QFETCH(qint64, base);
        QFETCH(qint64, max);
        const RetryPolicy policy{Millis(base), Millis(max)};
        QRandomGenerator rng(20240601);

        QList<int> attemptsToTry;
        for (int a = -3; a <= 200; ++a)
            attemptsToTry << a;
        for (int a : {1000, 65535, 1 << 20, INT_MAX - 1, INT_MAX})
            attemptsToTry << a;

        qint64 previousCap = 0;
        for (int attempts : attemptsToTry) {
            const qint64 cap = policy.cappedDelay(attempts).count();
            // Capped, never below the base (unless capped), never decreasing.
            QVERIFY(cap <= max);
            QVERIFY(cap >= std::min(base, max));
            QVERIFY2(cap >= previousCap, qPrintable(QString::number(attempts)));
            // Exactly min(base * 2^(attempts-1), max), checked in long double
            // where the product cannot overflow.
            const int n = std::max(attempts, 1) - 1;
            const long double ideal = std::ldexp(static_cast<long double>(base), std::min(n, 200));
            if (ideal < static_cast<long double>(max))
                QCOMPARE(static_cast<long double>(cap), ideal);
            else
                QCOMPARE(cap, max);
            previousCap = cap;

            for (int sample = 0; sample < 50; ++sample) {
                const qint64 delay = policy.nextDelay(attempts, rng).count();
                QVERIFY2(delay >= cap / 2 && delay <= cap,
                         qPrintable(QStringLiteral("attempts %1: %2 outside [%3, %4]")
                                        .arg(attempts)
                                        .arg(delay)
                                        .arg(cap / 2)
                                        .arg(cap)));
            }
        }
    }

    void jitterCoversTheRange() {
        // With a cap of 10ms the 6 possible values 5..10 must all come up, and
        // nothing else: a generator stuck on one end would fail here.
        const RetryPolicy policy{Millis(10), Millis(10)};
        QRandomGenerator rng(7);
        QSet<qint64> seen;
        for (int i = 0; i < 2000; ++i)
            seen.insert(policy.nextDelay(3, rng).count());
        QCOMPARE(seen, (QSet<qint64>{5, 6, 7, 8, 9, 10}));
    }

    void retryAfterRaisesAndCaps() {
        const RetryPolicy policy{1s, 60s};
        QRandomGenerator rng(99);
        for (int i = 0; i < 200; ++i) {
            // Raises: the runner asked for 30s, the schedule would give 1..2s.
            QCOMPARE(policy.nextDelay(2, rng, Millis(30000)).count(), qint64(30000));
            // Capped: a runner cannot push an event past max_delay.
            QCOMPARE(policy.nextDelay(2, rng, Millis(3600000)).count(), qint64(60000));
            QCOMPARE(policy.nextDelay(2, rng, Millis(std::numeric_limits<qint64>::max())).count(),
                     qint64(60000));
            // Never lowers: a short Retry-After leaves the jittered delay alone.
            const qint64 lowered = policy.nextDelay(7, rng, Millis(1)).count();
            QVERIFY(lowered >= 30000 && lowered <= 60000);
            const qint64 zero = policy.nextDelay(7, rng, Millis(0)).count();
            QVERIFY(zero >= 30000 && zero <= 60000);
        }
    }

    void parseRetryAfter_data() {
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("ms");

        QTest::newRow("seconds") << QByteArray("120") << true << qint64(120000);
        QTest::newRow("zero") << QByteArray("0") << true << qint64(0);
        QTest::newRow("padded") << QByteArray("  5 ") << true << qint64(5000);
        QTest::newRow("huge saturates")
            << QByteArray("99999999999999999999999") << true << std::numeric_limits<qint64>::max();
        // now is Sun, 06 Nov 1994 08:49:37.250 GMT
        QTest::newRow("imf-fixdate")
            << QByteArray("Sun, 06 Nov 1994 08:50:37 GMT") << true << qint64(59750);
        QTest::newRow("imf-fixdate next day")
            << QByteArray("Mon, 07 Nov 1994 08:49:38 GMT") << true << qint64(86400750);
        QTest::newRow("rfc850") << QByteArray("Sunday, 06-Nov-94 08:49:47 GMT") << true
                                << qint64(9750);
        QTest::newRow("asctime") << QByteArray("Sun Nov  6 08:49:57 1994") << true << qint64(19750);
        QTest::newRow("negative") << QByteArray("-5") << false << qint64(0);
        QTest::newRow("fraction") << QByteArray("1.5") << false << qint64(0);
        QTest::newRow("empty") << QByteArray() << false << qint64(0);
        QTest::newRow("garbage") << QByteArray("soon") << false << qint64(0);
        QTest::newRow("date in the past")
            << QByteArray("Sun, 06 Nov 1994 08:49:36 GMT") << false << qint64(0);
        QTest::newRow("not GMT") << QByteArray("Sun, 06 Nov 1994 08:50:37 PST") << false
                                 << qint64(0);
        QTest::newRow("bad month")
            << QByteArray("Sun, 06 Foo 1994 08:50:37 GMT") << false << qint64(0);
        QTest::newRow("bad day") << QByteArray("Sun, 31 Nov 1994 08:50:37 GMT") << false
                                 << qint64(0);
        QTest::newRow("bad hour") << QByteArray("Sun, 06 Nov 1994 25:50:37 GMT") << false
                                  << qint64(0);
    }

    void parseRetryAfter() {
        QFETCH(QByteArray, value);
        QFETCH(bool, valid);
        QFETCH(qint64, ms);
        const QDateTime now =
            QDateTime::fromString(QStringLiteral("1994-11-06T08:49:37.250Z"), Qt::ISODateWithMs);
        QVERIFY(now.isValid());
        const auto parsed = outbox::core::parseRetryAfter(value, now);
        QCOMPARE(parsed.has_value(), valid);
        if (valid)
            QCOMPARE(parsed->count(), ms);
    }
};

QTEST_GUILESS_MAIN(TestRetryPolicy)
#include "tst_retrypolicy.moc"
