// outboxctl export: every event a filter matches, as JSON lines, to a file or
// standard output, checked against what is in the database.

#include "ctl.h"

#include <QFile>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox::testing;

class TestOutboxctlExport final : public QObject, protected outbox::testing::PgTestCase {
    Q_OBJECT

private:
    QStringList ids(const QString &condition) {
        QStringList values;
        QSqlQuery query(m_db);
        if (!query.exec(QStringLiteral("SELECT id::text FROM outbox_events WHERE %1 "
                                       "ORDER BY created_at, id")
                            .arg(condition)))
            return values;
        while (query.next())
            values << query.value(0).toString();
        return values;
    }

    static QStringList idsOfLines(const QByteArray &text) {
        QStringList values;
        for (const QByteArray &line : text.split('\n')) {
            if (!line.isEmpty())
                values
                    << parseObject(QString::fromUtf8(line)).value(QLatin1String("id")).toString();
        }
        return values;
    }

private Q_SLOTS:
    void initTestCase() {
        if (!startPg(outbox::testing::migrateSchema) || !openFreshDb())
            return;
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral(
                "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts, "
                " last_error, delivered_at, created_at) "
                "SELECT outbox_uuid_v7(), CASE WHEN g % 3 = 0 THEN 'shipping' ELSE 'billing' END, "
                " 'invoice.paid', jsonb_build_object('n', g), "
                " (ARRAY['pending', 'delivered', 'dead'])[1 + g % 3], "
                " CASE WHEN g % 3 = 2 THEN 3 ELSE 0 END, CASE WHEN g % 3 = 2 THEN 'HTTP 503' END, "
                " CASE WHEN g % 3 = 1 THEN now() END, "
                " now() - make_interval(secs => g) "
                "FROM generate_series(1, 1500) AS g")));
    }
    void cleanupTestCase() {
        dropFreshDb();
        stopPg();
    }

    void exportToFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("dead.jsonl"));
        const CtlResult result = runCtl({QStringLiteral("export"), QStringLiteral("--db"),
                                         m_pg->connInfo(m_dbName), QStringLiteral("--status"),
                                         QStringLiteral("dead"), QStringLiteral("--namespace"),
                                         QStringLiteral("billing"), QStringLiteral("--page-size"),
                                         QStringLiteral("37"), QStringLiteral("--output"), path});
        QVERIFY2(result.finished && result.exitCode == 0, qPrintable(result.all()));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList expected =
            ids(QStringLiteral("status = 'dead' AND namespace = 'billing'"));
        QVERIFY(expected.size() > 300);
        QCOMPARE(idsOfLines(file.readAll()), expected);
        QVERIFY2(result.err.contains(QStringLiteral("Exported %1 events").arg(expected.size())),
                 qPrintable(result.err));
        QVERIFY(result.out.isEmpty());
    }

    void exportToStdout() {
        const CtlResult result =
            runCtl({QStringLiteral("export"), QStringLiteral("--db"), m_pg->connInfo(m_dbName),
                    QStringLiteral("--namespace"), QStringLiteral("shipping")});
        QVERIFY2(result.finished && result.exitCode == 0, qPrintable(result.all()));
        QCOMPARE(idsOfLines(result.out.toUtf8()), ids(QStringLiteral("namespace = 'shipping'")));
    }

    void badArguments() {
        const CtlResult size =
            runCtl({QStringLiteral("export"), QStringLiteral("--db"), m_pg->connInfo(m_dbName),
                    QStringLiteral("--page-size"), QStringLiteral("0")});
        QCOMPARE(size.exitCode, 2);
        QVERIFY2(size.err.contains(QLatin1String("page-size")), qPrintable(size.err));
        const CtlResult path =
            runCtl({QStringLiteral("export"), QStringLiteral("--db"), m_pg->connInfo(m_dbName),
                    QStringLiteral("--output"), QStringLiteral("/nonexistent-dir/events.jsonl")});
        QVERIFY(path.finished);
        QVERIFY(path.exitCode != 0);
        QVERIFY2(path.err.contains(QLatin1String("cannot write /nonexistent-dir/events.jsonl")),
                 qPrintable(path.err));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlExport)
#include "tst_outboxctl_export.moc"
