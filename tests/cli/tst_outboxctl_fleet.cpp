// outboxctl fleet status as a monitoring check runs it: a fleet file with
// databases of one cluster, a refused port and a server that accepts and
// never answers; the table, the JSON, the order worst first and the exit
// codes.

#include "ctl.h"
#include "support/fleetdata.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestOutboxctlFleet final : public PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctlFleet()
        : PgTestSuite(migrateSchema, PerTest::Nothing) {}

private:
    QTemporaryDir m_dir;
    QStringList m_names;
    QTcpServer m_silent;

    QString writeFleet(const QString &text) {
        const QString path = m_dir.filePath(QStringLiteral("fleet-%1.conf").arg(qHash(text)));
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return {};
        file.write(text.toUtf8());
        return path;
    }

    QString section(const QString &name, int db, const QString &group = {}) {
        QString text =
            QStringLiteral("[%1]\nconninfo = %2\n").arg(name, m_pg->connInfo(m_names[db]));
        if (!group.isEmpty())
            text += QStringLiteral("group = %1\n").arg(group);
        return text;
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(startPg(migrateSchema));
        QVERIFY(m_silent.listen(QHostAddress::LocalHost, 0));
        for (int i = 0; i < 3; ++i) {
            m_names << m_pg->freshMigratedDatabase();
            QVERIFY(!m_names.last().isEmpty());
        }
        // Database 1: events due for 10 minutes, no dispatcher.
        QSqlDatabase db = m_pg->open(m_names[1]);
        QVERIFY(insertDueSince(db, 4, QStringLiteral("10 minutes")));
        // Database 2: events died in the last hour.
        QSqlDatabase db2 = m_pg->open(m_names[2]);
        QVERIFY(insertDeathsAFewMinutesAgo(db2, 2));
    }

    void healthyFleetExitsZero() {
        const QString fleet =
            writeFleet(section(QStringLiteral("quiet"), 0) + section(QStringLiteral("dying"), 2));
        const CtlResult r = runCtl(
            {QStringLiteral("fleet"), QStringLiteral("status"), QStringLiteral("--fleet"), fleet});
        QVERIFY2(r.finished, qPrintable(r.all()));
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[0].startsWith(QLatin1String("DATABASE")), qPrintable(r.out));
        QVERIFY2(lines[1].startsWith(QLatin1String("dying")), qPrintable(r.out));
        QVERIFY2(lines[1].contains(QLatin1String("2 events died in the last hour")),
                 qPrintable(r.out));
        QVERIFY2(lines[2].startsWith(QLatin1String("quiet")), qPrintable(r.out));
    }

    void alertAndUnreachableWorstFirst() {
        const QString fleet =
            writeFleet(section(QStringLiteral("quiet"), 0, QStringLiteral("g")) +
                       section(QStringLiteral("stuck"), 1, QStringLiteral("g")) +
                       QStringLiteral("[refused]\nconninfo = host=127.0.0.1 port=%1 dbname=x\n")
                           .arg(closedPort()) +
                       QStringLiteral("[silent]\nconninfo = host=127.0.0.1 port=%1 dbname=x\n")
                           .arg(m_silent.serverPort()));
        const CtlResult r = runCtl({QStringLiteral("fleet"), QStringLiteral("status"),
                                    QStringLiteral("--fleet"), fleet, QStringLiteral("--json"),
                                    QStringLiteral("--timeout"), QStringLiteral("2s")});
        QVERIFY2(r.finished, qPrintable(r.all()));
        QCOMPARE(r.exitCode, 1); // an alert wins over unreachable
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("alert"));
        const QJsonArray dbs = o.value(QStringLiteral("databases")).toArray();
        QCOMPARE(dbs.size(), 4);
        QCOMPARE(dbs[0].toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("stuck"));
        QCOMPARE(dbs[0].toObject().value(QStringLiteral("due")).toInt(), 4);
        QVERIFY(dbs[0].toObject().value(QStringLiteral("oldest_due_age_s")).toInt() >= 599);
        QCOMPARE(dbs[1].toObject().value(QStringLiteral("state")).toString(),
                 QStringLiteral("unreachable"));
        QCOMPARE(dbs[2].toObject().value(QStringLiteral("state")).toString(),
                 QStringLiteral("unreachable"));
        QVERIFY(!dbs[1].toObject().value(QStringLiteral("error")).toString().isEmpty());
        QCOMPARE(dbs[3].toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("quiet"));
        QCOMPARE(dbs[3].toObject().value(QStringLiteral("state")).toString(), QStringLiteral("ok"));

        // Without the alert, the unreachable ones give 3.
        const QString unreachable =
            writeFleet(section(QStringLiteral("quiet"), 0) +
                       QStringLiteral("[refused]\nconninfo = host=127.0.0.1 port=%1 dbname=x\n")
                           .arg(closedPort()));
        const CtlResult u = runCtl({QStringLiteral("fleet"), QStringLiteral("status"),
                                    QStringLiteral("--fleet"), unreachable});
        QCOMPARE(u.exitCode, 3);
        QVERIFY2(u.out.contains(QLatin1String("unreachable")), qPrintable(u.all()));
    }

    void badInputIsAUsageError() {
        const CtlResult missing = runCtl({QStringLiteral("fleet"), QStringLiteral("status")});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains(QLatin1String("--fleet")), qPrintable(missing.all()));
        const QString bad = writeFleet(QStringLiteral("[a]\nconninfo = host=x password=hunter2\n"));
        const CtlResult pw = runCtl(
            {QStringLiteral("fleet"), QStringLiteral("status"), QStringLiteral("--fleet"), bad});
        QCOMPARE(pw.exitCode, 2);
        QVERIFY2(pw.err.contains(QLatin1String(":2: the connection of \"a\" holds a password")),
                 qPrintable(pw.all()));
        QVERIFY(!pw.all().contains(QLatin1String("hunter2")));
        const CtlResult sub = runCtl({QStringLiteral("fleet"), QStringLiteral("stats")});
        QCOMPARE(sub.exitCode, 2);
        QVERIFY2(sub.err.contains(QLatin1String("status")), qPrintable(sub.all()));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlFleet)
#include "tst_outboxctl_fleet.moc"
