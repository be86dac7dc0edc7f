// `--payload` of the shared filter options: `list` finds the events whose
// payload contains the JSON, a bulk action takes it the same way, and an
// invalid JSON is a usage error (exit 2) that says what is wrong and how to
// write it.

#include "ctl.h"

#include <QJsonArray>
#include <QSet>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::testing;

class TestOutboxctlPayload final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctlPayload()
        : PgTestSuite(outbox::testing::migrateSchema, PerTest::Nothing) {}

private:
    static QSet<QString> listedIds(const QString &jsonl) {
        QSet<QString> ids;
        for (const QString &line : jsonl.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            ids.insert(testing::parseObject(line).value(QLatin1String("id")).toString());
        return ids;
    }

private Q_SLOTS:
    void listAndActByPayload() {
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        QSqlDatabase db = m_pg->open(name);
        const QString conn = m_pg->connInfo(name);
        Seed seed{.payload = QStringLiteral(R"({"invoice_id": 42, "customer": {"id": 7}})")};
        const QString pending42 = seedEvent(db, seed);
        seed.status = QStringLiteral("dead");
        seed.attempts = 5;
        seed.lastError = QStringLiteral("HTTP 500");
        const QString dead42 = seedEvent(db, seed);
        seed.payload = QStringLiteral(R"({"invoice_id": 43, "customer": {"id": 7}})");
        const QString dead43 = seedEvent(db, seed);

        CtlResult result = runCtl({QStringLiteral("list"), QStringLiteral("--payload"),
                                   QStringLiteral(R"({"invoice_id": 42})"),
                                   QStringLiteral("--jsonl"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(listedIds(result.out), (QSet<QString>{pending42, dead42}));

        result = runCtl({QStringLiteral("list"), QStringLiteral("--status"), QStringLiteral("dead"),
                         QStringLiteral("--payload"), QStringLiteral(R"({"customer": {"id": 7}})"),
                         QStringLiteral("--jsonl"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(listedIds(result.out), (QSet<QString>{dead42, dead43}));

        // A bulk action shares the option: only invoice 42's dead event.
        result =
            runCtl({QStringLiteral("requeue"), QStringLiteral("--status"), QStringLiteral("dead"),
                    QStringLiteral("--payload"), QStringLiteral(R"({"invoice_id": 42})"),
                    QStringLiteral("--yes"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(testing::sqlScalar(db,
                                    QStringLiteral("SELECT status FROM outbox_events"
                                                   " WHERE id = ?::uuid"),
                                    {dead42}),
                 QStringLiteral("pending"));
        QCOMPARE(testing::sqlScalar(db,
                                    QStringLiteral("SELECT status FROM outbox_events"
                                                   " WHERE id = ?::uuid"),
                                    {dead43}),
                 QStringLiteral("dead"));
        // The audit names the filter.
        QVERIFY2(testing::sqlScalar(db, QStringLiteral("SELECT filter FROM outbox_audit"
                                                       " ORDER BY id DESC LIMIT 1"))
                     .contains(QLatin1String(R"(payload@>'{"invoice_id": 42}')")),
                 qPrintable(testing::sqlScalar(db, QStringLiteral("SELECT filter FROM outbox_audit"
                                                                  " ORDER BY id DESC LIMIT 1"))));
    }

    void invalidJsonIsAUsageError_data() {
        QTest::addColumn<QStringList>("command");
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("says");
        const QStringList list{QStringLiteral("list")};
        const QStringList requeue{QStringLiteral("requeue"), QStringLiteral("--yes")};
        const QStringList exportAll{QStringLiteral("export"), QStringLiteral("--output"),
                                    QStringLiteral("-")};
        QTest::newRow("unquoted key")
            << list << QStringLiteral("{invoice_id: 42}") << QStringLiteral("not valid JSON");
        QTest::newRow("a number") << list << QStringLiteral("42")
                                  << QStringLiteral("must be a JSON object or array");
        QTest::newRow("empty") << list << QString() << QStringLiteral("must not be empty");
        QTest::newRow("requeue") << requeue << QStringLiteral("{'a': 1}")
                                 << QStringLiteral("double quotes");
        QTest::newRow("export") << exportAll << QStringLiteral(R"({"a": )")
                                << QStringLiteral("not valid JSON");
    }

    void invalidJsonIsAUsageError() {
        QFETCH(QStringList, command);
        QFETCH(QString, json);
        QFETCH(QString, says);
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        const CtlResult result =
            runCtl(command + QStringList{QStringLiteral("--payload"), json, QStringLiteral("--db"),
                                         m_pg->connInfo(name)});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(QLatin1String("--payload")), qPrintable(result.err));
        QVERIFY2(result.err.contains(says), qPrintable(result.err));
        QVERIFY(result.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlPayload)
#include "tst_outboxctl_payload.moc"
