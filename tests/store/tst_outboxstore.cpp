// OutboxStore: every state transition and its guard, fencing, leases, the
// dead sweep and concurrent claimers, against a real PostgreSQL.

#include "core/conninfo.h"
#include "core/uuidv7.h"
#include "store/database.h"
#include "store/outboxstore.h"
#include "support/pgtestcase.h"

#include <QSet>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QtTest>

#include <algorithm>
#include <memory>
#include <vector>

using namespace outbox;
using namespace std::chrono_literals;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

// A row written directly, in any state; times are relative to now().
struct Row {
    QUuid id = core::createUuidV7();
    QString nameSpace = QStringLiteral("ns");
    QString status = QStringLiteral("pending");
    int attempts = 0;
    qint64 dueInMs = 0;
    std::optional<qint64> leaseInMs; // processing rows: lease end
    QUuid lockedBy;
    qint64 createdOffsetMs = 0;
    QString createdBase; // absolute timestamptz text; empty = now()
    QString lastError;
};

bool insertRow(QSqlDatabase db, const Row &row) {
    const bool leased = row.leaseInMs.has_value();
    return sqlExec(
        db,
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts,"
            " next_attempt_at, locked_by, locked_until, created_at, updated_at, last_error)"
            " VALUES (?::uuid, ?, 'thing.happened', '{\"k\": 1}', ?, ?,"
            " now() + ?::bigint * interval '1 millisecond', ?::uuid,"
            " now() + ?::bigint * interval '1 millisecond',"
            " coalesce(?::timestamptz, now()) + ?::bigint * interval '1 millisecond', now(), ?)"),
        {row.id.toString(QUuid::WithoutBraces), row.nameSpace, row.status, row.attempts,
         row.dueInMs,
         leased ? QVariant(row.lockedBy.toString(QUuid::WithoutBraces))
                : QVariant(QMetaType::fromType<QString>()),
         leased ? QVariant(*row.leaseInMs) : QVariant(QMetaType::fromType<qlonglong>()),
         row.createdBase.isEmpty() ? QVariant(QMetaType::fromType<QString>())
                                   : QVariant(row.createdBase),
         row.createdOffsetMs,
         row.lastError.isNull() ? QVariant(QMetaType::fromType<QString>())
                                : QVariant(row.lastError)});
}

QString idText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

// The whole row as JSON, to prove that a refused change changed nothing.
QString snapshot(QSqlDatabase db, const QUuid &id) {
    return sqlScalar(
        db, QStringLiteral("SELECT row_to_json(e)::text FROM outbox_events e WHERE id = ?::uuid"),
        {idText(id)});
}

QString field(QSqlDatabase db, const QUuid &id, const QString &expression) {
    return sqlScalar(
        db,
        QStringLiteral("SELECT (%1)::text FROM outbox_events WHERE id = ?::uuid").arg(expression),
        {idText(id)});
}

QList<QUuid> ids(const QList<store::ClaimedEvent> &events) {
    QList<QUuid> result;
    for (const auto &event : events) {
        result << event.id;
    }
    return result;
}

store::ClaimOptions options(int batchSize = 100, int maxAttempts = 5, core::Millis lease = 30s,
                            const QString &nameSpace = {}) {
    store::ClaimOptions o;
    o.batchSize = batchSize;
    o.maxAttempts = maxAttempts;
    o.lease = lease;
    o.nameSpace = nameSpace;
    return o;
}

store::Nack nackOf(const store::ClaimedEvent &event, const QString &error,
                   core::Millis delay = 0ms) {
    store::Nack n;
    n.id = event.id;
    n.attempts = event.attempts;
    n.error = error;
    n.delay = delay;
    return n;
}

struct ClaimerOutcome {
    QList<QUuid> claimed;
    QString error;
};

} // namespace

class TestOutboxStore final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    QStringList m_databases;
    const QUuid m_workerA = QUuid::createUuid();
    const QUuid m_workerB = QUuid::createUuid();

    core::ConnInfo info(const QString &db) const {
        return core::ConnInfo::parse(m_pg->connInfo(db)).value();
    }

private Q_SLOTS:
    // Every test function gets its own migrated database.
    void init() {
        if (!openFreshDb())
            return;
        m_databases << m_dbName;
    }
    void cleanup() {
        m_db = QSqlDatabase();
        for (const QString &name : std::as_const(m_databases)) {
            m_pg->dropDatabase(name);
        }
        m_databases.clear();
    }

    void enqueueThroughTheStore() {
        store::OutboxStore store(m_db);
        store::EnqueueRequest request;
        request.nameSpace = QStringLiteral("billing");
        request.topic = QStringLiteral("invoice.paid");
        request.payload =
            QByteArrayLiteral("{\"amount\": 12.5, \"text\": \"a 'quoted' \\\"value\\\" \\\\ ?\"}");
        request.tenantId =
            QUuid::fromString(QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2"));
        request.dedupeKey = QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2/inv-1");
        request.aggregateType = QStringLiteral("invoice");
        request.aggregateId = QStringLiteral("inv-1");
        const auto first = store.enqueue(request);
        QVERIFY2(first.ok(), qPrintable(first.errorMessage()));
        QVERIFY(first->inserted);
        QCOMPARE(core::uuidV7Time(first->id).isValid(), true);
        const auto again = store.enqueue(request);
        QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
        QVERIFY(!again->inserted);
        QCOMPARE(again->id, first->id);

        QCOMPARE(
            field(m_db, first->id,
                  QStringLiteral(
                      "concat_ws('|', namespace, topic, tenant_id, dedupe_key, aggregate_type, "
                      "aggregate_id, payload->>'text', payload->>'amount')")),
            QStringLiteral("billing|invoice.paid|7d444840-9dc0-11d1-b245-5ffdce74fad2|"
                           "7d444840-9dc0-11d1-b245-5ffdce74fad2/inv-1|invoice|inv-1|"
                           "a 'quoted' \"value\" \\ ?|12.5"));

        // Inside the caller's transaction: gone with its rollback.
        QVERIFY(m_db.transaction());
        store::EnqueueRequest other;
        other.nameSpace = QStringLiteral("billing");
        other.topic = QStringLiteral("invoice.voided");
        other.payload = QByteArrayLiteral("[1, 2]");
        const auto inTx = store.enqueue(other);
        QVERIFY2(inTx.ok() && inTx->inserted, qPrintable(inTx.errorMessage()));
        QVERIFY(m_db.rollback());
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("1"));

        // Bad input is refused with the database's explanation.
        other.payload = QByteArrayLiteral("{not json");
        const auto bad = store.enqueue(other);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(bad.errorMessage().contains(QLatin1String("json")),
                 qPrintable(bad.errorMessage()));
        other.payload = QByteArrayLiteral("{}");
        other.topic = QStringLiteral(" ");
        const auto blank = store.enqueue(other);
        QVERIFY(!blank.ok());
        QCOMPARE(blank.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(blank.errorMessage().contains(QLatin1String("topic must not be empty")),
                 qPrintable(blank.errorMessage()));
        // The store still works after a failed statement.
        other.topic = QStringLiteral("invoice.voided");
        QVERIFY(store.enqueue(other).ok());
    }

    void claimMovesPendingToProcessing() {
        store::OutboxStore store(m_db);
        store::EnqueueRequest full;
        full.nameSpace = QStringLiteral("billing");
        full.topic = QStringLiteral("invoice.paid");
        full.payload = QByteArrayLiteral("{\"n\": 1}");
        full.tenantId = QUuid::fromString(QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2"));
        full.dedupeKey = QStringLiteral("7d444840-9dc0-11d1-b245-5ffdce74fad2/k");
        full.aggregateType = QStringLiteral("invoice");
        full.aggregateId = QStringLiteral("42");
        const auto a = store.enqueue(full);
        store::EnqueueRequest bare;
        bare.nameSpace = QStringLiteral("billing");
        bare.topic = QStringLiteral("invoice.voided");
        bare.payload = QByteArrayLiteral("\"just a string\"");
        const auto b = store.enqueue(bare);
        QVERIFY(a.ok() && b.ok());

        const auto claimed = store.claimBatch(m_workerA, options(10, 5, 30s));
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QCOMPARE(claimed->size(), 2);
        const store::ClaimedEvent &first = claimed->at(0);
        QCOMPARE(first.id, a->id);
        QCOMPARE(first.nameSpace, full.nameSpace);
        QCOMPARE(first.topic, full.topic);
        QCOMPARE(first.tenantId, full.tenantId);
        QCOMPARE(first.dedupeKey, full.dedupeKey);
        QCOMPARE(first.aggregateType, full.aggregateType);
        QCOMPARE(first.aggregateId, full.aggregateId);
        QCOMPARE(first.payload, QByteArrayLiteral("{\"n\": 1}"));
        QCOMPARE(first.attempts, 1);
        const store::ClaimedEvent &second = claimed->at(1);
        QCOMPARE(second.id, b->id);
        QVERIFY(!second.tenantId && !second.dedupeKey && !second.aggregateType &&
                !second.aggregateId);
        QCOMPARE(second.payload, QByteArrayLiteral("\"just a string\""));

        for (const auto &event : claimed.value()) {
            QCOMPARE(
                field(
                    m_db, event.id,
                    QStringLiteral(
                        "concat_ws('|', status, attempts, locked_by, locked_until - updated_at)")),
                QStringLiteral("processing|1|%1|00:00:30").arg(idText(m_workerA)));
            // Times come back as the right instants, whatever the time zones.
            QCOMPARE(event.lockedUntil.toMSecsSinceEpoch(),
                     field(m_db, event.id,
                           QStringLiteral("round(extract(epoch FROM locked_until) * 1000)::bigint"))
                         .toLongLong());
            QCOMPARE(event.createdAt.toMSecsSinceEpoch(),
                     field(m_db, event.id,
                           QStringLiteral("round(extract(epoch FROM created_at) * 1000)::bigint"))
                         .toLongLong());
        }

        // Leased rows are not claimable again, by anyone.
        const auto again = store.claimBatch(m_workerB, options());
        QVERIFY2(again.ok(), qPrintable(again.errorMessage()));
        QVERIFY(again->isEmpty());
    }

    void claimOrderAndBatches() {
        // created_at decides, id breaks ties; insertion order is irrelevant.
        const QUuid low = QUuid::fromString(QStringLiteral("00000000-0000-7000-8000-000000000001"));
        const QUuid high =
            QUuid::fromString(QStringLiteral("ffffffff-0000-7000-8000-000000000001"));
        QList<Row> rows(7);
        for (Row &row : rows) {
            row.createdBase = QStringLiteral("2030-01-01 12:00:00+00");
        }
        rows[0].createdOffsetMs = -1000;
        rows[1].createdOffsetMs = -5000;
        rows[2].createdOffsetMs = -3000;
        rows[2].id = high;
        rows[3].createdOffsetMs = -3000;
        rows[3].id = low;
        rows[4].createdOffsetMs = -4000;
        rows[5].createdOffsetMs = -2000;
        rows[6].createdOffsetMs = -6000;
        for (const Row &row : rows) {
            QVERIFY(insertRow(m_db, row));
        }
        const QList<QUuid> expected{rows[6].id, rows[1].id, rows[4].id, low,
                                    high,       rows[5].id, rows[0].id};

        store::OutboxStore store(m_db);
        QList<QUuid> order;
        for (int batch = 0; batch < 10; ++batch) {
            const auto claimed = store.claimBatch(m_workerA, options(3));
            QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
            if (claimed->isEmpty()) {
                break;
            }
            QVERIFY(claimed->size() <= 3);
            order << ids(claimed.value());
        }
        QCOMPARE(order, expected);
    }

    void claimSkipsIneligibleRows() {
        Row due;
        due.createdOffsetMs = -10;
        Row notDue;
        notDue.dueInMs = 3600 * 1000;
        Row leased;
        leased.status = QStringLiteral("processing");
        leased.attempts = 1;
        leased.lockedBy = m_workerB;
        leased.leaseInMs = 60 * 1000;
        Row expired = leased;
        expired.id = core::createUuidV7();
        expired.leaseInMs = -1000;
        Row delivered;
        delivered.status = QStringLiteral("delivered");
        Row dead;
        dead.status = QStringLiteral("dead");
        Row exhausted;
        exhausted.attempts = 3;
        Row exhaustedLease = expired;
        exhaustedLease.id = core::createUuidV7();
        exhaustedLease.attempts = 3;
        Row lastChance;
        lastChance.attempts = 2;
        for (const Row &row : {due, notDue, leased, expired, delivered, dead, exhausted,
                               exhaustedLease, lastChance}) {
            QVERIFY(insertRow(m_db, row));
        }
        const QString untouched = snapshot(m_db, leased.id) + snapshot(m_db, notDue.id) +
                                  snapshot(m_db, exhausted.id) + snapshot(m_db, exhaustedLease.id) +
                                  snapshot(m_db, delivered.id) + snapshot(m_db, dead.id);

        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options(100, /*maxAttempts=*/3));
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QList<QUuid> got = ids(claimed.value());
        std::sort(got.begin(), got.end());
        QList<QUuid> expected{due.id, expired.id, lastChance.id};
        std::sort(expected.begin(), expected.end());
        QCOMPARE(got, expected);
        for (const auto &event : claimed.value()) {
            const int before = event.id == expired.id ? 1 : event.id == lastChance.id ? 2 : 0;
            QCOMPARE(event.attempts, before + 1);
        }
        QCOMPARE(snapshot(m_db, leased.id) + snapshot(m_db, notDue.id) +
                     snapshot(m_db, exhausted.id) + snapshot(m_db, exhaustedLease.id) +
                     snapshot(m_db, delivered.id) + snapshot(m_db, dead.id),
                 untouched);
    }

    void claimFiltersByNamespace() {
        for (const char *ns : {"alpha", "beta", "alpha", "beta", "gamma"}) {
            Row row;
            row.nameSpace = QString::fromLatin1(ns);
            QVERIFY(insertRow(m_db, row));
        }
        store::OutboxStore store(m_db);
        const auto alpha =
            store.claimBatch(m_workerA, options(10, 5, 30s, QStringLiteral("alpha")));
        QVERIFY2(alpha.ok(), qPrintable(alpha.errorMessage()));
        QCOMPARE(alpha->size(), 2);
        for (const auto &event : alpha.value()) {
            QCOMPARE(event.nameSpace, QStringLiteral("alpha"));
        }
        const auto none = store.claimBatch(m_workerA, options(10, 5, 30s, QStringLiteral("delta")));
        QVERIFY(none.ok() && none->isEmpty());
        const auto rest = store.claimBatch(m_workerA, options(10));
        QVERIFY(rest.ok());
        QCOMPARE(rest->size(), 3);
    }

    void claimRefusesBadOptions_data() {
        QTest::addColumn<int>("batchSize");
        QTest::addColumn<int>("maxAttempts");
        QTest::addColumn<qint64>("leaseMs");
        QTest::newRow("batch 0") << 0 << 5 << qint64(1000);
        QTest::newRow("max attempts 0") << 10 << 0 << qint64(1000);
        QTest::newRow("lease 0") << 10 << 5 << qint64(0);
    }

    void claimRefusesBadOptions() {
        QFETCH(int, batchSize);
        QFETCH(int, maxAttempts);
        QFETCH(qint64, leaseMs);
        QVERIFY(insertRow(m_db, Row{}));
        store::OutboxStore store(m_db);
        const auto claimed =
            store.claimBatch(m_workerA, options(batchSize, maxAttempts, core::Millis(leaseMs)));
        QVERIFY(!claimed.ok());
        QCOMPARE(claimed.errorKind(), core::ErrorKind::Invalid);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT status FROM outbox_events")),
                 QStringLiteral("pending"));
    }

    void ackDelivers() {
        Row row;
        row.lastError = QStringLiteral("HTTP 503 from the previous attempt");
        row.attempts = 1;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 1);
        const auto acked = store.ack(m_workerA, {{row.id, claimed->at(0).attempts}});
        QVERIFY2(acked.ok(), qPrintable(acked.errorMessage()));
        QCOMPARE(acked->applied, 1);
        QVERIFY(acked->fencedOut.isEmpty());
        QCOMPARE(
            field(m_db, row.id,
                  QStringLiteral(
                      "concat_ws('|', status, attempts, locked_by IS NULL, locked_until IS NULL, "
                      "delivered_at = updated_at, last_error)")),
            QStringLiteral("delivered|2|t|t|t|HTTP 503 from the previous attempt"));

        // A delivered row is terminal: a repeated ack is fenced out.
        const QString before = snapshot(m_db, row.id);
        const auto twice = store.ack(m_workerA, {{row.id, claimed->at(0).attempts}});
        QVERIFY(twice.ok());
        QCOMPARE(twice->applied, 0);
        QCOMPARE(twice->fencedOut, QList<QUuid>{row.id});
        QCOMPARE(snapshot(m_db, row.id), before);
        QVERIFY(store.claimBatch(m_workerA, options())->isEmpty());

        const auto empty = store.ack(m_workerA, {});
        QVERIFY(empty.ok() && empty->applied == 0 && empty->fencedOut.isEmpty());
    }

    // A fenced-out ack, nack or release changes nothing at all.
    void fencing_data() {
        QTest::addColumn<QString>("operation");
        QTest::addColumn<QString>("mismatch");
        for (const char *operation : {"ack", "nack", "release"}) {
            for (const char *mismatch :
                 {"other worker", "stale attempts", "newer attempts", "not processing"}) {
                QTest::addRow("%s, %s", operation, mismatch)
                    << QString::fromLatin1(operation) << QString::fromLatin1(mismatch);
            }
        }
    }

    void fencing() {
        QFETCH(QString, operation);
        QFETCH(QString, mismatch);
        Row good;
        Row bad;
        QVERIFY(insertRow(m_db, good));
        QVERIFY(insertRow(m_db, bad));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 2);
        int badAttempts = 1;
        QUuid worker = m_workerA;
        if (mismatch == QLatin1String("other worker")) {
            worker = m_workerB;
        } else if (mismatch == QLatin1String("stale attempts")) {
            QVERIFY(sqlExec(
                m_db, QStringLiteral("UPDATE outbox_events SET attempts = 2 WHERE id = ?::uuid"),
                {idText(bad.id)}));
        } else if (mismatch == QLatin1String("newer attempts")) {
            badAttempts = 2;
        } else {
            QVERIFY(sqlExec(
                m_db,
                QStringLiteral("UPDATE outbox_events SET status = 'pending', locked_by = NULL, "
                               "locked_until = NULL WHERE id = ?::uuid"),
                {idText(bad.id)}));
        }
        const QString before = snapshot(m_db, bad.id);
        // The good row is in the same batch when the worker matches.
        const bool sameWorker = worker == m_workerA;

        core::Result<store::FencedResult> result = store::FencedResult{};
        if (operation == QLatin1String("ack")) {
            QList<store::Ack> acks{{bad.id, badAttempts}};
            if (sameWorker) {
                acks.prepend({good.id, 1});
            }
            result = store.ack(worker, acks);
        } else if (operation == QLatin1String("nack")) {
            store::Nack n;
            n.id = bad.id;
            n.attempts = badAttempts;
            n.error = QStringLiteral("boom");
            QList<store::Nack> nacks{n};
            if (sameWorker) {
                n.id = good.id;
                n.attempts = 1;
                nacks.prepend(n);
            }
            result = store.nack(worker, nacks, 5);
        } else {
            QList<store::Release> releases{{bad.id, badAttempts, false}};
            if (sameWorker) {
                releases.prepend({good.id, 1, false});
            }
            result = store.release(worker, releases, 5);
        }
        QVERIFY2(result.ok(), qPrintable(result.errorMessage()));
        QCOMPARE(result->applied, sameWorker ? 1 : 0);
        QCOMPARE(result->fencedOut, QList<QUuid>{bad.id});
        QCOMPARE(snapshot(m_db, bad.id), before);
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral(
                               "SELECT count(*) FROM outbox_attempts WHERE event_id = ?::uuid"),
                           {idText(bad.id)}),
                 QStringLiteral("0"));
        if (sameWorker) {
            QVERIFY(field(m_db, good.id, QStringLiteral("status")) != QLatin1String("processing"));
        }
    }

    void nackSchedulesRetry() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 1);

        const QString before = sqlScalar(m_db, QStringLiteral("SELECT clock_timestamp()::text"));
        store::Nack n = nackOf(claimed->at(0), QStringLiteral("HTTP 503: upstream busy"), 5000ms);
        n.httpStatus = 503;
        n.duration = 123ms;
        const auto nacked = store.nack(m_workerA, {n}, 5);
        QVERIFY2(nacked.ok(), qPrintable(nacked.errorMessage()));
        QCOMPARE(nacked->applied, 1);
        const QString after = sqlScalar(m_db, QStringLiteral("SELECT clock_timestamp()::text"));

        QCOMPARE(
            field(m_db, row.id,
                  QStringLiteral(
                      "concat_ws('|', status, attempts, locked_by IS NULL, locked_until IS NULL, "
                      "last_error, delivered_at IS NULL)")),
            QStringLiteral("pending|1|t|t|HTTP 503: upstream busy|t"));
        // next_attempt_at = (the statement's now()) + delay, bracketed by the
        // server clock read before and after.
        QCOMPARE(
            sqlScalar(m_db,
                      QStringLiteral(
                          "SELECT next_attempt_at BETWEEN ?::timestamptz + interval '5 s' AND "
                          "?::timestamptz + interval '5 s' FROM outbox_events WHERE id = ?::uuid"),
                      {before, after, idText(row.id)}),
            QStringLiteral("true"));
        QCOMPARE(
            sqlScalar(m_db,
                      QStringLiteral(
                          "SELECT concat_ws('|', attempt, worker_id, http_status, duration_ms, "
                          "error) FROM outbox_attempts WHERE event_id = ?::uuid"),
                      {idText(row.id)}),
            QStringLiteral("1|%1|503|123|HTTP 503: upstream busy").arg(idText(m_workerA)));

        // Not claimable until due; then claimable again with attempts 2.
        QVERIFY(store.claimBatch(m_workerA, options())->isEmpty());
        const auto due = store.timeUntilNextDue();
        QVERIFY(due.ok() && due->has_value());
        QVERIFY2(due->value() > 0ms && due->value() <= 5000ms,
                 qPrintable(QString::number(due->value().count())));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now()")));
        const auto retried = store.claimBatch(m_workerA, options());
        QVERIFY(retried.ok() && retried->size() == 1);
        QCOMPARE(retried->at(0).attempts, 2);
    }

    void nackAtMaxAttemptsIsDead() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const int maxAttempts = 2;
        for (int attempt = 1; attempt <= maxAttempts; ++attempt) {
            QVERIFY(
                sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now()")));
            const auto claimed = store.claimBatch(m_workerA, options(10, maxAttempts));
            QVERIFY2(claimed.ok() && claimed->size() == 1, qPrintable(claimed.errorMessage()));
            QCOMPARE(claimed->at(0).attempts, attempt);
            const auto nacked = store.nack(
                m_workerA,
                {nackOf(claimed->at(0), QStringLiteral("failure %1").arg(attempt), 1000ms)},
                maxAttempts);
            QVERIFY(nacked.ok() && nacked->applied == 1);
            QCOMPARE(field(m_db, row.id, QStringLiteral("status")),
                     attempt < maxAttempts ? QStringLiteral("pending") : QStringLiteral("dead"));
        }
        QCOMPARE(field(m_db, row.id,
                       QStringLiteral("concat_ws('|', attempts, last_error, locked_by IS NULL)")),
                 QStringLiteral("2|failure 2|t"));
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral(
                                "SELECT string_agg(attempt || ':' || error, ',' ORDER BY id) FROM "
                                "outbox_attempts")),
            QStringLiteral("1:failure 1,2:failure 2"));
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at = now()")));
        QVERIFY(store.claimBatch(m_workerA, options(10, 100))
                    ->isEmpty()); // dead is terminal for dispatchers
    }

    void permanentNackIsDead() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options(10, 10));
        QVERIFY(claimed.ok() && claimed->size() == 1);
        store::Nack n = nackOf(claimed->at(0), QStringLiteral("HTTP 410 Gone"), 60000ms);
        n.permanent = true;
        n.httpStatus = 410;
        const auto nacked = store.nack(m_workerA, {n}, 10);
        QVERIFY(nacked.ok() && nacked->applied == 1);
        QCOMPARE(field(m_db, row.id,
                       QStringLiteral("concat_ws('|', status, attempts, last_error, "
                                      "next_attempt_at <= now())")),
                 QStringLiteral("dead|1|HTTP 410 Gone|t"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT http_status FROM outbox_attempts")),
                 QStringLiteral("410"));
    }

    // Arbitrary runner output goes into last_error: quotes, JSON syntax,
    // NUL bytes and megabytes of it.
    void nackStoresAnyErrorText() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 1);
        const QString tricky = QStringLiteral("it's \"quoted\" \\ {\"a\": [1]} $1 ? ; -- ünï ✓ ");
        QString error = tricky + QChar(0) + QString(5000, QLatin1Char('x'));
        const auto nacked = store.nack(m_workerA, {nackOf(claimed->at(0), error, 10ms)}, 5);
        QVERIFY2(nacked.ok() && nacked->applied == 1, qPrintable(nacked.errorMessage()));
        const QString stored = field(m_db, row.id, QStringLiteral("last_error"));
        QVERIFY2(stored.startsWith(tricky + QLatin1Char('x')), qPrintable(stored.left(80)));
        QVERIFY(stored.size() <= 2001);
        QVERIFY(stored.size() >= 2000);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT error FROM outbox_attempts")), stored);
    }

    void releaseHandsBack() {
        Row unsent;
        Row sent;
        sent.createdOffsetMs = 1;
        QVERIFY(insertRow(m_db, unsent));
        QVERIFY(insertRow(m_db, sent));
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 2);
        const auto released = store.release(
            m_workerA, {{unsent.id, 1, /*attemptMade=*/false}, {sent.id, 1, true}}, 5);
        QVERIFY2(released.ok(), qPrintable(released.errorMessage()));
        QCOMPARE(released->applied, 2);
        QVERIFY(released->madeDead.isEmpty());
        const QString state = QStringLiteral(
            "concat_ws('|', status, attempts, locked_by IS NULL, locked_until IS NULL, "
            "next_attempt_at <= now())");
        QCOMPARE(field(m_db, unsent.id, state), QStringLiteral("pending|0|t|t|t"));
        QCOMPARE(field(m_db, sent.id, state), QStringLiteral("pending|1|t|t|t"));
        // Another worker can take them at once.
        const auto reclaimed = store.claimBatch(m_workerB, options());
        QVERIFY(reclaimed.ok());
        QCOMPARE(ids(reclaimed.value()), (QList<QUuid>{unsent.id, sent.id}));
        QCOMPARE(reclaimed->at(0).attempts, 1);
        QCOMPARE(reclaimed->at(1).attempts, 2);
    }

    // A request cut off by the shutdown at the last allowed attempt: left
    // pending it would never be claimed again (attempts is not below the
    // limit), so the release ends it as the dead sweep would. Without a
    // request the attempt is given back and the row stays alive.
    void releaseAtTheLastAttemptEndsDead() {
        Row cutOff;
        cutOff.attempts = 2;
        cutOff.lastError = QStringLiteral("HTTP 503");
        Row unsent = cutOff;
        unsent.id = core::createUuidV7();
        unsent.createdOffsetMs = 1;
        Row earlier;
        earlier.attempts = 1;
        earlier.createdOffsetMs = 2;
        for (const Row &row : {cutOff, unsent, earlier}) {
            QVERIFY(insertRow(m_db, row));
        }
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(m_workerA, options());
        QVERIFY(claimed.ok() && claimed->size() == 3);
        QCOMPARE(claimed->at(0).attempts, 3);
        const auto released = store.release(
            m_workerA,
            {{cutOff.id, 3, /*attemptMade=*/true}, {unsent.id, 3, false}, {earlier.id, 2, true}},
            3);
        QVERIFY2(released.ok(), qPrintable(released.errorMessage()));
        QCOMPARE(released->applied, 3);
        QCOMPARE(released->madeDead, QList<QUuid>{cutOff.id});
        const QString state = QStringLiteral(
            "concat_ws('|', status, attempts, locked_by IS NULL, locked_until IS NULL)");
        QCOMPARE(field(m_db, cutOff.id, state), QStringLiteral("dead|3|t|t"));
        QCOMPARE(field(m_db, cutOff.id, QStringLiteral("last_error")),
                 QStringLiteral("dead: reached max attempts (3); the last attempt was cut off by "
                                "a shutdown before its outcome was known; previous error: HTTP "
                                "503"));
        QCOMPARE(field(m_db, unsent.id, state), QStringLiteral("pending|2|t|t"));
        QCOMPARE(field(m_db, unsent.id, QStringLiteral("last_error")), QStringLiteral("HTTP 503"));
        QCOMPARE(field(m_db, earlier.id, state), QStringLiteral("pending|2|t|t"));
        QCOMPARE(store.release(m_workerA, {}, 0).errorKind(), core::ErrorKind::Invalid);
    }

    // A worker that stalls past its lease loses the row: another worker
    // reclaims it, and the stalled worker's late ack/nack are fenced out.
    void expiredLeaseIsReclaimed() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto claimedA = store.claimBatch(m_workerA, options(10, 5, 1000ms));
        QVERIFY(claimedA.ok() && claimedA->size() == 1);
        QCOMPARE(claimedA->at(0).attempts, 1);

        QList<store::ClaimedEvent> claimedB;
        // Idempotent once it succeeded: QTRY_* evaluates its condition again.
        const auto claimB = [&]() {
            if (!claimedB.isEmpty()) {
                return true;
            }
            const auto result = store.claimBatch(m_workerB, options(10, 5, 30s));
            claimedB = result.ok() ? result.value() : QList<store::ClaimedEvent>{};
            return result.ok() && !claimedB.isEmpty();
        };
        // While the lease runs nobody else gets the row. (Checked only when
        // the lease surely still runs: a loaded machine may be slow here.)
        if (field(m_db, row.id,
                  QStringLiteral("locked_until > clock_timestamp() + interval '300 ms'")) ==
            QLatin1String("true")) {
            QVERIFY(!claimB());
        }
        QTRY_VERIFY_WITH_TIMEOUT(claimB(), 30000);
        QCOMPARE(claimedB.size(), 1);
        QCOMPARE(claimedB.at(0).id, row.id);
        QCOMPARE(claimedB.at(0).attempts, 2);
        QCOMPARE(field(m_db, row.id, QStringLiteral("locked_by")), idText(m_workerB));

        const QString before = snapshot(m_db, row.id);
        const auto lateAck = store.ack(m_workerA, {{row.id, claimedA->at(0).attempts}});
        QVERIFY(lateAck.ok());
        QCOMPARE(lateAck->applied, 0);
        QCOMPARE(lateAck->fencedOut, QList<QUuid>{row.id});
        const auto lateNack =
            store.nack(m_workerA, {nackOf(claimedA->at(0), QStringLiteral("late"))}, 5);
        QVERIFY(lateNack.ok());
        QCOMPARE(lateNack->fencedOut, QList<QUuid>{row.id});
        QCOMPARE(snapshot(m_db, row.id), before);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_attempts")),
                 QStringLiteral("0"));

        const auto ackB = store.ack(m_workerB, {{row.id, claimedB.at(0).attempts}});
        QVERIFY(ackB.ok() && ackB->applied == 1);
        QCOMPARE(field(m_db, row.id, QStringLiteral("status")), QStringLiteral("delivered"));
    }

    // The same worker reclaiming its own expired lease gets a new attempt
    // number; an ack carrying the old one is fenced.
    void staleAttemptsOfTheSameWorkerAreFenced() {
        Row row;
        QVERIFY(insertRow(m_db, row));
        store::OutboxStore store(m_db);
        const auto first = store.claimBatch(m_workerA, options());
        QVERIFY(first.ok() && first->size() == 1);
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral("UPDATE outbox_events SET locked_until = now() - interval '1 s'")));
        const auto second = store.claimBatch(m_workerA, options());
        QVERIFY(second.ok() && second->size() == 1);
        QCOMPARE(second->at(0).attempts, 2);
        const auto stale = store.ack(m_workerA, {{row.id, 1}});
        QVERIFY(stale.ok());
        QCOMPARE(stale->fencedOut, QList<QUuid>{row.id});
        QCOMPARE(field(m_db, row.id, QStringLiteral("status")), QStringLiteral("processing"));
        const auto current = store.ack(m_workerA, {{row.id, 2}});
        QVERIFY(current.ok() && current->applied == 1);
    }

    void deadSweep() {
        const int maxAttempts = 3;
        Row exhaustedPending;
        exhaustedPending.attempts = 3;
        exhaustedPending.lastError = QStringLiteral("HTTP 500");
        Row exhaustedNotDue = exhaustedPending;
        exhaustedNotDue.id = core::createUuidV7();
        exhaustedNotDue.dueInMs = 3600 * 1000;
        exhaustedNotDue.lastError.clear();
        // The dispatcher crashed during the last attempt: no ack, no nack.
        Row crashedOnLast;
        crashedOnLast.status = QStringLiteral("processing");
        crashedOnLast.attempts = 3;
        crashedOnLast.lockedBy = m_workerA;
        crashedOnLast.leaseInMs = -1000;
        crashedOnLast.lastError = QStringLiteral("timeout");
        Row stillRunning = crashedOnLast;
        stillRunning.id = core::createUuidV7();
        stillRunning.leaseInMs = 60000;
        Row young;
        young.attempts = 2;
        Row otherNamespace = exhaustedPending;
        otherNamespace.id = core::createUuidV7();
        otherNamespace.nameSpace = QStringLiteral("other");
        Row delivered;
        delivered.status = QStringLiteral("delivered");
        delivered.attempts = 7;
        for (const Row &row : {exhaustedPending, exhaustedNotDue, crashedOnLast, stillRunning,
                               young, otherNamespace, delivered}) {
            QVERIFY(insertRow(m_db, row));
        }
        const QString untouched = snapshot(m_db, stillRunning.id) + snapshot(m_db, young.id) +
                                  snapshot(m_db, otherNamespace.id) + snapshot(m_db, delivered.id);

        store::OutboxStore store(m_db);
        // The frequent sweep: only the expired last lease.
        const auto leases =
            store.deadSweep(maxAttempts, QStringLiteral("ns"), store::SweepScope::ExpiredLeases);
        QVERIFY2(leases.ok(), qPrintable(leases.errorMessage()));
        QCOMPARE(leases.value(), qint64(1));
        QCOMPARE(field(m_db, crashedOnLast.id, QStringLiteral("status")), QStringLiteral("dead"));
        QCOMPARE(field(m_db, exhaustedPending.id, QStringLiteral("status")),
                 QStringLiteral("pending"));
        QCOMPARE(field(m_db, exhaustedNotDue.id, QStringLiteral("status")),
                 QStringLiteral("pending"));
        // The full sweep: the exhausted pending rows too.
        const auto swept = store.deadSweep(maxAttempts, QStringLiteral("ns"));
        QVERIFY2(swept.ok(), qPrintable(swept.errorMessage()));
        QCOMPARE(swept.value(), qint64(2));
        const QString state =
            QStringLiteral("concat_ws('|', status, locked_by IS NULL, locked_until IS NULL)");
        for (const QUuid &id : {exhaustedPending.id, exhaustedNotDue.id, crashedOnLast.id}) {
            QCOMPARE(field(m_db, id, state), QStringLiteral("dead|t|t"));
        }
        QCOMPARE(field(m_db, exhaustedPending.id, QStringLiteral("last_error")),
                 QStringLiteral("dead: reached max attempts (3); previous error: HTTP 500"));
        QCOMPARE(field(m_db, exhaustedNotDue.id, QStringLiteral("last_error")),
                 QStringLiteral("dead: reached max attempts (3)"));
        QCOMPARE(
            field(m_db, crashedOnLast.id, QStringLiteral("last_error")),
            QStringLiteral(
                "dead: reached max attempts (3); the lease of the last attempt expired without an "
                "ack or nack; previous error: timeout"));
        QCOMPARE(snapshot(m_db, stillRunning.id) + snapshot(m_db, young.id) +
                     snapshot(m_db, otherNamespace.id) + snapshot(m_db, delivered.id),
                 untouched);

        // Without a namespace every namespace is swept; again is a no-op.
        const auto all = store.deadSweep(maxAttempts);
        QVERIFY(all.ok());
        QCOMPARE(all.value(), qint64(1));
        QCOMPARE(field(m_db, otherNamespace.id, QStringLiteral("status")), QStringLiteral("dead"));
        QCOMPARE(store.deadSweep(maxAttempts).value(), qint64(0));
        QCOMPARE(store.deadSweep(0).errorKind(), core::ErrorKind::Invalid);
    }

    // The dispatcher sweeps every few seconds with a generic plan: with a
    // large backlog that sweep must stay a look at the lease index, never a
    // pass over the pending rows or the table.
    void frequentSweepReadsOnlyTheLeaseIndex() {
        QVERIFY(
            sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload)"
                                         " SELECT outbox_uuid_v7(), 'ns', 't', '{}'::jsonb"
                                         " FROM generate_series(1, 50000)")));
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        QVERIFY(sqlExec(m_db, QStringLiteral("SET plan_cache_mode = force_generic_plan")));
        const auto plan = [&](bool byNamespace, store::SweepScope scope) {
            QString sql = store::OutboxStore::deadSweepStatement(byNamespace, scope);
            for (int n = 1; sql.contains(QLatin1Char('?')); ++n)
                sql.replace(sql.indexOf(QLatin1Char('?')), 1, QStringLiteral("$%1").arg(n));
            const QString name =
                QStringLiteral("sweep_%1_%2").arg(int(byNamespace)).arg(int(scope));
            if (!sqlExec(m_db, QStringLiteral("PREPARE %1 AS %2").arg(name, sql)))
                return QString();
            QSqlQuery explain(m_db);
            if (!explain.exec(QStringLiteral("EXPLAIN EXECUTE %1(3, 3%2)")
                                  .arg(name, byNamespace ? QStringLiteral(", 'ns'") : QString())))
                return explain.lastError().text();
            QStringList lines;
            while (explain.next())
                lines << explain.value(0).toString();
            return lines.join(QLatin1Char('\n'));
        };
        for (const bool byNamespace : {false, true}) {
            const QString leases = plan(byNamespace, store::SweepScope::ExpiredLeases);
            QVERIFY2(leases.contains(QLatin1String("outbox_events_lease_idx")), qPrintable(leases));
            QVERIFY2(!leases.contains(QLatin1String("Seq Scan")), qPrintable(leases));
            QVERIFY2(!leases.contains(QLatin1String("pending")), qPrintable(leases));
            // The full sweep has to read the pending rows one way or another.
            const QString all = plan(byNamespace, store::SweepScope::All);
            QVERIFY2(all.contains(QLatin1String("Seq Scan")) ||
                         all.contains(QLatin1String("outbox_events_pending_due_idx")),
                     qPrintable(all));
        }
        QVERIFY(sqlExec(m_db, QStringLiteral("DEALLOCATE ALL")));
        QVERIFY(sqlExec(m_db, QStringLiteral("RESET plan_cache_mode")));
    }

    void timeUntilNextDue() {
        store::OutboxStore store(m_db);
        const auto nothing = store.timeUntilNextDue();
        QVERIFY2(nothing.ok(), qPrintable(nothing.errorMessage()));
        QVERIFY(!nothing->has_value());

        Row later;
        later.nameSpace = QStringLiteral("a");
        later.dueInMs = 10000;
        Row overdue;
        overdue.nameSpace = QStringLiteral("b");
        overdue.dueInMs = -5000;
        Row leased;
        leased.nameSpace = QStringLiteral("c");
        leased.status = QStringLiteral("processing");
        leased.lockedBy = m_workerA;
        leased.leaseInMs = 1000;
        leased.dueInMs = -5000;
        for (const Row &row : {later, overdue, leased}) {
            QVERIFY(insertRow(m_db, row));
        }
        QCOMPARE(store.timeUntilNextDue().value(), std::optional<core::Millis>(0ms));
        QCOMPARE(store.timeUntilNextDue(QStringLiteral("b")).value(),
                 std::optional<core::Millis>(0ms));
        const auto a = store.timeUntilNextDue(QStringLiteral("a"));
        QVERIFY(a.ok() && a->has_value());
        QVERIFY2(a->value() > 0ms && a->value() <= 10000ms,
                 qPrintable(QString::number(a->value().count())));
        QVERIFY(
            !store.timeUntilNextDue(QStringLiteral("c"))->has_value()); // only pending rows count
    }

    // One server-side PREPARE per statement kind, reused for every call.
    void statementsArePreparedOnce() {
        for (int i = 0; i < 6; ++i) {
            QVERIFY(insertRow(m_db, Row{}));
        }
        store::OutboxStore store(m_db);
        for (int i = 0; i < 3; ++i) {
            const auto claimed = store.claimBatch(m_workerA, options(2));
            QVERIFY(claimed.ok() && claimed->size() == 2);
            QList<store::Ack> acks;
            for (const auto &event : claimed.value()) {
                acks.append({event.id, event.attempts});
            }
            QVERIFY(store.ack(m_workerA, acks)->applied == 2);
        }
        // A simple query (no values): not prepared itself.
        auto count =
            store::exec(m_db, QStringLiteral("SELECT count(*) FROM pg_prepared_statements"));
        QVERIFY2(count.ok(), qPrintable(count.errorMessage()));
        QVERIFY(count->next());
        QCOMPARE(count->value(0).toInt(), 2);
    }

    void lostConnectionIsReported() {
        QVERIFY(insertRow(m_db, Row{}));
        const QString connection = store::uniqueConnectionName(QStringLiteral("victim"));
        {
            const auto db = store::openDatabase(info(m_dbName), connection);
            QVERIFY2(db.ok(), qPrintable(db.errorMessage()));
            store::OutboxStore store(db.value());
            QVERIFY(store.timeUntilNextDue().ok());
            const QString pid = sqlScalar(db.value(), QStringLiteral("SELECT pg_backend_pid()"));
            QCOMPARE(
                sqlScalar(m_db, QStringLiteral("SELECT pg_terminate_backend(?::integer)"), {pid}),
                QStringLiteral("true"));
            core::Error error;
            for (int i = 0; i < 2; ++i) { // the first write may still succeed locally
                const auto claimed = store.claimBatch(m_workerA, options());
                if (!claimed.ok()) {
                    error = claimed.error();
                    break;
                }
            }
            QCOMPARE(error.kind, core::ErrorKind::Unavailable);
            QVERIFY2(error.message.contains(QLatin1String("claiming events")),
                     qPrintable(error.message));
        }
        store::closeDatabase(connection);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT status FROM outbox_events")),
                 QStringLiteral("pending"));
    }

    // Several dispatchers, each with its own connection in its own thread,
    // drain the outbox: every row is claimed exactly once and delivered.
    void concurrentClaimers() {
        constexpr int kRows = 5000;
        constexpr int kThreads = 4;
        QVERIFY(
            sqlExec(m_db,
                    QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload) "
                                   "SELECT outbox_uuid_v7(), 'ns', 't', jsonb_build_object('n', n) "
                                   "FROM generate_series(1, ?::integer) AS n"),
                    {kRows}));
        const core::ConnInfo conn = info(m_dbName);
        std::vector<ClaimerOutcome> outcomes(kThreads);
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back(QThread::create([&outcomes, conn, t] {
                ClaimerOutcome &out = outcomes[size_t(t)];
                const QString connection = store::uniqueConnectionName(QStringLiteral("claimer"));
                {
                    const auto db = store::openDatabase(conn, connection);
                    if (!db.ok()) {
                        out.error = db.errorMessage();
                    } else {
                        store::OutboxStore store(db.value());
                        const QUuid worker = QUuid::createUuid();
                        for (;;) {
                            const auto claimed = store.claimBatch(worker, options(50));
                            if (!claimed.ok()) {
                                out.error = claimed.errorMessage();
                                break;
                            }
                            if (claimed->isEmpty()) {
                                break;
                            }
                            QList<store::Ack> acks;
                            for (const auto &event : claimed.value()) {
                                out.claimed << event.id;
                                acks.append({event.id, event.attempts});
                            }
                            const auto acked = store.ack(worker, acks);
                            if (!acked.ok() || acked->applied != acks.size()) {
                                out.error = acked.ok() ? QStringLiteral("ack fenced out")
                                                       : acked.errorMessage();
                                break;
                            }
                        }
                    }
                }
                store::closeDatabase(connection);
            }));
            threads.back()->start();
        }
        for (auto &thread : threads) {
            QVERIFY(thread->wait(300000));
        }
        QList<QUuid> all;
        for (const ClaimerOutcome &out : outcomes) {
            QVERIFY2(out.error.isEmpty(), qPrintable(out.error));
            all << out.claimed;
        }
        QCOMPARE(all.size(), kRows);
        QCOMPARE(QSet<QUuid>(all.begin(), all.end()).size(), kRows); // no row twice
        QCOMPARE(sqlScalar(
                     m_db,
                     QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = 'delivered' "
                                    "AND attempts = 1")),
                 QString::number(kRows));
        auto known = store::exec(m_db, QStringLiteral("SELECT id FROM outbox_events"));
        QVERIFY(known.ok());
        QSet<QUuid> expected;
        while (known->next()) {
            expected.insert(QUuid::fromString(known->value(0).toString()));
        }
        QCOMPARE(QSet<QUuid>(all.begin(), all.end()), expected);
    }
};

QTEST_GUILESS_MAIN(TestOutboxStore)
#include "tst_outboxstore.moc"
