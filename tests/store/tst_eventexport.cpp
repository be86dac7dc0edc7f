// The streamed export (store::EventExport) against a real server: every
// matching row exactly once, in key order, across pages whose boundaries
// fall inside runs of equal milliseconds; a stop after a page.

#include "core/uuidtext.h"
#include "store/eventexport.h"
#include "support/pgtestcase.h"

#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

class TestEventExport final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private Q_SLOTS:
    void init() {
        if (!openFreshDb())
            return;
        // 1,000 events over four statuses and two namespaces. Groups of 40 share
        // one millisecond (and differ in microseconds), so a page boundary falls
        // inside a run of equal milliseconds, where a cursor with millisecond
        // precision would skip or repeat rows.
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral(
                "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts, "
                " last_error, delivered_at, created_at, updated_at) "
                "SELECT gen_random_uuid(), CASE WHEN g % 3 = 0 THEN 'shipping' ELSE 'billing' END, "
                " 'invoice.paid', jsonb_build_object('n', g), "
                " (ARRAY['pending', 'delivered', 'dead', 'dead'])[1 + g % 4], "
                " CASE WHEN g % 4 >= 2 THEN 3 ELSE 0 END, "
                " CASE WHEN g % 4 >= 2 THEN 'HTTP 503' END, "
                " CASE WHEN g % 4 = 1 THEN now() END, "
                " timestamptz '2026-01-01 00:00:00' + (g / 40) * interval '1 millisecond' "
                "   + (g % 40) * interval '1 microsecond', now() "
                "FROM generate_series(1, 1000) AS g")));
    }

    void exportsEveryMatchingRowOnce();
    void stopsAfterAPage();
    void badPageSizeIsRefused();

private:
    QStringList idsWhere(const QString &condition);
};

QStringList TestEventExport::idsWhere(const QString &condition) {
    return testing::sqlColumn(m_db, QStringLiteral("SELECT id::text FROM outbox_events WHERE %1 "
                                                   "ORDER BY created_at, id")
                                        .arg(condition));
}

void TestEventExport::exportsEveryMatchingRowOnce() {
    struct Case {
        store::EventFilter filter;
        QString condition;
    };
    store::EventFilter deadBilling;
    deadBilling.status = core::Status::Dead;
    deadBilling.nameSpace = QStringLiteral("billing");
    store::EventFilter billing;
    billing.nameSpace = QStringLiteral("billing");
    const QList<Case> cases{
        {deadBilling, QStringLiteral("status = 'dead' AND namespace = 'billing'")},
        {billing, QStringLiteral("namespace = 'billing'")},
        {store::EventFilter(), QStringLiteral("TRUE")},
    };
    for (const Case &c : cases) {
        const QStringList expected = idsWhere(c.condition);
        QVERIFY(expected.size() > 100);
        QStringList written;
        QList<qint64> reported;
        store::ExportOptions options;
        options.pageSize = 37;
        options.progress = [&](qint64 done, qint64 total) {
            reported << done;
            return total == expected.size();
        };
        store::EventExport exporter(m_db);
        auto result = exporter.run(
            c.filter,
            [&](const core::OutboxEvent &event) -> core::Result<void> {
                written << core::uuidText(event.id);
                return {};
            },
            options);
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QVERIFY(!result->cancelled);
        QCOMPARE(result->total, qint64(expected.size()));
        QCOMPARE(result->written, qint64(expected.size()));
        // Exactly the matching rows, each once, oldest first.
        QCOMPARE(written, expected);
        QVERIFY(reported.size() > 2);
        QCOMPARE(reported.constFirst(), 0);
    }
}

void TestEventExport::stopsAfterAPage() {
    store::EventFilter filter;
    filter.status = core::Status::Dead;
    store::ExportOptions options;
    options.pageSize = 50;
    options.progress = [](qint64 done, qint64) { return done < 100; };
    qint64 written = 0;
    store::EventExport exporter(m_db);
    auto result = exporter.run(
        filter,
        [&](const core::OutboxEvent &) -> core::Result<void> {
            ++written;
            return {};
        },
        options);
    QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
    QVERIFY(result->cancelled);
    QCOMPARE(result->written, 100);
    QCOMPARE(written, 100);
    QCOMPARE(result->total, 500);

    // A sink that fails (a full disk) ends the export with its error.
    auto failed =
        exporter.run(filter,
                     [](const core::OutboxEvent &) -> core::Result<void> {
                         return core::Error{core::ErrorKind::Failed, QStringLiteral("disk full")};
                     },
                     {});
    QVERIFY(!failed.ok());
    QCOMPARE(failed.errorMessage(), QStringLiteral("disk full"));
}

void TestEventExport::badPageSizeIsRefused() {
    store::ExportOptions options;
    options.pageSize = 0;
    store::EventExport exporter(m_db);
    auto result = exporter.run(
        {}, [](const core::OutboxEvent &) -> core::Result<void> { return {}; }, options);
    QVERIFY(!result.ok());
    QVERIFY2(result.errorMessage().contains(QLatin1String("page size")),
             qPrintable(result.errorMessage()));
}

QTEST_GUILESS_MAIN(TestEventExport)
#include "tst_eventexport.moc"
