// EventFilter: the SQL it produces selects exactly the intended rows, its
// description reads well, and errorSignature() in C++ and in SQL agree.

#include "core/conninfo.h"
#include "store/database.h"
#include "store/eventfilter.h"
#include "support/pgtestcase.h"

#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using outbox::store::EventFilter;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

using namespace std::chrono_literals;

QUuid uuid(const char *text) {
    return QUuid::fromString(QLatin1String(text));
}

// Fixed ids with distinct prefixes, so that an id-prefix search has one answer.
const QUuid kA = uuid("a1111111-0000-4000-8000-000000000001");
const QUuid kB = uuid("b2222222-0000-4000-8000-000000000002");
const QUuid kC = uuid("c3333333-0000-4000-8000-000000000003");
const QUuid kD = uuid("d4444444-0000-4000-8000-000000000004");
const QUuid kE = uuid("e5555555-0000-4000-8000-000000000005");
const QUuid kF = uuid("f6666666-0000-4000-8000-000000000006");
const QUuid kG = uuid("07777777-0000-4000-8000-000000000007");
const QUuid kH = uuid("18888888-0000-4000-8000-000000000008");
const QUuid kTenant1 = uuid("10000000-aaaa-4bbb-8ccc-000000000001");
const QUuid kTenant2 = uuid("20000000-aaaa-4bbb-8ccc-000000000002");

// created_at is 2024-01-01 + hours; updated_at is now() - ageHours.
struct Row {
    const char *label;
    QUuid id;
    const char *nameSpace;
    const char *topic;
    QUuid tenant;
    const char *dedupe;
    const char *status;
    int attempts;
    const char *lastError;
    int createdHour;
    int ageHours;
};

QList<Row> rows() {
    return {
        {"a", kA, "billing", "invoice.paid", kTenant1, "10000000-aaaa-4bbb-8ccc-000000000001/inv-1",
         "pending", 0, nullptr, 0, 0},
        {"b", kB, "billing", "invoice.paid", {}, "k_b", "pending", 2, "HTTP 503 from runner", 1, 1},
        {"c", kC, "billing", "invoice.void", {}, nullptr, "processing", 1, nullptr, 2, 0},
        {"d", kD, "shipping", "parcel.sent", kTenant2, nullptr, "delivered", 1, nullptr, 3, 48},
        {"e",
         kE,
         "shipping",
         "parcel.sent",
         {},
         "100%_done",
         "dead",
         10,
         "timeout after 1234 ms on 10.0.0.1",
         4,
         30},
        {"f",
         kF,
         "shipping",
         "parcel.lost",
         {},
         "100xxdone",
         "dead",
         10,
         "timeout after 99 ms on 10.0.0.2",
         5,
         2},
        {"g",
         kG,
         "crm",
         "contact_new",
         {},
         nullptr,
         "dead",
         3,
         "Connection REFUSED: disk 100% full",
         6,
         0},
        {"h", kH, "crm", "contactxnew", {}, nullptr, "delivered", 1, "under_score", 7, 200},
    };
}

EventFilter withStatus(core::Status status) {
    EventFilter f;
    f.status = status;
    return f;
}

} // namespace

class TestEventFilter final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestEventFilter()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    bool insertRows() {
        for (const Row &row : rows()) {
            const auto text = [](const char *value) {
                return value ? QVariant(QString::fromUtf8(value))
                             : QVariant(QMetaType::fromType<QString>());
            };
            const bool ok = sqlExec(
                m_db,
                QStringLiteral(
                    "INSERT INTO outbox_events (id, namespace, topic, tenant_id, dedupe_key,"
                    " aggregate_id, payload, status, attempts, last_error, locked_by, locked_until,"
                    " created_at, updated_at)"
                    " VALUES (?::uuid, ?, ?, ?::uuid, ?, ?, '{}', ?, ?, ?,"
                    "  CASE WHEN ? = 'processing' THEN gen_random_uuid() END,"
                    "  CASE WHEN ? = 'processing' THEN now() + interval '1 minute' END,"
                    "  timestamptz '2024-01-01 00:00:00+00' + ? * interval '1 hour',"
                    "  now() - ? * interval '1 hour')"),
                {row.id.toString(QUuid::WithoutBraces), text(row.nameSpace), text(row.topic),
                 row.tenant.isNull() ? QVariant(QMetaType::fromType<QString>())
                                     : QVariant(row.tenant.toString(QUuid::WithoutBraces)),
                 text(row.dedupe), text(row.label), text(row.status), row.attempts,
                 text(row.lastError), text(row.status), text(row.status), row.createdHour,
                 row.ageHours});
            if (!ok)
                return false;
        }
        return true;
    }

    // Labels (aggregate_id) of the rows the filter selects, sorted.
    QString select(const EventFilter &filter) {
        const store::SqlCondition condition = store::toSqlCondition(filter, QStringLiteral("e"));
        return sqlScalar(m_db,
                         QStringLiteral("SELECT coalesce(string_agg(e.aggregate_id, ','"
                                        " ORDER BY e.aggregate_id), '') FROM outbox_events e"
                                        " WHERE ") +
                             condition.sql,
                         condition.values);
    }

    QString sqlSignature(const QString &error) {
        QSqlQuery query(m_db);
        if (!query.prepare(QStringLiteral("SELECT ") +
                           store::errorSignatureSql(QStringLiteral("CAST(? AS text)")))) {
            qWarning() << "prepare failed:" << query.lastError().text();
            return QStringLiteral("<prepare failed>");
        }
        query.addBindValue(error);
        if (!query.exec() || !query.next()) {
            qWarning() << "exec failed:" << query.lastError().text();
            return QStringLiteral("<exec failed>");
        }
        return query.value(0).toString();
    }

private Q_SLOTS:
    void filterSelectsExactly_data() {
        QTest::addColumn<EventFilter>("filter");
        QTest::addColumn<QString>("expected");

        const auto make = [](auto &&set) {
            EventFilter f;
            set(f);
            return f;
        };
        QTest::newRow("empty") << EventFilter{} << "a,b,c,d,e,f,g,h";
        QTest::newRow("pending") << withStatus(core::Status::Pending) << "a,b";
        QTest::newRow("processing") << withStatus(core::Status::Processing) << "c";
        QTest::newRow("delivered") << withStatus(core::Status::Delivered) << "d,h";
        QTest::newRow("dead") << withStatus(core::Status::Dead) << "e,f,g";
        QTest::newRow("retrying") << make([](EventFilter &f) { f.retrying = true; }) << "b";
        QTest::newRow("first attempt") << make([](EventFilter &f) { f.retrying = false; }) << "a";
        QTest::newRow("retrying contradicts dead") << make([](EventFilter &f) {
            f.status = core::Status::Dead;
            f.retrying = true;
        }) << "";
        QTest::newRow("namespace")
            << make([](EventFilter &f) { f.nameSpace = QStringLiteral("billing"); }) << "a,b,c";
        QTest::newRow("namespace is exact")
            << make([](EventFilter &f) { f.nameSpace = QStringLiteral("bill"); }) << "";
        QTest::newRow("topic") << make([](EventFilter &f) {
            f.topic = QStringLiteral("parcel.sent");
        }) << "d,e";
        QTest::newRow("topic and status") << make([](EventFilter &f) {
            f.topic = QStringLiteral("parcel.sent");
            f.status = core::Status::Dead;
        }) << "e";
        QTest::newRow("tenant") << make([](EventFilter &f) { f.tenantId = kTenant2; }) << "d";
        QTest::newRow("dedupe key with wildcards is exact")
            << make([](EventFilter &f) { f.dedupeKey = QStringLiteral("100%_done"); }) << "e";
        QTest::newRow("ids") << make([](EventFilter &f) { f.ids = {kA, kE, kH}; }) << "a,e,h";
        QTest::newRow("ids and status") << make([](EventFilter &f) {
            f.ids = {kA, kE, kH};
            f.status = core::Status::Dead;
        }) << "e";
        QTest::newRow("error contains, any case")
            << make([](EventFilter &f) { f.errorContains = QStringLiteral("refused"); }) << "g";
        QTest::newRow("error contains a literal %")
            << make([](EventFilter &f) { f.errorContains = QStringLiteral("0%"); }) << "g";
        QTest::newRow("error contains a literal _")
            << make([](EventFilter &f) { f.errorContains = QStringLiteral("r_s"); }) << "h";
        QTest::newRow("error signature") << make([](EventFilter &f) {
            f.errorSignature = QStringLiteral("timeout after <n> ms on <n>");
        }) << "e,f";
        QTest::newRow("text: id prefix")
            << make([](EventFilter &f) { f.text = QStringLiteral("B2222"); }) << "b";
        QTest::newRow("text: braced full id")
            << make([](EventFilter &f) { f.text = kF.toString(); }) << "f";
        QTest::newRow("text: dedupe key with literal % and _")
            << make([](EventFilter &f) { f.text = QStringLiteral("0%_d"); }) << "e";
        QTest::newRow("text: topic")
            << make([](EventFilter &f) { f.text = QStringLiteral("PARCEL"); }) << "d,e,f";
        QTest::newRow("text: literal _ in topic")
            << make([](EventFilter &f) { f.text = QStringLiteral("t_n"); }) << "g";
        QTest::newRow("text: last error")
            << make([](EventFilter &f) { f.text = QStringLiteral("from runner"); }) << "b";
        QTest::newRow("created from (inclusive)") << make([](EventFilter &f) {
            f.createdFrom = QDateTime(QDate(2024, 1, 1), QTime(5, 0), Qt::UTC);
        }) << "f,g,h";
        QTest::newRow("created to (exclusive)") << make([](EventFilter &f) {
            f.createdTo = QDateTime(QDate(2024, 1, 1), QTime(2, 0), Qt::UTC);
        }) << "a,b";
        QTest::newRow("created range in another zone") << make([](EventFilter &f) {
            f.createdFrom = QDateTime(QDate(2024, 1, 1), QTime(3, 0), Qt::OffsetFromUTC, 3600);
            f.createdTo = QDateTime(QDate(2024, 1, 1), QTime(6, 0), Qt::OffsetFromUTC, 3600);
        }) << "c,d,e";
        QTest::newRow("older than") << make([](EventFilter &f) { f.olderThan = 24h; }) << "d,e,h";
        QTest::newRow("older than and dead") << make([](EventFilter &f) {
            f.olderThan = 24h;
            f.status = core::Status::Dead;
        }) << "e";
        QTest::newRow("quotes are values, not SQL")
            << make([](EventFilter &f) { f.nameSpace = QStringLiteral("x' OR '1'='1"); }) << "";
    }

    void filterSelectsExactly() {
        QFETCH(EventFilter, filter);
        QFETCH(QString, expected);
        QVERIFY(insertRows());
        QCOMPARE(select(filter), expected);
    }

    void emptyFilter() {
        QVERIFY(EventFilter{}.isEmpty());
        const store::SqlCondition condition = store::toSqlCondition(EventFilter{});
        QCOMPARE(condition.sql, QStringLiteral("TRUE"));
        QVERIFY(condition.values.isEmpty());
        EventFilter f;
        f.topic = QStringLiteral("x");
        QVERIFY(!f.isEmpty());
        f = {};
        f.olderThan = 0ms;
        QVERIFY(!f.isEmpty());
    }

    void valuesAreNeverSpliced() {
        EventFilter f;
        f.nameSpace = QStringLiteral("ns-marker");
        f.topic = QStringLiteral("topic-marker");
        f.dedupeKey = QStringLiteral("dedupe-marker");
        f.errorContains = QStringLiteral("error-marker");
        f.errorSignature = QStringLiteral("signature-marker");
        f.text = QStringLiteral("text-marker");
        const store::SqlCondition condition = store::toSqlCondition(f, QStringLiteral("x"));
        QVERIFY(!condition.sql.contains(QLatin1String("marker")));
        QVERIFY(condition.sql.contains(QLatin1String("x.namespace")));
        QCOMPARE(
            condition.sql.count(QLatin1Char('?')) -
                store::errorSignatureSql(QStringLiteral("x.last_error")).count(QLatin1Char('?')),
            condition.values.size());
    }

    void describe_data() {
        QTest::addColumn<EventFilter>("filter");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << EventFilter{} << "all events";
        EventFilter f;
        f.status = core::Status::Dead;
        f.nameSpace = QStringLiteral("billing");
        f.errorContains = QStringLiteral("timeout");
        f.olderThan = 7 * 24h;
        QTest::newRow("header example")
            << f << "status=dead namespace=billing error~'timeout' older than 7d";
        f = {};
        f.status = core::Status::Pending;
        f.retrying = true;
        f.topic = QStringLiteral("invoice paid");
        f.tenantId = kTenant1;
        f.dedupeKey = QStringLiteral("it's");
        QTest::newRow("quoting")
            << f
            << "status=pending retrying topic='invoice paid' "
               "tenant=10000000-aaaa-4bbb-8ccc-000000000001 dedupe_key='it''s'";
        f = {};
        f.ids = {kA, kB};
        f.text = QStringLiteral("abc");
        f.errorSignature = QStringLiteral("timeout after <n> ms");
        QTest::newRow("ids")
            << f
            << "ids=a1111111-0000-4000-8000-000000000001,b2222222-0000-4000-8000-000000000002 "
               "signature='timeout after <n> ms' text~'abc'";
        f = {};
        f.ids = {kA, kB, kC, kD, kE};
        f.retrying = false;
        QTest::newRow("many ids") << f
                                  << "first-attempt ids=a1111111-0000-4000-8000-000000000001,"
                                     "b2222222-0000-4000-8000-000000000002,"
                                     "c3333333-0000-4000-8000-000000000003 (+2 more)";
        f = {};
        f.createdFrom = QDateTime(QDate(2024, 5, 1), QTime(10, 0), Qt::OffsetFromUTC, 7200);
        f.createdTo = QDateTime(QDate(2024, 5, 2), QTime(0, 0, 0, 250), Qt::UTC);
        QTest::newRow("times in UTC")
            << f << "created>=2024-05-01T08:00:00Z created<2024-05-02T00:00:00.250Z";
    }

    void describe() {
        QFETCH(EventFilter, filter);
        QFETCH(QString, expected);
        QCOMPARE(filter.describe(), expected);
    }

    // key() stands for the whole filter: one field more or less, anywhere,
    // gives another key; filters that compare equal give the same key.
    void keyTellsEveryFieldApart() {
        QList<EventFilter> filters{EventFilter{}};
        const auto with = [&](auto set) {
            EventFilter f;
            set(f);
            filters << f;
        };
        with([](EventFilter &f) { f.status = core::Status::Dead; });
        with([](EventFilter &f) { f.status = core::Status::Pending; });
        with([](EventFilter &f) { f.retrying = true; });
        with([](EventFilter &f) { f.retrying = false; });
        with([](EventFilter &f) { f.nameSpace = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.topic = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.tenantId = kTenant1; });
        with([](EventFilter &f) { f.dedupeKey = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.ids = {kA}; });
        with([](EventFilter &f) { f.ids = {kA, kB}; });
        with([](EventFilter &f) { f.ids = {kB, kA}; });
        with([](EventFilter &f) { f.errorContains = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.errorSignature = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.text = QStringLiteral("billing"); });
        with([](EventFilter &f) { f.createdFrom = QDateTime(QDate(2024, 5, 1), {}, Qt::UTC); });
        with([](EventFilter &f) { f.createdTo = QDateTime(QDate(2024, 5, 1), {}, Qt::UTC); });
        with([](EventFilter &f) { f.olderThan = 7 * 24h; });
        // A separator inside a value does not make two fields look like one.
        with([](EventFilter &f) { f.nameSpace = QStringLiteral("a|b"); });
        with([](EventFilter &f) {
            f.nameSpace = QStringLiteral("a");
            f.topic = QStringLiteral("b");
        });
        for (qsizetype i = 0; i < filters.size(); ++i) {
            for (qsizetype j = 0; j < filters.size(); ++j) {
                QCOMPARE(filters.at(i) == filters.at(j), i == j);
                QVERIFY2(
                    (filters.at(i).key() == filters.at(j).key()) == (i == j),
                    qPrintable(filters.at(i).key() + QLatin1String(" / ") + filters.at(j).key()));
            }
        }

        // The same instant in another zone: equal filters, equal keys.
        EventFilter utc;
        utc.createdFrom = QDateTime(QDate(2024, 5, 1), QTime(8, 0), Qt::UTC);
        EventFilter local = utc;
        local.createdFrom = QDateTime(QDate(2024, 5, 1), QTime(10, 0), Qt::OffsetFromUTC, 7200);
        QVERIFY(utc == local);
        QCOMPARE(utc.key(), local.key());
    }

    void signature_data() {
        QTest::addColumn<QString>("error");
        QTest::addColumn<QString>("expected");
        const auto row = [](const char *name, const QString &error, const char *expected) {
            QTest::newRow(name) << error << QString::fromUtf8(expected);
        };
        const auto s = [](const char *text) { return QString::fromUtf8(text); };
        row("timeout", s("timeout after 1234 ms on 10.0.0.1"), "timeout after <n> ms on <n>");
        row("timeout 2", s("timeout after 7 ms on 192.168.100.254"), "timeout after <n> ms on <n>");
        row("uuid", s("event 0191f3c4-6a2b-7c3d-9e4f-123456789abc not found"),
            "event <uuid> not found");
        row("upper uuid", s("ID 0191F3C4-6A2B-7C3D-9E4F-123456789ABC"), "ID <uuid>");
        row("0x hex", s("segfault at 0x7ffd1234abcd"), "segfault at <hex>");
        row("hex token", s("trace 4bf92f3577b34da6a3ce929d0e0e4736 failed"), "trace <hex> failed");
        row("hex word stays", s("deadbeef is a word"), "deadbeef is a word");
        row("openssl code", s("error:0A000086:SSL routines::certificate verify failed"),
            "error:<hex>:SSL routines::certificate verify failed");
        row("short hash", s("build a1b2c3d broke"), "build <hex> broke");
        row("0x in parens", s("(0x7F) and 0xdeadBEEF"), "(<hex>) and <hex>");
        row("byte run", s("fingerprint AB:CD:3E:4F:50 unknown at 10:00:01"),
            "fingerprint <hex> unknown at <n>:<n>:<n>");
        row("digits only", s("order 12345678901234 rejected"), "order <n> rejected");
        row("double quotes keep words", s("relation \"orders_2024\" does not exist"),
            "relation \"orders_<n>\" does not exist");
        row("single quotes", s("invalid input 'abc 12' for field 'x'"),
            "invalid input '?' for field '?'");
        row("apostrophe", s("can't reach 'db1', won't retry"), "can't reach '?', won't retry");
        row("leading quote", s("''abc'"), "'?'abc'");
        row("unclosed quote", s("bad \"value 12"), "bad \"value <n>");
        row("json body", s("HTTP 422: {\"error\":\"invalid\",\"id\":42}"),
            "HTTP 422: {\"error\":\"invalid\",\"id\":<n>}");
        row("json words", s("HTTP 500: {\"error\":\"deadlock detected\"}"),
            "HTTP 500: {\"error\":\"deadlock detected\"}");
        row("json ids", s("{\"error\":\"gone\",\"request\":\"req_4bf92f3577b3\"}"),
            "{\"error\":\"gone\",\"request\":\"req_<hex>\"}");
        // A status code tells a permanent failure from a transient one.
        row("http 410", s("HTTP 410 from https://h:8080/x after 12 ms"),
            "HTTP 410 from https://h:<n>/x after <n> ms");
        row("http 503", s("HTTP 503 from https://h:8080/x after 7 ms"),
            "HTTP 503 from https://h:<n>/x after <n> ms");
        row("http status then number", s("HTTP 503 retry 2"), "HTTP 503 retry <n>");
        row("not after http", s("HTTPS 503 and XHTTP 5"), "HTTPS <n> and XHTTP 5");
        row("whitespace", s("  a\t\tb\r\n  c  "), "a b c");
        row("only space", s("   "), "");
        row("empty", QString(), "");
        row("words with digits", s("worker-17 on http2 v2.0.1"), "worker-<n> on http<n> v<n>");
        row("decimals", s("took 1.5s (limit 0.25)"), "took <n>s (limit <n>)");
        row("negative", s("offset -5"), "offset -<n>");
        row("unicode", s("Zeitüberschreitung nach 30 s – 🚀 12"),
            "Zeitüberschreitung nach <n> s – 🚀 <n>");
        row("unicode spaces stay", s("a\u00a0 1\u3000b"), "a\u00a0 <n>\u3000b");
        row("vertical tab stays", s("a\x0b 1"), "a\x0b <n>");
        row("html", s("<html><body><h1>502 Bad Gateway</h1></body></html>"),
            "<html><body><h<n>><n> Bad Gateway</h<n>></body></html>");
        row("multiline", s("line 1\nline 2\n"), "line <n> line <n>");
        row("backslash", s("path C:\\tmp\\x 3"), "path C:\\tmp\\x <n>");
        row("dollar", s("cost $12.50 \\1"), "cost $<n> \\<n>");
    }

    // The C++ and the SQL implementation give the same text for every sample,
    // one bound value at a time and over a table.
    void signature() {
        QFETCH(QString, error);
        QFETCH(QString, expected);
        QCOMPARE(store::errorSignature(error), expected);
        QCOMPARE(sqlSignature(error), expected);
    }

    // Random texts built from the fragments the rules care about, compared
    // over a table: the SQL expression as the grouping query uses it.
    void signatureSqlMatchesCppOverATable() {
        const QStringList fragments = {
            QStringLiteral("timeout"),    QStringLiteral(" "),
            QStringLiteral("1234"),       QStringLiteral("10.0.0.1"),
            QStringLiteral("'"),          QStringLiteral("\""),
            QStringLiteral("x'y"),        QStringLiteral("0x1f"),
            QStringLiteral("deadbeef12"), QStringLiteral("0191f3c4-6a2b-7c3d-9e4f-123456789abc"),
            QStringLiteral("\t"),         QStringLiteral("\n"),
            QString::fromUtf8("\u00fc"),  QString::fromUtf8("\U0001F680"),
            QStringLiteral("-"),          QStringLiteral("_"),
            QStringLiteral("abc"),        QStringLiteral("  "),
            QString::fromUtf8("\u00a0"),  QStringLiteral("1."),
            QStringLiteral(".5"),         QStringLiteral("''"),
            QStringLiteral("\"\""),       QStringLiteral("9"),
            QStringLiteral("a9"),         QStringLiteral("AF09"),
            QStringLiteral("g"),          QStringLiteral(","),
            QStringLiteral("\\1"),        QStringLiteral("0X"),
            QStringLiteral("\r"),         QStringLiteral("{}"),
            QStringLiteral(":"),          QStringLiteral("HTTP "),
            QStringLiteral("HTTP 503")};
        QRandomGenerator random(20240501);
        QStringList samples;
        for (int i = 0; i < 1500; ++i) {
            QString sample;
            const int parts = 1 + int(random.bounded(9));
            for (int p = 0; p < parts; ++p)
                sample += fragments.at(random.bounded(int(fragments.size())));
            samples << sample;
        }
        QVERIFY(sqlExec(
            m_db, QStringLiteral("CREATE TEMP TABLE samples (n int PRIMARY KEY, error text)")));
        QVERIFY(m_db.transaction());
        for (int i = 0; i < samples.size(); ++i)
            QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO samples VALUES (?, ?)"),
                            {i, samples.at(i)}));
        QVERIFY(m_db.commit());

        QSqlQuery query(m_db);
        QVERIFY(query.exec(QStringLiteral("SELECT n, ") +
                           store::errorSignatureSql(QStringLiteral("s.error")) +
                           QStringLiteral(" FROM samples s ORDER BY n")));
        int seen = 0;
        while (query.next()) {
            const int n = query.value(0).toInt();
            const QString expected = store::errorSignature(samples.at(n));
            if (query.value(1).toString() != expected)
                QFAIL(qPrintable(QStringLiteral("sample %1 \"%2\": SQL gives \"%3\", C++ \"%4\"")
                                     .arg(n)
                                     .arg(samples.at(n), query.value(1).toString(), expected)));
            ++seen;
        }
        QCOMPARE(seen, samples.size());
    }
};

QTEST_GUILESS_MAIN(TestEventFilter)
#include "tst_eventfilter.moc"
