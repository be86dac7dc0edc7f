#include "core/uuidv7.h"

#include <QSet>
#include <QTest>
#include <QThread>

#include <memory>
#include <vector>

using namespace outbox::core;

namespace {

int version(const QUuid &id) {
    return id.toRfc4122().at(6) >> 4 & 0xF;
}

int variantBits(const QUuid &id) {
    return (uchar(id.toRfc4122().at(8)) >> 6) & 0x3;
}

qint64 embeddedMillis(const QUuid &id) {
    const QByteArray bytes = id.toRfc4122();
    qint64 ms = 0;
    for (int i = 0; i < 6; ++i)
        ms = (ms << 8) | uchar(bytes.at(i));
    return ms;
}

} // namespace

class TestUuidV7 final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void layout();
    void timeOfNow();
    void timeRoundTrip_data();
    void timeRoundTrip();
    void otherVersionsHaveNoTime();
    void monotonic();
    void uniqueAcrossThreads();
};

void TestUuidV7::layout() {
    for (int i = 0; i < 1000; ++i) {
        const QUuid id = createUuidV7();
        QCOMPARE(version(id), 7);
        QCOMPARE(variantBits(id), 0b10);
        QCOMPARE(id.variant(), QUuid::DCE);
        QVERIFY(!id.isNull());
    }
    const QUuid fixed = createUuidV7(QDateTime::fromMSecsSinceEpoch(1234, Qt::UTC));
    QCOMPARE(version(fixed), 7);
    QCOMPARE(variantBits(fixed), 0b10);
}

void TestUuidV7::timeOfNow() {
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    const QUuid id = createUuidV7();
    const qint64 after = QDateTime::currentMSecsSinceEpoch();
    const qint64 embedded = uuidV7Time(id).toMSecsSinceEpoch();
    QCOMPARE(embedded, embeddedMillis(id));
    // The embedded time is the clock at creation; it may only run ahead of
    // it when more than 2^15 ids were made in one millisecond, not here.
    QVERIFY2(embedded >= before && embedded <= after,
             qPrintable(QStringLiteral("%1 not in [%2, %3]").arg(embedded).arg(before).arg(after)));
}

void TestUuidV7::timeRoundTrip_data() {
    QTest::addColumn<qint64>("ms");
    QTest::newRow("epoch") << qint64(0);
    QTest::newRow("one") << qint64(1);
    QTest::newRow("2021") << qint64(1614265330123);
    QTest::newRow("2100") << qint64(4102444800000);
    QTest::newRow("48-bit max") << qint64((qint64(1) << 48) - 1);
}

void TestUuidV7::timeRoundTrip() {
    QFETCH(qint64, ms);
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
    const QUuid id = createUuidV7(at);
    QCOMPARE(embeddedMillis(id), ms);
    QCOMPARE(uuidV7Time(id), at);
    QCOMPARE(uuidV7Time(id).toMSecsSinceEpoch(), ms);
}

void TestUuidV7::otherVersionsHaveNoTime() {
    QVERIFY(!uuidV7Time(QUuid::createUuid()).isValid()); // v4
    QVERIFY(!uuidV7Time(QUuid()).isValid());
    QVERIFY(!uuidV7Time(QUuid::createUuidV5(QUuid(), QByteArrayLiteral("x"))).isValid());
    // A version nibble of 7 with the wrong variant is not a v7 id.
    QByteArray bytes = createUuidV7().toRfc4122();
    bytes[8] = char(uchar(bytes[8]) & 0x3F);
    QVERIFY(!uuidV7Time(QUuid::fromRfc4122(bytes)).isValid());
}

void TestUuidV7::monotonic() {
    constexpr int count = 100000;
    std::vector<QUuid> ids;
    ids.reserve(count);
    for (int i = 0; i < count; ++i)
        ids.push_back(createUuidV7());
    for (int i = 1; i < count; ++i) {
        // Byte order is the order PostgreSQL's uuid type sorts by.
        if (!(ids[size_t(i - 1)].toRfc4122() < ids[size_t(i)].toRfc4122()))
            QFAIL(qPrintable(QStringLiteral("id %1 (%2) does not sort after %3")
                                 .arg(i)
                                 .arg(ids[size_t(i)].toString(), ids[size_t(i - 1)].toString())));
        if (!(ids[size_t(i - 1)] < ids[size_t(i)]))
            QFAIL("QUuid ordering disagrees with byte ordering");
    }
}

void TestUuidV7::uniqueAcrossThreads() {
    constexpr int threads = 4;
    constexpr int perThread = 50000;
    std::vector<std::vector<QUuid>> results(threads);
    std::vector<std::unique_ptr<QThread>> workers;
    for (int t = 0; t < threads; ++t) {
        auto &out = results[size_t(t)];
        workers.emplace_back(QThread::create([&out] {
            out.reserve(perThread);
            for (int i = 0; i < perThread; ++i)
                out.push_back(createUuidV7());
        }));
    }
    for (auto &worker : workers)
        worker->start();
    for (auto &worker : workers)
        QVERIFY(worker->wait(QDeadlineTimer(120000)));

    QSet<QUuid> seen;
    seen.reserve(threads * perThread);
    for (const auto &list : results) {
        QCOMPARE(int(list.size()), perThread);
        for (size_t i = 0; i < list.size(); ++i) {
            seen.insert(list[i]);
            // Each thread's own sequence is still strictly increasing.
            if (i > 0 && !(list[i - 1].toRfc4122() < list[i].toRfc4122()))
                QFAIL("a thread's ids are not in creation order");
        }
    }
    QCOMPARE(seen.size(), threads * perThread);
}

QTEST_GUILESS_MAIN(TestUuidV7)
#include "tst_uuidv7.moc"
