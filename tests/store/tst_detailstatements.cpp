// What reading an event's detail (the console's detail pane, on every live
// refresh, and `outboxctl show`) asks of the other events: the aggregate
// order's blocker is looked up only where something can hold the event.
// With aggregate order off there is no aggregate index, and the lookup's
// plan, although never run, is priced as a scan of every unfinished event:
// on a large table the server compiled it (JIT) on every refresh.

#include "core/uuidv7.h"
#include "store/migrator.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

class TestDetailStatements final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    int m_created = 0;

    // An event of `status` with the aggregate `aggregate` of type "invoice"
    // (null: none), a second after the previous one.
    QUuid add(const char *status, const char *aggregate) {
        const QUuid id = core::createUuidV7();
        ++m_created;
        const bool ok = sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                           " attempts, aggregate_type, aggregate_id, delivered_at, created_at)"
                           " VALUES (?::uuid, 'ns', 't', '{}', ?, ?, ?, ?,"
                           " CASE WHEN ?::text = 'delivered' THEN now() END,"
                           " now() - interval '1 hour' + ?::integer * interval '1 second')"),
            {id.toString(QUuid::WithoutBraces), QLatin1String(status),
             qstrcmp(status, "pending") == 0 ? 0 : 1,
             aggregate ? QVariant(QStringLiteral("invoice"))
                       : QVariant(QMetaType::fromType<QString>()),
             aggregate ? QVariant(QLatin1String(aggregate))
                       : QVariant(QMetaType::fromType<QString>()),
             QLatin1String(status), m_created});
        return ok ? id : QUuid();
    }

    // Calls of the blocker's lookup of earlier events (a join of the table
    // to itself) in this database since the last reset.
    qint64 earlierEventLookups() {
        return sqlScalar(m_db,
                         QStringLiteral("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                                        " WHERE dbid = (SELECT oid FROM pg_database"
                                        "   WHERE datname = current_database())"
                                        " AND query LIKE '%JOIN outbox_events p%'"))
            .toLongLong();
    }

    // Reads the detail of each of `ids` as the console does, `times` times,
    // and returns how many blocker lookups that ran.
    qint64 lookupsReading(const QList<QUuid> &ids, int times = 3) {
        if (!sqlExec(m_db, QStringLiteral("SELECT pg_stat_statements_reset()")))
            return -1;
        for (int i = 0; i < times; ++i) {
            for (const QUuid &id : ids) {
                const auto detail = store::EventQueries(m_db).detail(id);
                if (!detail.ok() || !detail.value()) {
                    qWarning().noquote() << "no detail for" << id << detail.errorMessage();
                    return -1;
                }
            }
        }
        return earlierEventLookups();
    }

private Q_SLOTS:
    void initTestCase() {
        devtools::EmbeddedPostgres::Options options;
        options.serverSettings = {QStringLiteral("shared_preload_libraries=pg_stat_statements")};
        startPg(outbox::testing::migrateSchema, options);
    }

    void init() {
        openFreshDb();
        QVERIFY(sqlExec(m_db, QStringLiteral("CREATE EXTENSION pg_stat_statements")));
    }

    // Aggregate order is off (the schema's default): no event waits for
    // another, and no refresh of any event's detail looks for one.
    void orderOffLooksUpNothing() {
        const QUuid first = add("dead", "1");
        const QUuid later = add("pending", "1");
        const QUuid delivered = add("delivered", "1");
        QVERIFY(!first.isNull() && !later.isNull() && !delivered.isNull());
        QCOMPARE(lookupsReading({first, later, delivered}), qint64(0));
        const auto detail = store::EventQueries(m_db).detail(later);
        QVERIFY(detail.ok() && detail.value());
        QVERIFY(!detail.value()->blockedBy);
    }

    // With aggregate order on, the lookup runs for an event that can wait
    // (and finds what holds it), never for a delivered event or one without
    // an aggregate.
    void orderOnLooksUpOnlyWhereAnEventCanWait() {
        const auto on = store::Migrator(m_db).enableAggregateOrder();
        QVERIFY2(on.ok(), qPrintable(on.errorMessage()));
        const QUuid first = add("dead", "1");
        const QUuid later = add("pending", "1");
        const QUuid delivered = add("delivered", "1");
        const QUuid loose = add("pending", nullptr);
        QVERIFY(!first.isNull() && !later.isNull() && !delivered.isNull() && !loose.isNull());

        QCOMPARE(lookupsReading({delivered, loose}), qint64(0));
        QCOMPARE(lookupsReading({later}), qint64(3));
        const auto detail = store::EventQueries(m_db).detail(later);
        QVERIFY(detail.ok() && detail.value());
        QVERIFY(detail.value()->blockedBy);
        QCOMPARE(detail.value()->blockedBy->id, first);
    }
};

QTEST_GUILESS_MAIN(TestDetailStatements)
#include "tst_detailstatements.moc"
