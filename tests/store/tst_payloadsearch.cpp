// Search inside payloads (EventFilter::payloadContains): what the filter
// accepts and says about itself, which events a page returns for it, and that
// the planner answers it from the payload index on the pending and dead sets
// (sql/007_payload_search.sql).

#include "store/eventfilter.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QSet>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

namespace {

// One event with this payload and status; returns its id.
QString insertEvent(QSqlDatabase db, const QString &payload, const QString &status) {
    return sqlScalar(
        db,
        QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                       " delivered_at, attempts)"
                       " VALUES (outbox_uuid_v7(), 'billing', 'invoice.paid', ?::jsonb, ?::text,"
                       "  CASE WHEN ?::text = 'delivered' THEN now() END,"
                       "  CASE WHEN ?::text = 'dead' THEN 5 ELSE 0 END)"
                       " RETURNING id::text"),
        {payload, status, status, status});
}

// `count` events of `status` whose payloads carry invoice ids from `first`.
bool insertMany(QSqlDatabase db, int first, int count, const QString &status) {
    return sqlExec(
        db,
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, delivered_at)"
            " SELECT gen_random_uuid(), 'billing', 'invoice.paid',"
            "  jsonb_build_object('invoice_id', g, 'customer', jsonb_build_object('id', g % 1000),"
            "   'lines', jsonb_build_array(jsonb_build_object('sku', 'A' || (g % 50)))),"
            "  ?::text, CASE WHEN ?::text = 'delivered' THEN now() END"
            " FROM generate_series(?::int, ?::int) g"),
        {status, status, first, first + count - 1});
}

} // namespace

class TestPayloadSearch final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    QSet<QString> idsOf(const EventFilter &filter) {
        PageRequest request;
        request.filter = filter;
        request.limit = 1000;
        EventQueries queries(m_db);
        const auto page = queries.page(request);
        if (!page.ok()) {
            qWarning().noquote() << page.errorMessage();
            return {QStringLiteral("<error>")};
        }
        QSet<QString> ids;
        for (const core::OutboxEvent &event : page->rows)
            ids.insert(event.id.toString(QUuid::WithoutBraces));
        return ids;
    }

private Q_SLOTS:
    void validation_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("problem"); // a fragment; empty: accepted
        QTest::newRow("empty") << QString() << QString();
        QTest::newRow("object") << QStringLiteral(R"({"invoice_id": 42})") << QString();
        QTest::newRow("nested") << QStringLiteral(R"( {"customer": {"id": 7}} )") << QString();
        QTest::newRow("array") << QStringLiteral(R"([{"sku": "A1"}])") << QString();
        QTest::newRow("unquoted key")
            << QStringLiteral("{invoice_id: 42}") << QStringLiteral("not valid JSON");
        QTest::newRow("single quotes")
            << QStringLiteral("{'invoice_id': 42}") << QStringLiteral("double quotes");
        QTest::newRow("unfinished")
            << QStringLiteral(R"({"invoice_id": 42)") << QStringLiteral("at character");
        QTest::newRow("number") << QStringLiteral("42") << QStringLiteral("object or array");
        QTest::newRow("string") << QStringLiteral(R"("42")") << QStringLiteral("object or array");
        QTest::newRow("bare word") << QStringLiteral("invoice") << QStringLiteral("name the key");
    }

    void validation() {
        QFETCH(QString, text);
        QFETCH(QString, problem);
        const QString found = store::payloadFilterProblem(text);
        if (problem.isEmpty()) {
            QVERIFY2(found.isEmpty(), qPrintable(found));
        } else {
            QVERIFY2(found.contains(problem), qPrintable(found));
            // Every complaint shows what a valid filter looks like.
            QVERIFY2(found.contains(QLatin1String(R"({"invoice_id": 42})")), qPrintable(found));
        }
    }

    void describesItself() {
        EventFilter filter;
        QVERIFY(filter.isEmpty());
        filter.payloadContains = QStringLiteral(R"({"invoice_id": 42})");
        QVERIFY(!filter.isEmpty());
        QCOMPARE(filter.describe(), QStringLiteral(R"(payload@>'{"invoice_id": 42}')"));
        EventFilter other = filter;
        other.payloadContains = QStringLiteral(R"({"invoice_id": 43})");
        QVERIFY(filter.key() != other.key());
        QVERIFY(filter.key() != EventFilter{}.key());

        // The index holds pending and dead events.
        QVERIFY(filter.needsScan());
        for (const core::Status status : {core::Status::Pending, core::Status::Dead}) {
            filter.status = status;
            QVERIFY(!filter.needsScan());
        }
        for (const core::Status status : {core::Status::Processing, core::Status::Delivered}) {
            filter.status = status;
            QVERIFY(filter.needsScan());
        }
        filter.status = core::Status::Pending;
        filter.retrying = true;
        QVERIFY(!filter.needsScan());
        filter.text = QStringLiteral("x");
        QVERIFY(filter.needsScan());

        const store::SqlCondition condition = store::toSqlCondition(other, QStringLiteral("e"));
        QCOMPARE(condition.sql, QStringLiteral("(e.payload @> ?::jsonb)"));
        QCOMPARE(condition.values, QVariantList{other.payloadContains});
    }

    void pagesFindTheContainingPayloads() {
        const QString pending = insertEvent(
            m_db, QStringLiteral(R"({"invoice_id": 42, "customer": {"id": 7, "vip": true}})"),
            QStringLiteral("pending"));
        const QString dead = insertEvent(
            m_db, QStringLiteral(R"({"invoice_id": 42, "lines": [{"sku": "A1"}, {"sku": "B2"}]})"),
            QStringLiteral("dead"));
        const QString delivered =
            insertEvent(m_db, QStringLiteral(R"({"invoice_id": 42, "big": 12345678901234567890})"),
                        QStringLiteral("delivered"));
        const QString otherInvoice =
            insertEvent(m_db, QStringLiteral(R"({"invoice_id": 43, "customer": {"id": 7}})"),
                        QStringLiteral("pending"));
        QVERIFY(!pending.isEmpty() && !dead.isEmpty() && !delivered.isEmpty() &&
                !otherInvoice.isEmpty());

        EventFilter filter;
        filter.payloadContains = QStringLiteral(R"({"invoice_id": 42})");
        QCOMPARE(idsOf(filter), (QSet<QString>{pending, dead, delivered}));
        filter.status = core::Status::Pending;
        QCOMPARE(idsOf(filter), (QSet<QString>{pending}));
        filter.status = core::Status::Dead;
        QCOMPARE(idsOf(filter), (QSet<QString>{dead}));
        filter.status = core::Status::Delivered;
        QCOMPARE(idsOf(filter), (QSet<QString>{delivered}));
        filter.status.reset();

        // Nested objects, elements of arrays, exact big numbers.
        filter.payloadContains = QStringLiteral(R"({"customer": {"id": 7}})");
        QCOMPARE(idsOf(filter), (QSet<QString>{pending, otherInvoice}));
        filter.payloadContains = QStringLiteral(R"({"lines": [{"sku": "B2"}]})");
        QCOMPARE(idsOf(filter), (QSet<QString>{dead}));
        filter.payloadContains = QStringLiteral(R"({"big": 12345678901234567890})");
        QCOMPARE(idsOf(filter), (QSet<QString>{delivered}));
        filter.payloadContains = QStringLiteral(R"({"big": 12345678901234567891})");
        QCOMPARE(idsOf(filter), QSet<QString>{});
        // Containment, not equality of a value's type: "42" is not 42.
        filter.payloadContains = QStringLiteral(R"({"invoice_id": "42"})");
        QCOMPARE(idsOf(filter), QSet<QString>{});
        // Combined with the other fields.
        filter.payloadContains = QStringLiteral(R"({"customer": {"id": 7}})");
        filter.text = otherInvoice;
        QCOMPARE(idsOf(filter), (QSet<QString>{otherInvoice}));
    }

    void migrationCreatesThePartialIndex() {
        const QString definition = sqlScalar(
            m_db, QStringLiteral("SELECT pg_get_indexdef('outbox_events_payload_idx'::regclass)"));
        QVERIFY2(definition.contains(QLatin1String("USING gin (payload jsonb_path_ops)")),
                 qPrintable(definition));
        QVERIFY2(definition.contains(QLatin1String("'pending'")) &&
                     definition.contains(QLatin1String("'dead'")) &&
                     !definition.contains(QLatin1String("'processing'")) &&
                     !definition.contains(QLatin1String("'delivered'")),
                 qPrintable(definition));
    }

    void plans_data() {
        QTest::addColumn<int>("status"); // -1: no status (all three page branches)
        QTest::newRow("pending") << int(core::Status::Pending);
        QTest::newRow("dead") << int(core::Status::Dead);
        QTest::newRow("no status") << -1;
    }

    // Among many delivered events and a large backlog, a payload search of
    // the pending or dead set reads the payload index, never the table.
    void plans() {
        QFETCH(int, status);
        QVERIFY(insertMany(m_db, 1, 200000, QStringLiteral("delivered")));
        QVERIFY(insertMany(m_db, 200001, 50000, QStringLiteral("pending")));
        QVERIFY(insertMany(m_db, 250001, 20000, QStringLiteral("dead")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));

        PageRequest request;
        request.limit = 200;
        request.filter.payloadContains = QStringLiteral(R"({"invoice_id": 260000})");
        if (status >= 0)
            request.filter.status = core::Status(status);
        EventQueries queries(m_db);
        const auto plan = queries.explainPage(request);
        QVERIFY2(plan.ok(), qPrintable(plan.errorMessage()));
        // Without a status only the dead branch can use it: the live branch
        // asks for pending and processing events.
        QVERIFY2(plan->count(QLatin1String("Bitmap Index Scan on outbox_events_payload_idx")) == 1,
                 qPrintable(plan.value()));
        if (status >= 0)
            QVERIFY2(!plan->contains(QLatin1String("Seq Scan")), qPrintable(plan.value()));

        const auto page = queries.page(request);
        QVERIFY2(page.ok(), qPrintable(page.errorMessage()));
        if (status == int(core::Status::Dead) || status < 0) {
            QCOMPARE(page->rows.size(), 1);
            QCOMPARE(page->rows.first().status, core::Status::Dead);
        } else {
            QCOMPARE(page->rows.size(), 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestPayloadSearch)
#include "tst_payloadsearch.moc"
