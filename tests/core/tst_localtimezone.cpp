#include "core/localtimezone.h"

#include <QDateTime>
#include <QFileInfo>
#include <QTest>

using namespace outbox::core;

namespace {

// Local UTC offsets at instants in both halves of several years.
QList<int> localOffsets() {
    QList<int> offsets;
    for (const qint64 seconds : {946684800LL, 962409600LL, 1700000000LL, 1720000000LL})
        offsets << QDateTime::fromSecsSinceEpoch(seconds).offsetFromUtc();
    return offsets;
}

// Restores TZ as it was when the test started.
class TzGuard {
public:
    TzGuard()
        : m_set(qEnvironmentVariableIsSet("TZ"))
        , m_value(qgetenv("TZ")) {}
    ~TzGuard() {
        if (m_set)
            qputenv("TZ", m_value);
        else
            qunsetenv("TZ");
    }
    Q_DISABLE_COPY_MOVE(TzGuard)

private:
    bool m_set;
    QByteArray m_value;
};

} // namespace

class TestLocalTimeZone : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void unsetTzNamesTheSystemZoneFile();
    void aTzAlreadySetIsLeftAlone();
};

void TestLocalTimeZone::unsetTzNamesTheSystemZoneFile() {
    const TzGuard guard;
    qunsetenv("TZ");
    const QList<int> before = localOffsets();
    const bool hasZoneFile = QFileInfo::exists(QStringLiteral("/etc/localtime"));

    QCOMPARE(pinLocalTimeZone(), hasZoneFile);
    if (hasZoneFile)
        QCOMPARE(qgetenv("TZ"), QByteArray(":/etc/localtime"));
    else
        QVERIFY(!qEnvironmentVariableIsSet("TZ"));
    // The same zone as before, only read once.
    QCOMPARE(localOffsets(), before);
    // A second call sees its own TZ and changes nothing.
    QVERIFY(!pinLocalTimeZone());
}

void TestLocalTimeZone::aTzAlreadySetIsLeftAlone() {
    const TzGuard guard;
    // A POSIX rule, so that the test needs no tzdata.
    qputenv("TZ", "EST5EDT,M3.2.0,M11.1.0");
    const QList<int> before = localOffsets();
    QVERIFY(!pinLocalTimeZone());
    QCOMPARE(qgetenv("TZ"), QByteArray("EST5EDT,M3.2.0,M11.1.0"));
    QCOMPARE(localOffsets(), before);
    QCOMPARE(QDateTime::fromSecsSinceEpoch(1720000000LL).offsetFromUtc(), -4 * 3600);
}

QTEST_GUILESS_MAIN(TestLocalTimeZone)
#include "tst_localtimezone.moc"
