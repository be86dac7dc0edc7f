// outboxctl and attempts per event and trace context: `enqueue
// --max-attempts/--traceparent/--tracestate`, refused values with the
// database's reason (exit non-zero), `list` and `export` by `--trace-id`,
// and `show` with "attempt N of M" and the trace id.

#include "ctl.h"

#include <QSet>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

namespace {

const QString kParent = QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
const QString kTraceId = QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736");

QSet<QString> listedIds(const QString &jsonl) {
    QSet<QString> ids;
    for (const QString &line : jsonl.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        ids.insert(testing::parseObject(line).value(QLatin1String("id")).toString());
    return ids;
}

} // namespace

class TestOutboxctlTrace final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctlTrace()
        : PgTestSuite(outbox::testing::migrateSchema, PerTest::Nothing) {}

private:
    QString m_conn;
    QSqlDatabase m_owner;

    CtlResult enqueue(const QStringList &more) {
        return runCtl(QStringList{QStringLiteral("enqueue"), QStringLiteral("--namespace"),
                                  QStringLiteral("billing"), QStringLiteral("--topic"),
                                  QStringLiteral("invoice.paid"), QStringLiteral("--payload"),
                                  QStringLiteral("{}"), QStringLiteral("--json"),
                                  QStringLiteral("--db"), m_conn} +
                      more);
    }

private Q_SLOTS:
    void init() {
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        m_owner = m_pg->open(name);
        m_conn = m_pg->connInfo(name);
    }

    void enqueueListAndShow() {
        CtlResult result = enqueue({QStringLiteral("--max-attempts"), QStringLiteral("5"),
                                    QStringLiteral("--traceparent"), kParent,
                                    QStringLiteral("--tracestate"), QStringLiteral("k=v")});
        CTL_VERIFY_EXIT(result, 0);
        const QString traced =
            testing::parseObject(result.out).value(QLatin1String("id")).toString();
        result = enqueue({});
        CTL_VERIFY_EXIT(result, 0);
        const QString plain =
            testing::parseObject(result.out).value(QLatin1String("id")).toString();
        QVERIFY(!traced.isEmpty() && !plain.isEmpty());

        // list and export find the trace (upper case is fine).
        result = runCtl({QStringLiteral("list"), QStringLiteral("--trace-id"), kTraceId.toUpper(),
                         QStringLiteral("--jsonl"), QStringLiteral("--db"), m_conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(listedIds(result.out), QSet<QString>{traced});
        const QJsonObject listed = testing::parseObject(result.out.trimmed());
        QCOMPARE(listed.value(QLatin1String("traceparent")).toString(), kParent);
        QCOMPARE(listed.value(QLatin1String("tracestate")).toString(), QStringLiteral("k=v"));
        QCOMPARE(listed.value(QLatin1String("max_attempts")).toInt(), 5);
        result = runCtl({QStringLiteral("export"), QStringLiteral("--trace-id"), kTraceId,
                         QStringLiteral("--db"), m_conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(listedIds(result.out), QSet<QString>{traced});

        // show: attempt 3 of 5 in progress, the trace id.
        QVERIFY(sqlExec(m_owner, QStringLiteral("UPDATE outbox_events SET status = 'processing',"
                                                " attempts = 3, locked_by = gen_random_uuid(),"
                                                " locked_until = now() + interval '1 minute'")));
        result = runCtl({QStringLiteral("show"), traced, QStringLiteral("--db"), m_conn});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("(attempt 3 of 5 in progress)")),
                 qPrintable(result.out));
        QVERIFY2(result.out.contains(QLatin1String("3 of 5 (the event's own limit)")),
                 qPrintable(result.out));
        QVERIFY2(result.out.contains(QLatin1String("Trace id:     ") + kTraceId),
                 qPrintable(result.out));
        result = runCtl({QStringLiteral("show"), plain, QStringLiteral("--db"), m_conn});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("(attempt 3 in progress)")),
                 qPrintable(result.out));
        QVERIFY(!result.out.contains(QLatin1String("Trace id")));
    }

    // The database's reason, and a non-zero exit; nothing written.
    void refusedValues_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("reason");
        QTest::newRow("max attempts 0")
            << QStringList{QStringLiteral("--max-attempts"), QStringLiteral("0")}
            << QStringLiteral("max_attempts must be between 1 and 1000 (got 0)");
        QTest::newRow("max attempts not a number")
            << QStringList{QStringLiteral("--max-attempts"), QStringLiteral("many")}
            << QStringLiteral("--max-attempts");
        QTest::newRow("bad traceparent")
            << QStringList{QStringLiteral("--traceparent"), QStringLiteral("00-xyz")}
            << QStringLiteral("is not a W3C traceparent");
        QTest::newRow("tracestate alone")
            << QStringList{QStringLiteral("--tracestate"), QStringLiteral("k=v")}
            << QStringLiteral("a tracestate was given without a traceparent");
    }

    void refusedValues() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, reason);
        const CtlResult result = enqueue(arguments);
        QVERIFY2(result.finished && result.exitCode != 0, qPrintable(result.all()));
        QVERIFY2(result.err.contains(reason), qPrintable(result.all()));
        QCOMPARE(sqlScalar(m_owner, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("0"));
    }

    void badTraceIdIsAUsageError() {
        const CtlResult result = runCtl({QStringLiteral("list"), QStringLiteral("--trace-id"),
                                         QStringLiteral("abc"), QStringLiteral("--db"), m_conn});
        QVERIFY2(result.finished && result.exitCode == 2, qPrintable(result.all()));
        QVERIFY2(result.err.contains(QLatin1String("--trace-id: 'abc' is not a trace id")),
                 qPrintable(result.all()));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlTrace)
#include "tst_outboxctl_trace.moc"
