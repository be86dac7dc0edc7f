// Attempts per event and W3C trace context in the database (sql/014): what
// outbox_enqueue stores and refuses, the transaction-local settings, the
// event's own limit in the claim, the nack, the release and the dead sweep,
// replay, the trace-id filter and its index, and a producer login calling
// the new signature.

#include "core/uuidv7.h"
#include "store/database.h"
#include "store/operations.h"
#include "store/outboxstore.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QtTest>

using namespace outbox;
using namespace std::chrono_literals;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

namespace {

const QString kParent = QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
const QString kTraceId = QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736");
const QString kOtherParent =
    QStringLiteral("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00");

QString idText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

QString field(QSqlDatabase db, const QString &id, const QString &expression) {
    return sqlScalar(
        db,
        QStringLiteral("SELECT (%1)::text FROM outbox_events WHERE id = ?::uuid").arg(expression),
        {id});
}

store::ClaimOptions claimOptions(int maxAttempts) {
    store::ClaimOptions options;
    options.batchSize = 100;
    options.maxAttempts = maxAttempts;
    options.lease = 30s;
    return options;
}

} // namespace

class TestAttemptsAndTrace final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestAttemptsAndTrace()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private:
    // outbox_enqueue through SQL, with `arguments` after the payload.
    core::Result<QSqlQuery> enqueueSql(QSqlDatabase db, const QString &arguments,
                                       const QVariantList &values = {}) {
        return store::exec(
            db,
            QStringLiteral("SELECT id::text FROM outbox_enqueue('billing', 'invoice.paid', "
                           "'{\"n\": 1}'") +
                arguments + QLatin1Char(')'),
            values, QStringLiteral("enqueueing"));
    }

    QString enqueueId(QSqlDatabase db, const QString &arguments, const QVariantList &values = {}) {
        auto query = enqueueSql(db, arguments, values);
        if (!query.ok() || !query->next()) {
            qWarning("%s",
                     qPrintable(query.ok() ? QStringLiteral("no row") : query.errorMessage()));
            return {};
        }
        return query->value(0).toString();
    }

private Q_SLOTS:
    void initTestCase() {
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("tst_at_"), {QStringLiteral("producer")});
    }

    // OutboxStore::enqueue stores the event's own limit and trace context,
    // and the event as the console and outboxctl read it carries them.
    void enqueueStoresLimitAndTraceContext() {
        store::OutboxStore store(m_db);
        store::EnqueueRequest request;
        request.nameSpace = QStringLiteral("billing");
        request.topic = QStringLiteral("invoice.paid");
        request.payload = "{\"n\": 1}";
        request.maxAttempts = 3;
        request.traceparent = kParent;
        request.tracestate = QStringLiteral("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
        const auto enqueued = store.enqueue(request);
        QVERIFY2(enqueued.ok(), qPrintable(enqueued.errorMessage()));

        store::EventQueries queries(m_db);
        const auto detail = queries.detail(enqueued->id);
        QVERIFY2(detail.ok() && detail->has_value(), qPrintable(detail.errorMessage()));
        const core::OutboxEvent &event = detail->value().event;
        QCOMPARE(event.maxAttempts, std::optional<int>(3));
        QCOMPARE(event.traceparent, std::optional<QString>(kParent));
        QCOMPARE(event.tracestate, request.tracestate);
        QCOMPARE(core::traceIdOf(event.traceparent), kTraceId);
        QCOMPARE(core::attemptOfText(2, event.maxAttempts), QStringLiteral("attempt 2 of 3"));

        // Without them: no limit of its own, no trace context.
        request.maxAttempts.reset();
        request.traceparent.reset();
        request.tracestate.reset();
        const auto plain = store.enqueue(request);
        QVERIFY(plain.ok());
        const auto plainDetail = queries.detail(plain->id);
        QVERIFY(plainDetail.ok() && plainDetail->has_value());
        QCOMPARE(plainDetail->value().event.maxAttempts, std::nullopt);
        QCOMPARE(plainDetail->value().event.traceparent, std::nullopt);
        QCOMPARE(plainDetail->value().event.tracestate, std::nullopt);
    }

    // An instrumented application sets the trace context once per
    // transaction; every enqueue in it picks it up, an argument wins, and
    // the next transaction starts without it.
    void enqueuePicksUpTheTransactionSettings() {
        QVERIFY(m_db.transaction());
        QVERIFY(sqlExec(m_db, QStringLiteral("SET LOCAL outbox.traceparent = '%1'").arg(kParent)));
        QVERIFY(
            sqlExec(m_db, QStringLiteral("SELECT set_config('outbox.tracestate', 'k=v', true)")));
        const QString fromSetting = enqueueId(m_db, QString());
        const QString fromArgument =
            enqueueId(m_db, QStringLiteral(", p_traceparent => ?::text"), {kOtherParent});
        QVERIFY(m_db.commit());
        const QString afterwards = enqueueId(m_db, QString());
        QVERIFY(!fromSetting.isEmpty() && !fromArgument.isEmpty() && !afterwards.isEmpty());

        QCOMPARE(field(m_db, fromSetting, QStringLiteral("traceparent")), kParent);
        QCOMPARE(field(m_db, fromSetting, QStringLiteral("tracestate")), QStringLiteral("k=v"));
        // An argument is a whole trace context: the setting's tracestate
        // belongs to another span and stays out.
        QCOMPARE(field(m_db, fromArgument, QStringLiteral("traceparent")), kOtherParent);
        QVERIFY(field(m_db, fromArgument, QStringLiteral("tracestate")).isNull());
        // The setting reads '' once its transaction is over.
        QVERIFY(field(m_db, afterwards, QStringLiteral("traceparent")).isNull());
    }

    void malformedTraceContextIsRefused_data() {
        QTest::addColumn<QString>("traceparent");
        QTest::addColumn<QString>("tracestate");
        QTest::addColumn<QString>("problem");
        const QString form = QStringLiteral("is not of the form 00-<32 hex digits trace id>");
        QTest::newRow("not a traceparent") << QStringLiteral("abc") << QString() << form;
        QTest::newRow("upper case")
            << QStringLiteral("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")
            << QString() << form;
        QTest::newRow("short trace id")
            << QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01") << QString()
            << form;
        QTest::newRow("version ff")
            << QStringLiteral("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            << QString() << QStringLiteral("version ff is not supported (only 00)");
        QTest::newRow("zero trace id")
            << QStringLiteral("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
            << QString() << QStringLiteral("the trace id is all zeros");
        QTest::newRow("zero parent id")
            << QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")
            << QString() << QStringLiteral("the parent id is all zeros");
        QTest::newRow("tracestate alone")
            << QString() << QStringLiteral("k=v")
            << QStringLiteral("a tracestate was given without a traceparent");
        QTest::newRow("tracestate key in upper case")
            << kParent << QStringLiteral("Key=v") << QStringLiteral("the member \"Key=v\"");
        QTest::newRow("tracestate value with =")
            << kParent << QStringLiteral("k=a=b") << QStringLiteral("is not key=value");
        QTest::newRow("tracestate key twice") << kParent << QStringLiteral("k=1,k=2")
                                              << QStringLiteral("the key \"k\" appears twice");
        QStringList many;
        for (int i = 0; i < 33; ++i)
            many << QStringLiteral("k%1=v").arg(i);
        QTest::newRow("33 members")
            << kParent << many.join(QLatin1Char(',')) << QStringLiteral("33 members, more than 32");
        QTest::newRow("longer than 512")
            << kParent << QStringLiteral("k=") + QString(600, QLatin1Char('v'))
            << QStringLiteral("more than 512");
    }

    // Refused with what is wrong, by argument and by setting alike, and
    // nothing is written.
    void malformedTraceContextIsRefused() {
        QFETCH(QString, traceparent);
        QFETCH(QString, tracestate);
        QFETCH(QString, problem);
        const auto byArgument = enqueueSql(
            m_db, QStringLiteral(", p_traceparent => nullif(?, ''), p_tracestate => nullif(?, '')"),
            {traceparent, tracestate});
        QVERIFY(!byArgument.ok());
        QVERIFY2(byArgument.errorMessage().contains(problem),
                 qPrintable(byArgument.errorMessage()));

        QVERIFY(m_db.transaction());
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("SELECT set_config('outbox.traceparent', ?, true),"
                                       " set_config('outbox.tracestate', ?, true)"),
                        {traceparent, tracestate}));
        const auto bySetting = enqueueSql(m_db, QString());
        QVERIFY(m_db.rollback());
        // A tracestate setting alone is no trace context: it goes with the
        // setting's traceparent only.
        if (traceparent.isEmpty()) {
            QVERIFY2(bySetting.ok(), qPrintable(bySetting.errorMessage()));
        } else {
            QVERIFY(!bySetting.ok());
            QVERIFY2(bySetting.errorMessage().contains(problem),
                     qPrintable(bySetting.errorMessage()));
        }
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events")),
                 QStringLiteral("0"));
    }

    // Writing the columns directly is held to the same grammar.
    void constraintsHoldForDirectWrites() {
        const QString id = enqueueId(m_db, QString());
        QVERIFY(!id.isEmpty());
        QVERIFY(!sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET traceparent = 'x'")));
        QVERIFY(!sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET max_attempts = 0")));
        QVERIFY(!sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET tracestate = 'k=v'")));
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET traceparent = ?, "
                                       "tracestate = 'k=v', max_attempts = 1000"),
                        {kParent}));
    }

    void maxAttemptsBounds_data() {
        QTest::addColumn<int>("limit");
        QTest::addColumn<bool>("accepted");
        QTest::newRow("0") << 0 << false;
        QTest::newRow("-3") << -3 << false;
        QTest::newRow("1001") << 1001 << false;
        QTest::newRow("1") << 1 << true;
        QTest::newRow("1000") << 1000 << true;
    }

    void maxAttemptsBounds() {
        QFETCH(int, limit);
        QFETCH(bool, accepted);
        const auto rows =
            enqueueSql(m_db, QStringLiteral(", p_max_attempts => ?::integer"), {limit});
        QCOMPARE(rows.ok(), accepted);
        if (!accepted)
            QVERIFY2(
                rows.errorMessage().contains(
                    QStringLiteral("max_attempts must be between 1 and 1000 (got %1)").arg(limit)),
                qPrintable(rows.errorMessage()));
    }

    // The claim takes an event while its attempts are below its own limit,
    // else below the dispatcher's.
    void claimUsesTheEventsOwnLimit() {
        const QString spent = enqueueId(m_db, QStringLiteral(", p_max_attempts => 2"));
        const QString generous = enqueueId(m_db, QStringLiteral(", p_max_attempts => 8"));
        const QString plainBelow = enqueueId(m_db, QString());
        const QString plainSpent = enqueueId(m_db, QString());
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET attempts = CASE id"
                                       " WHEN ?::uuid THEN 2 WHEN ?::uuid THEN 6"
                                       " WHEN ?::uuid THEN 4 ELSE 5 END"),
                        {spent, generous, plainBelow}));
        QVERIFY(!spent.isEmpty() && !plainSpent.isEmpty());
        store::OutboxStore store(m_db);
        const auto claimed = store.claimBatch(core::createUuidV7(), claimOptions(5));
        QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
        QStringList ids;
        for (const store::ClaimedEvent &event : claimed.value())
            ids << idText(event.id);
        ids.sort();
        QStringList expected{generous, plainBelow};
        expected.sort();
        QCOMPARE(ids, expected);
    }

    // The nack ends an event at its own limit and says so; the dispatcher's
    // higher limit does not keep it alive.
    void nackEndsAnEventAtItsOwnLimit() {
        const QString id = enqueueId(m_db, QStringLiteral(", p_max_attempts => 2"));
        const QString plain = enqueueId(m_db, QString());
        store::OutboxStore store(m_db);
        const QUuid worker = core::createUuidV7();
        for (int attempt = 1; attempt <= 2; ++attempt) {
            QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET next_attempt_at ="
                                                 " now() WHERE status = 'pending'")));
            const auto claimed = store.claimBatch(worker, claimOptions(10));
            QVERIFY2(claimed.ok(), qPrintable(claimed.errorMessage()));
            QCOMPARE(claimed->size(), 2);
            QList<store::Nack> nacks;
            for (const store::ClaimedEvent &event : claimed.value()) {
                store::Nack nack;
                nack.id = event.id;
                nack.attempts = event.attempts;
                nack.error = QStringLiteral("HTTP 503");
                nacks << nack;
            }
            const auto nacked = store.nack(worker, nacks, 10);
            QVERIFY2(nacked.ok(), qPrintable(nacked.errorMessage()));
            QCOMPARE(nacked->applied, 2);
            if (attempt == 1) {
                QVERIFY(nacked->madeDead.isEmpty());
                QCOMPARE(field(m_db, id, QStringLiteral("status")), QStringLiteral("pending"));
            } else {
                QCOMPARE(nacked->madeDead, QList<QUuid>{QUuid::fromString(id)});
                QCOMPARE(field(m_db, id, QStringLiteral("status")), QStringLiteral("dead"));
            }
        }
        QCOMPARE(field(m_db, plain, QStringLiteral("status")), QStringLiteral("pending"));
    }

    // The sweep and a release at the last attempt use the event's own
    // limit, and the dead reason names it.
    void sweepAndReleaseUseTheEventsOwnLimit() {
        const QString pendingSpent = enqueueId(m_db, QStringLiteral(", p_max_attempts => 2"));
        const QString pendingPlain = enqueueId(m_db, QString());
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET attempts = 2")));
        store::OutboxStore store(m_db);
        const auto swept = store.deadSweep(10, {}, store::SweepScope::All);
        QVERIFY2(swept.ok(), qPrintable(swept.errorMessage()));
        QCOMPARE(swept.value(), qint64(1));
        QCOMPARE(field(m_db, pendingSpent, QStringLiteral("status")), QStringLiteral("dead"));
        QCOMPARE(field(m_db, pendingSpent, QStringLiteral("last_error")),
                 QStringLiteral("dead: reached max attempts (2)"));
        QCOMPARE(field(m_db, pendingPlain, QStringLiteral("status")), QStringLiteral("pending"));

        // A lease at the event's last attempt, cut off by a shutdown.
        const QString leased = enqueueId(m_db, QStringLiteral(", p_max_attempts => 1"));
        const QUuid worker = core::createUuidV7();
        const auto claimed = store.claimBatch(worker, claimOptions(10));
        QVERIFY(claimed.ok());
        QCOMPARE(claimed->size(), 2); // leased (0 < 1) and pendingPlain (2 < 10)
        QList<store::Release> releases;
        for (const store::ClaimedEvent &event : claimed.value())
            releases << store::Release{event.id, event.attempts, true};
        const auto released = store.release(worker, releases, 10);
        QVERIFY2(released.ok(), qPrintable(released.errorMessage()));
        QCOMPARE(released->madeDead, QList<QUuid>{QUuid::fromString(leased)});
        QVERIFY(field(m_db, leased, QStringLiteral("last_error"))
                    .startsWith(QLatin1String("dead: reached max attempts (1);")));
    }

    // A replay is the same business event sent again: it keeps the limit
    // and continues the trace.
    void replayKeepsLimitAndTraceContext() {
        const QString original =
            enqueueId(m_db,
                      QStringLiteral(", p_max_attempts => 4, p_traceparent => ?::text,"
                                     " p_tracestate => 'k=v'"),
                      {kParent});
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET status = 'delivered',"
                                             " attempts = 1, delivered_at = now()")));
        store::OperatorStore ops(m_db, store::Actor::fromEnvironment(QStringLiteral("tst")));
        store::EventFilter filter;
        filter.ids = {QUuid::fromString(original)};
        const auto replayed = ops.replay(filter);
        QVERIFY2(replayed.ok(), qPrintable(replayed.errorMessage()));
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT max_attempts || ' ' || traceparent || ' ' "
                                          "|| tracestate FROM outbox_events"
                                          " WHERE replay_of = ?::uuid"),
                           {original}),
                 QStringLiteral("4 %1 k=v").arg(kParent));
    }

    // The trace-id filter finds the trace's events (in any case of hex
    // digits) through its index.
    void traceIdFilterFindsTheTrace() {
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("SELECT outbox_enqueue('billing', 'x', '{}',"
                                       " p_traceparent => CASE WHEN g % 1000 = 0 THEN ?"
                                       " ELSE '00-' || md5(g::text) || '-00f067aa0ba902b7-01'"
                                       " END) FROM generate_series(1, 20000) g"),
                        {kParent}));
        QVERIFY(enqueueId(m_db, QString()).size() > 0);
        QVERIFY(sqlExec(m_db, QStringLiteral("ANALYZE outbox_events")));
        store::EventQueries queries(m_db);
        store::PageRequest request;
        request.filter.traceId = store::normalizedTraceId(kTraceId.toUpper());
        const auto page = queries.page(request);
        QVERIFY2(page.ok(), qPrintable(page.errorMessage()));
        QCOMPARE(page->rows.size(), 20);
        for (const core::OutboxEvent &event : page->rows)
            QCOMPARE(event.traceparent, std::optional<QString>(kParent));
        const auto plan = queries.explainPage(request);
        QVERIFY2(plan.ok(), qPrintable(plan.errorMessage()));
        QVERIFY2(plan->contains(QLatin1String("outbox_events_trace_idx")),
                 qPrintable(plan.value()));

        QVERIFY(store::traceIdProblem(kTraceId).isEmpty());
        QVERIFY(store::traceIdProblem(kTraceId.toUpper()).isEmpty());
        QVERIFY(!store::traceIdProblem(QStringLiteral("xyz")).isEmpty());
        QVERIFY(!store::traceIdProblem(QString(32, QLatin1Char('0'))).isEmpty());
        QVERIFY(request.filter.describe().contains(QStringLiteral("trace=") + kTraceId));
    }

    // A producer login may call the new signature (sql/roles.sql), by name
    // and by position, and the old calls keep working.
    void producerCallsTheNewSignature() {
        QSqlDatabase db = m_pg->open(m_dbName, {}, QStringLiteral("tst_at_producer"));
        QVERIFY(db.isOpen());
        QVERIFY(!enqueueId(db, QString()).isEmpty());
        QVERIFY(!enqueueId(db, QStringLiteral(", NULL, NULL, 'invoice', '42'")).isEmpty());
        QVERIFY(
            !enqueueId(db, QStringLiteral(", NULL, NULL, NULL, NULL, 3, ?::text, 'k=v'"), {kParent})
                 .isEmpty());
        QCOMPARE(sqlScalar(m_db,
                           QStringLiteral("SELECT count(*) FROM outbox_events"
                                          " WHERE max_attempts = 3 AND traceparent = ?"),
                           {kParent}),
                 QStringLiteral("1"));
    }
};

QTEST_GUILESS_MAIN(TestAttemptsAndTrace)
#include "tst_attemptsandtrace.moc"
