// EventQueries: counts (exact and estimated), keyset pages in both orders,
// the plans behind them, detail with history, error groups, privileges.

#include "core/conninfo.h"
#include "store/database.h"
#include "store/migrator.h"
#include "store/operations.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QRegularExpression>
#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace outbox;
using namespace outbox::store;
using namespace outbox::testing;

namespace {

// `count` rows in one statement: they share created_at, random ids break the tie.
bool insertEvents(QSqlDatabase db, int count, const QString &status,
                  const QString &nameSpace = QStringLiteral("billing"),
                  const QString &topic = QStringLiteral("invoice.paid"), int attempts = -1,
                  const QString &lastError = {}) {
    return sqlExec(
        db,
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts, "
            "last_error,"
            " locked_by, locked_until, delivered_at)"
            " SELECT gen_random_uuid(), ?, ?, jsonb_build_object('n', g), ?::text,"
            "  CASE WHEN ?::int >= 0 THEN ?::int WHEN ?::text = 'pending' THEN 0 ELSE 3 END,"
            "  nullif(?::text, ''),"
            "  CASE WHEN ?::text = 'processing' THEN gen_random_uuid() END,"
            "  CASE WHEN ?::text = 'processing' THEN now() + interval '5 minutes' END,"
            "  CASE WHEN ?::text = 'delivered' THEN now() END"
            " FROM generate_series(1, ?) g"),
        {nameSpace, topic, status, attempts, attempts, status, lastError, status, status, status,
         count});
}

QString sqlIds(QSqlDatabase db, const QString &where, bool newestFirst) {
    return sqlScalar(db,
                     QStringLiteral("SELECT string_agg(id::text, ',' ORDER BY created_at %1, id"
                                    " %1) FROM outbox_events WHERE %2")
                         .arg(newestFirst ? QStringLiteral("DESC") : QStringLiteral("ASC"), where));
}

} // namespace

class TestQueries final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestQueries()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    QStringList m_extra;

    // Every row the pages return, in order, checking that pages are full
    // until the last and that the last has no cursor.
    QStringList walk(PageRequest request, int *pages = nullptr) {
        EventQueries queries(m_db);
        QStringList ids;
        int count = 0;
        for (;;) {
            const auto page = queries.page(request);
            if (!page.ok()) {
                qWarning().noquote() << page.errorMessage();
                return {QStringLiteral("<error>")};
            }
            ++count;
            for (const core::OutboxEvent &event : page->rows)
                ids << event.id.toString(QUuid::WithoutBraces);
            if (!page->next)
                break;
            if (page->rows.size() != request.limit) {
                qWarning() << "a page before the last was not full";
                return {QStringLiteral("<short page>")};
            }
            request.after = page->next;
            if (count > 10000)
                return {QStringLiteral("<endless>")};
        }
        if (pages)
            *pages = count;
        return ids;
    }

private Q_SLOTS:
    void cleanup() {
        for (const QString &name : std::as_const(m_extra))
            store::closeDatabase(name);
        m_extra.clear();
        // The big tables of some tests would otherwise pile up on disk.
        dropFreshDb();
    }

    void countsAreExact() {
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("pending")));
        QVERIFY(insertEvents(m_db, 2, QStringLiteral("pending"), QStringLiteral("billing"),
                             QStringLiteral("invoice.void"), 4));
        QVERIFY(insertEvents(m_db, 4, QStringLiteral("processing"), QStringLiteral("shipping"),
                             QStringLiteral("parcel.sent")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET locked_until = now() -"
                                             " interval '1 second' WHERE id = (SELECT id FROM"
                                             " outbox_events WHERE status = 'processing' ORDER BY"
                                             " id LIMIT 1)")));
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 6, QStringLiteral("dead"), QStringLiteral("shipping"),
                             QStringLiteral("parcel.sent")));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET created_at = timestamptz"
                                             " '2023-03-04 05:06:07.891+00' WHERE id = (SELECT id"
                                             " FROM outbox_events WHERE status = 'pending' ORDER BY"
                                             " id DESC LIMIT 1)")));

        EventQueries queries(m_db);
        const auto counts = queries.counts(1000);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QCOMPARE(counts->pending, 3);
        QCOMPARE(counts->retrying, 2);
        QCOMPARE(counts->processing, 4);
        QCOMPARE(counts->expiredLeases, 1);
        QCOMPARE(counts->delivered, 5);
        QVERIFY(!counts->deliveredEstimated);
        QCOMPARE(counts->dead, 6);
        QCOMPARE(counts->oldestPendingAt,
                 QDateTime(QDate(2023, 3, 4), QTime(5, 6, 7, 891), Qt::UTC));
        QVERIFY(counts->serverTime.isValid());
        QVERIFY(qAbs(counts->serverTime.secsTo(QDateTime::currentDateTimeUtc())) < 3600);
        QCOMPARE(counts->topics.size(), 3);
        const auto topic = [&](int i) {
            const store::TopicCount &t = counts->topics.at(i);
            return QStringLiteral("%1/%2:%3,%4,%5")
                .arg(t.nameSpace, t.topic)
                .arg(t.pending)
                .arg(t.processing)
                .arg(t.dead);
        };
        QCOMPARE(topic(0), QStringLiteral("billing/invoice.paid:3,0,0"));
        QCOMPARE(topic(1), QStringLiteral("billing/invoice.void:2,0,0"));
        QCOMPARE(topic(2), QStringLiteral("shipping/parcel.sent:0,4,6"));

        // A cap below the real number switches to the estimate.
        const auto capped = queries.counts(4);
        QVERIFY(capped.ok());
        QVERIFY(capped->deliveredEstimated);
        QVERIFY(capped->delivered >= 5);
    }

    void deliveredIsEstimatedAboveTheCap() {
        QVERIFY(insertEvents(m_db, 150000, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 7, QStringLiteral("dead")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        EventQueries queries(m_db);
        const auto counts = queries.counts(1000);
        QVERIFY2(counts.ok(), qPrintable(counts.errorMessage()));
        QVERIFY(counts->deliveredEstimated);
        QVERIFY2(counts->delivered > 120000 && counts->delivered < 180000,
                 qPrintable(QString::number(counts->delivered)));
        QCOMPARE(counts->dead, 7);
        const auto exact = queries.counts(200000);
        QVERIFY(exact.ok());
        QVERIFY(!exact->deliveredEstimated);
        QCOMPARE(exact->delivered, 150000);
    }

    void pagesVisitEveryRowOnceInOrder_data() {
        QTest::addColumn<bool>("newestFirst");
        QTest::addColumn<int>("status"); // -1: no status filter
        QTest::addColumn<int>("limit");
        QTest::newRow("newest, all") << true << -1 << 73;
        QTest::newRow("oldest, all") << false << -1 << 73;
        QTest::newRow("newest, dead") << true << int(core::Status::Dead) << 50;
        QTest::newRow("oldest, dead") << false << int(core::Status::Dead) << 50;
        QTest::newRow("newest, pending") << true << int(core::Status::Pending) << 1;
        QTest::newRow("oldest, delivered, one page")
            << false << int(core::Status::Delivered) << 1000;
    }

    // 1000 rows from 10 transactions: within each, created_at is equal and
    // only the id orders the rows; between them, created_at differs by
    // microseconds, below what a QDateTime cursor holds.
    void pagesVisitEveryRowOnceInOrder() {
        QFETCH(bool, newestFirst);
        QFETCH(int, status);
        QFETCH(int, limit);
        const char *states[] = {"pending", "delivered", "dead", "processing", "dead"};
        for (int t = 0; t < 10; ++t) {
            QVERIFY(m_db.transaction());
            QVERIFY(insertEvents(m_db, 60, QLatin1String(states[t % 5])));
            QVERIFY(insertEvents(m_db, 40, QLatin1String(states[(t + 2) % 5])));
            QVERIFY(m_db.commit());
        }
        PageRequest request;
        request.order = newestFirst ? SortOrder::NewestFirst : SortOrder::OldestFirst;
        request.limit = limit;
        QString where = QStringLiteral("TRUE");
        if (status >= 0) {
            request.filter.status = core::Status(status);
            where = QStringLiteral("status = '%1'").arg(core::statusName(core::Status(status)));
        }
        const QStringList expected = sqlIds(m_db, where, newestFirst).split(QLatin1Char(','));
        int pages = 0;
        const QStringList seen = walk(request, &pages);
        QCOMPARE(seen.size(), expected.size());
        QCOMPARE(seen, expected);
        QCOMPARE(QSet<QString>(seen.begin(), seen.end()).size(), seen.size());
        // The last page is known to be the last without an extra, empty page.
        QCOMPARE(pages, (int(expected.size()) + limit - 1) / limit);
    }

    // The row a cursor points at is purged between two pages: the next page
    // still starts right after it (nothing skipped).
    void cursorSurvivesItsRowBeingDeleted() {
        QVERIFY(insertEvents(m_db, 100, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 100, QStringLiteral("delivered")));
        for (const bool newestFirst : {true, false}) {
            const QStringList all =
                sqlIds(m_db, QStringLiteral("TRUE"), newestFirst).split(QLatin1Char(','));
            PageRequest request;
            request.order = newestFirst ? SortOrder::NewestFirst : SortOrder::OldestFirst;
            request.limit = 30;
            EventQueries queries(m_db);
            const auto first = queries.page(request);
            QVERIFY(first.ok());
            QVERIFY(first->next);
            QVERIFY(sqlExec(m_db, QStringLiteral("DELETE FROM outbox_events WHERE id = ?::uuid"),
                            {first->next->id.toString(QUuid::WithoutBraces)}));
            request.after = first->next;
            const auto second = queries.page(request);
            QVERIFY(second.ok());
            QCOMPARE(second->rows.size(), 30);
            // Rows of the same millisecond may repeat, but the row after the
            // deleted one is there and nothing after it is skipped.
            const QString after = all.at(30);
            QStringList secondIds;
            for (const core::OutboxEvent &e : second->rows)
                secondIds << e.id.toString(QUuid::WithoutBraces);
            const qsizetype at = secondIds.indexOf(after);
            QVERIFY(at >= 0);
            QCOMPARE(secondIds.mid(at), all.mid(30, 30 - at));
        }
    }

    void pageOfDeliveredUsesThePartialIndex_data() {
        QTest::addColumn<bool>("newestFirst");
        QTest::addColumn<int>("status");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("delivered, newest")
            << true << int(core::Status::Delivered)
            << QStringList{QStringLiteral("Index Scan Backward using outbox_events_delivered_idx")};
        QTest::newRow("delivered, oldest")
            << false << int(core::Status::Delivered)
            << QStringList{QStringLiteral("Index Scan using outbox_events_delivered_idx")};
        QTest::newRow("dead, newest")
            << true << int(core::Status::Dead)
            << QStringList{QStringLiteral("Index Scan Backward using outbox_events_dead_idx")};
        // No status: one ordered index scan per partial index, merged.
        QTest::newRow("no status, newest")
            << true << -1
            << QStringList{QStringLiteral("Merge Append"),
                           QStringLiteral("Index Scan Backward using outbox_events_claim_idx"),
                           QStringLiteral("Index Scan Backward using outbox_events_delivered_idx"),
                           QStringLiteral("Index Scan Backward using outbox_events_dead_idx")};
        QTest::newRow("no status, oldest")
            << false << -1
            << QStringList{QStringLiteral("Merge Append"),
                           QStringLiteral("Index Scan using outbox_events_claim_idx"),
                           QStringLiteral("Index Scan using outbox_events_delivered_idx"),
                           QStringLiteral("Index Scan using outbox_events_dead_idx")};
    }

    // With 200k delivered rows a page must come from the partial indexes in
    // key order, with the cursor as an index condition, never from a scan of
    // the table plus a sort.
    void pageOfDeliveredUsesThePartialIndex() {
        QFETCH(bool, newestFirst);
        QFETCH(int, status);
        QFETCH(QStringList, expected);
        QVERIFY(insertEvents(m_db, 200000, QStringLiteral("delivered")));
        QVERIFY(insertEvents(m_db, 500, QStringLiteral("dead")));
        QVERIFY(insertEvents(m_db, 500, QStringLiteral("pending")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        PageRequest request;
        request.order = newestFirst ? SortOrder::NewestFirst : SortOrder::OldestFirst;
        request.limit = 200;
        if (status >= 0)
            request.filter.status = core::Status(status);
        EventQueries queries(m_db);
        const auto first = queries.page(request);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QVERIFY(first->next);
        const QRegularExpression sortNode(QStringLiteral("(^|->\\s+)Sort(\\s|$)"),
                                          QRegularExpression::MultilineOption);
        for (const bool withCursor : {false, true}) {
            if (withCursor)
                request.after = first->next;
            const auto plan = queries.explainPage(request);
            QVERIFY2(plan.ok(), qPrintable(plan.errorMessage()));
            for (const QString &fragment : expected)
                QVERIFY2(plan->contains(fragment), qPrintable(plan.value()));
            QVERIFY2(!plan->contains(QLatin1String("Seq Scan")), qPrintable(plan.value()));
            QVERIFY2(!plan->contains(sortNode), qPrintable(plan.value()));
            if (withCursor)
                QVERIFY2(plan->contains(QLatin1String("Index Cond: (ROW(created_at, id)")),
                         qPrintable(plan.value()));
        }
    }

    void detailShowsTheHistory() {
        QVERIFY(insertEvents(m_db, 1, QStringLiteral("dead"), QStringLiteral("billing"),
                             QStringLiteral("invoice.paid"), 2, QStringLiteral("HTTP 500")));
        const QString id = sqlScalar(m_db, QStringLiteral("SELECT id FROM outbox_events"));
        const QUuid uuid = QUuid::fromString(id);
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, attempted_at,"
                           " worker_id, http_status, duration_ms, error) VALUES"
                           " (?::uuid, 1, timestamptz '2024-01-01 00:00:00+00',"
                           "  'aaaaaaaa-0000-4000-8000-000000000001', NULL, 30000, 'timeout'),"
                           " (?::uuid, 2, timestamptz '2024-01-01 00:01:00+00', NULL, 500,"
                           "  12, 'HTTP 500')"),
            {id, id}));
        const store::Actor actor{QStringLiteral("bob"), QStringLiteral("desk"),
                                 QStringLiteral("tst_queries")};
        store::OperatorStore ops(m_db, actor);
        EventFilter mine;
        mine.ids = {uuid};
        QVERIFY(ops.requeue(mine).ok());
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered',"
                                             " delivered_at = now(), attempts = 3")));
        const auto replayed = ops.replay(mine);
        QVERIFY(replayed.ok());
        QCOMPARE(replayed->created.size(), 1);

        EventQueries queries(m_db);
        const auto detail = queries.detail(uuid);
        QVERIFY2(detail.ok(), qPrintable(detail.errorMessage()));
        QVERIFY(detail->has_value());
        const store::EventDetail &d = detail->value();
        QCOMPARE(d.event.id, uuid);
        QCOMPARE(d.event.status, core::Status::Delivered);
        QCOMPARE(d.event.attempts, 3);
        QCOMPARE(d.event.payload, QByteArray("{\"n\": 1}"));
        QCOMPARE(d.event.lastError, std::optional<QString>(QStringLiteral("HTTP 500")));
        QVERIFY(d.event.deliveredAt.isValid());
        QVERIFY(!d.event.lockedUntil.isValid());
        QVERIFY(!d.event.replayOf);
        QVERIFY(d.serverTime.isValid());
        QCOMPARE(d.attempts.size(), 2);
        QCOMPARE(d.attempts.at(0).attempt, 1);
        QCOMPARE(d.attempts.at(0).at, QDateTime(QDate(2024, 1, 1), QTime(0, 0), Qt::UTC));
        QCOMPARE(d.attempts.at(0).workerId, std::optional<QUuid>(QUuid::fromString(QLatin1String(
                                                "aaaaaaaa-0000-4000-8000-000000000001"))));
        QVERIFY(!d.attempts.at(0).httpStatus);
        QCOMPARE(d.attempts.at(0).durationMs, 30000);
        QCOMPARE(d.attempts.at(1).httpStatus, std::optional<int>(500));
        QCOMPARE(d.attempts.at(1).error, QStringLiteral("HTTP 500"));
        QCOMPARE(d.audit.size(), 2);
        QCOMPARE(d.audit.at(0).action, QStringLiteral("requeue"));
        QCOMPARE(d.audit.at(1).action, QStringLiteral("replay"));
        QCOMPARE(d.audit.at(0).osUser, QStringLiteral("bob"));
        QCOMPARE(d.audit.at(0).host, QStringLiteral("desk"));
        QCOMPARE(d.audit.at(0).affected, 1);
        QCOMPARE(d.audit.at(0).filter, mine.describe());
        QCOMPARE(d.audit.at(0).dbUser, sqlScalar(m_db, QStringLiteral("SELECT session_user")));
        QCOMPARE(d.replays, QList<QUuid>{replayed->created.first()});

        // The copy points back at its original and shares the replay's audit.
        const auto copy = queries.detail(replayed->created.first());
        QVERIFY(copy.ok() && copy->has_value());
        QCOMPARE(copy->value().event.replayOf, std::optional<QUuid>(uuid));
        QCOMPARE(copy->value().event.status, core::Status::Pending);
        QCOMPARE(copy->value().audit.size(), 1);
        QCOMPARE(copy->value().audit.at(0).id, d.audit.at(1).id);

        const auto missing = queries.detail(QUuid::createUuid());
        QVERIFY(missing.ok());
        QVERIFY(!missing->has_value());
    }

    void errorGroupsFoldNumbersAndIds() {
        const auto dead = [&](const char *error, int times) {
            return insertEvents(m_db, times, QStringLiteral("dead"), QStringLiteral("billing"),
                                QStringLiteral("invoice.paid"), 10, QLatin1String(error));
        };
        QVERIFY(dead("timeout after 1234 ms on 10.0.0.1", 2));
        QVERIFY(dead("timeout after 99 ms on 10.0.0.7", 1));
        QVERIFY(dead("timeout after 5 ms on 192.168.1.20", 1));
        QVERIFY(dead("runner returned HTTP 503 for event 0191f3c4-6a2b-7c3d-9e4f-123456789abc", 1));
        QVERIFY(dead("runner returned HTTP 503 for event 0191f3c4-6a2b-7c3d-9e4f-000000000001", 1));
        // A different status is a different error (410 is permanent, 503 transient).
        QVERIFY(dead("runner returned HTTP 410 for event 0191f3c4-6a2b-7c3d-9e4f-000000000002", 1));
        QVERIFY(dead("connection refused", 1));
        QVERIFY(insertEvents(m_db, 5, QStringLiteral("pending"), QStringLiteral("billing"),
                             QStringLiteral("invoice.paid"), 2,
                             QStringLiteral("timeout after 1 ms on 10.0.0.1")));
        QVERIFY(insertEvents(m_db, 3, QStringLiteral("delivered")));
        // The newest error of each group is its example.
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET updated_at = now() +"
                                             " interval '1 minute' WHERE last_error ="
                                             " 'timeout after 99 ms on 10.0.0.7'")));

        EventQueries queries(m_db);
        const auto grouping = queries.errorGroups(EventFilter{});
        QVERIFY2(grouping.ok(), qPrintable(grouping.errorMessage()));
        const QList<store::ErrorGroup> *groups = &grouping->groups;
        QCOMPARE(grouping->kinds, 4);
        QCOMPARE(grouping->grouped, 8);
        QVERIFY(!grouping->sampled);
        QCOMPARE(groups->size(), 4);
        QCOMPARE(groups->at(0).signature, QStringLiteral("timeout after <n> ms on <n>"));
        QCOMPARE(groups->at(0).count, 4);
        QCOMPARE(groups->at(0).example, QStringLiteral("timeout after 99 ms on 10.0.0.7"));
        QVERIFY(groups->at(0).latest.isValid());
        QCOMPARE(groups->at(1).signature,
                 QStringLiteral("runner returned HTTP 503 for event <uuid>"));
        QCOMPARE(groups->at(1).count, 2);
        QStringList singles{groups->at(2).signature, groups->at(3).signature};
        singles.sort();
        QCOMPARE(singles,
                 QStringList({QStringLiteral("connection refused"),
                              QStringLiteral("runner returned HTTP 410 for event <uuid>")}));
        QCOMPARE(groups->at(2).count, 1);
        QCOMPARE(groups->at(3).count, 1);

        EventFilter pending;
        pending.status = core::Status::Pending;
        const auto pendingGroups = queries.errorGroups(pending);
        QVERIFY(pendingGroups.ok());
        QCOMPARE(pendingGroups->groups.size(), 1);
        QCOMPARE(pendingGroups->groups.at(0).count, 5);

        const auto top = queries.errorGroups(EventFilter{}, 1);
        QVERIFY(top.ok());
        QCOMPARE(top->groups.size(), 1);
        // The kinds are counted before the limit.
        QCOMPARE(top->kinds, 4);

        // A group's signature selects exactly its rows.
        EventFilter bySignature;
        bySignature.errorSignature = groups->at(0).signature;
        const auto matching = [&](const EventFilter &filter) {
            const store::SqlCondition condition =
                store::toSqlCondition(filter, QStringLiteral("e"));
            return testing::sqlScalar(
                m_db, QLatin1String("SELECT count(*) FROM outbox_events e WHERE ") + condition.sql,
                condition.values);
        };
        QCOMPARE(matching(bySignature), QStringLiteral("9")); // 4 dead + 5 pending
        bySignature.status = core::Status::Dead;
        QCOMPARE(matching(bySignature), QStringLiteral("4"));
    }

    void badRequestsAreRefused() {
        EventQueries queries(m_db);
        PageRequest request;
        request.limit = 0;
        QCOMPARE(queries.page(request).errorKind(), core::ErrorKind::Invalid);
        request.limit = 10;
        request.after = store::PageCursor{QDateTime(), QUuid()};
        QCOMPARE(queries.page(request).errorKind(), core::ErrorKind::Invalid);
        QCOMPARE(queries.errorGroups(EventFilter{}, 0).errorKind(), core::ErrorKind::Invalid);
        QCOMPARE(queries.counts(-1).errorKind(), core::ErrorKind::Invalid);
    }

    void privilegesFollowTheRoles_data() {
        QTest::addColumn<QString>("role"); // empty: the superuser
        QTest::addColumn<QString>("expected");
        QTest::newRow("superuser") << QString() << "read operate dispatch enqueue";
        QTest::newRow("viewer") << "outbox_viewer"
                                << "read";
        QTest::newRow("operator") << "outbox_operator"
                                  << "read operate";
        QTest::newRow("dispatcher") << "outbox_dispatcher"
                                    << "read dispatch";
        QTest::newRow("producer") << "outbox_producer"
                                  << "enqueue";
        QTest::newRow("nobody") << ""
                                << "";
    }

    void privilegesFollowTheRoles() {
        QFETCH(QString, role);
        QFETCH(QString, expected);
        const bool superuser = QByteArray(QTest::currentDataTag()) == "superuser";
        QSqlDatabase db = m_db;
        if (!superuser) {
            const QString login =
                QStringLiteral("q_%1_login").arg(role.isEmpty() ? QStringLiteral("nobody") : role);
            const QString grant = role.isEmpty() ? QString() : QStringLiteral(" IN ROLE ") + role;
            QVERIFY(
                sqlExec(m_db, QStringLiteral("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles"
                                             " WHERE rolname = '%1') THEN CREATE ROLE %1 LOGIN%2;"
                                             " END IF; END $$")
                                  .arg(login, grant)));
            auto info = core::ConnInfo::parse(m_pg->connInfo(m_dbName));
            QVERIFY(info.ok());
            info->user = login;
            const QString name = store::uniqueConnectionName(QStringLiteral("role"));
            m_extra << name;
            auto opened = store::openDatabase(info.value(), name);
            QVERIFY2(opened.ok(), qPrintable(opened.errorMessage()));
            db = opened.value();
        }
        EventQueries queries(db);
        const auto privileges = queries.privileges();
        QVERIFY2(privileges.ok(), qPrintable(privileges.errorMessage()));
        QStringList held;
        if (privileges->canRead)
            held << QStringLiteral("read");
        if (privileges->canOperate)
            held << QStringLiteral("operate");
        if (privileges->canDispatch)
            held << QStringLiteral("dispatch");
        if (privileges->canEnqueue)
            held << QStringLiteral("enqueue");
        QCOMPARE(held.join(QLatin1Char(' ')), expected);
    }

    void privilegesNeedTheSchema() {
        const QString empty = m_pg->freshDatabase();
        QVERIFY(!empty.isEmpty());
        const QString name = store::uniqueConnectionName(QStringLiteral("empty"));
        m_extra << name;
        QSqlDatabase db = m_pg->open(empty, name);
        QVERIFY(db.isOpen());
        EventQueries queries(db);
        const auto privileges = queries.privileges();
        QVERIFY(!privileges.ok());
        QVERIFY2(privileges.errorMessage().contains(QLatin1String("outboxctl migrate")),
                 qPrintable(privileges.errorMessage()));
    }

    void serverInfo() {
        EventQueries queries(m_db);
        const auto info = queries.serverInfo();
        QVERIFY2(info.ok(), qPrintable(info.errorMessage()));
        QCOMPARE(info->database, m_dbName);
        QCOMPARE(info->user, sqlScalar(m_db, QStringLiteral("SELECT current_user")));
        QCOMPARE(info->version, sqlScalar(m_db, QStringLiteral("SHOW server_version")));
        QVERIFY(!info->host.isEmpty());
        QCOMPARE(info->schemaVersion, store::Migrator::latestVersion());
    }
};

QTEST_GUILESS_MAIN(TestQueries)
#include "tst_queries.moc"
