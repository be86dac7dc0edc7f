// Running it in production, with real processes: the dispatcher registry
// (rows appear, go stale after SIGKILL, disappear on a graceful stop), pause
// and resume under three dispatchers, retention, and who may do what, as
// real login roles.

#include "e2e/e2e.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <vector>

using namespace outbox::testing;

namespace {

QString withUser(const QString &connInfo, const QString &user) {
    return connInfo + QStringLiteral(" user=") + user;
}

QStringList dispatchArguments(const QString &connInfo, const QUrl &url,
                              const QStringList &extra = {}) {
    return dispatchCommand(connInfo, url.toString(),
                           QStringList{QStringLiteral("--poll-interval"), QStringLiteral("200ms"),
                                       QStringLiteral("--heartbeat-interval"),
                                       QStringLiteral("300ms"), QStringLiteral("--stats-interval"),
                                       QStringLiteral("0s")} +
                               extra);
}

// `outboxctl <arguments>` to the end; exit code and stdout+stderr.
std::pair<int, QString> ctl(const QStringList &arguments) {
    CtlProcess process(arguments);
    if (!process.start() || !process.waitForExit(60000))
        return {-1, process.output()};
    return {process.exitedNormally() ? process.exitCode() : -1, process.output()};
}

QJsonObject dispatchersJson(const QString &connInfo) {
    const auto [code, out] = ctl({QStringLiteral("--db"), connInfo, QStringLiteral("dispatchers"),
                                  QStringLiteral("--json")});
    if (code != 0)
        qWarning().noquote() << "dispatchers --json:" << out;
    return QJsonDocument::fromJson(out.toUtf8()).object();
}

// The registry row of the dispatcher with this pid (empty when none).
QJsonObject entryOf(const QJsonObject &list, qint64 pid) {
    for (const QJsonValue &value : list.value(QStringLiteral("dispatchers")).toArray()) {
        if (value.toObject().value(QStringLiteral("pid")).toInteger() == pid)
            return value.toObject();
    }
    return {};
}

// GET /metrics on 127.0.0.1:port; empty on failure.
QByteArray scrape(int port) {
    QNetworkAccessManager manager;
    QNetworkReply *reply =
        manager.get(QNetworkRequest(QUrl(QStringLiteral("http://127.0.0.1:%1/metrics").arg(port))));
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(10000, &loop, &QEventLoop::quit);
    loop.exec();
    const QByteArray body = reply->readAll();
    reply->deleteLater();
    return body;
}

// Whether every line of `expected` is a line of the metrics text.
bool hasLines(const QByteArray &metrics, const QList<QByteArray> &expected) {
    const QList<QByteArray> lines = metrics.split('\n');
    for (const QByteArray &line : expected) {
        if (!lines.contains(line))
            return false;
    }
    return true;
}

} // namespace

class TestE2eControl final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestE2eControl()
        : PgTestSuite(outbox::testing::migrateSchemaWithRoles) {}

private Q_SLOTS:
    void initTestCase() {
        // Real login roles in the groups of sql/roles.sql (cluster-wide).
        if (startPg(outbox::testing::migrateSchemaWithRoles))
            createLoginRoles(QStringLiteral("ctl_"),
                             {QStringLiteral("dispatcher"), QStringLiteral("operator"),
                              QStringLiteral("viewer")});
    }

    // Two dispatchers (as the dispatcher role) register with their pid and
    // host; SIGKILL leaves a row that goes stale; SIGTERM removes the row.
    void registryEntriesAppearGoStaleAndDisappear() {
        const QString admin = m_pg->connInfo(m_dbName);
        const QString asDispatcher = withUser(admin, QStringLiteral("ctl_dispatcher"));
        RunnerProcess runner;
        QVERIFY(runner.start(0));
        QUrl url = runner.url();
        url.setUserInfo(QStringLiteral("user:pw-not-shown"));
        CtlProcess victim(dispatchArguments(
            asDispatcher, url, {QStringLiteral("--namespace"), QStringLiteral("billing")}));
        CtlProcess survivor(dispatchArguments(asDispatcher, url));
        QVERIFY(victim.start());
        QVERIFY(survivor.start());
        const qint64 victimPid = victim.pid(); // 0 once it has exited
        const qint64 survivorPid = survivor.pid();

        QTRY_COMPARE_WITH_TIMEOUT(dispatchersJson(admin).value(QStringLiteral("alive")).toInt(), 2,
                                  30000);
        const QJsonObject list = dispatchersJson(admin);
        const QJsonObject first = entryOf(list, victimPid);
        QVERIFY2(!first.isEmpty(), QJsonDocument(list).toJson().constData());
        QCOMPARE(first.value(QStringLiteral("namespace")).toString(), QStringLiteral("billing"));
        QCOMPARE(first.value(QStringLiteral("db_user")).toString(),
                 QStringLiteral("ctl_dispatcher"));
        QVERIFY(!first.value(QStringLiteral("host")).toString().isEmpty());
        QVERIFY(!first.value(QStringLiteral("runner_url"))
                     .toString()
                     .contains(QStringLiteral("pw-not-shown")));
        QVERIFY(entryOf(list, survivorPid).value(QStringLiteral("namespace")).isNull());

        victim.killHard();
        QVERIFY(victim.waitForExit(10000));
        QTRY_COMPARE_WITH_TIMEOUT(dispatchersJson(admin).value(QStringLiteral("alive")).toInt(), 1,
                                  30000);
        QCOMPARE(
            entryOf(dispatchersJson(admin), victimPid).value(QStringLiteral("alive")).toBool(true),
            false);
        QVERIFY(
            entryOf(dispatchersJson(admin), survivorPid).value(QStringLiteral("alive")).toBool());

        survivor.terminate();
        QVERIFY(survivor.waitForExit(30000));
        QCOMPARE(survivor.exitCode(), 0);
        const QJsonObject after = dispatchersJson(admin);
        QVERIFY(entryOf(after, survivorPid).isEmpty());
        QCOMPARE(after.value(QStringLiteral("dispatchers")).toArray().size(), 1); // the killed one
        const auto [code, text] =
            ctl({QStringLiteral("--db"), admin, QStringLiteral("dispatchers")});
        QCOMPARE(code, 0);
        QVERIFY2(text.contains(QStringLiteral("gone")) && text.contains(QStringLiteral("0 alive")),
                 qPrintable(text));
    }

    // The dispatcher role can write only the row whose secret it holds, and
    // may not pause; viewers may not pause; operators may, audited.
    void rolesAreEnforcedByTheDatabase() {
        const QString admin = m_pg->connInfo(m_dbName);
        QVERIFY(
            sqlExec(m_db, QStringLiteral("SELECT outbox_dispatcher_register("
                                         "'0190e0a0-0000-7000-8000-000000000001', repeat('a', 64),"
                                         " 'h', 1, 'v', 'a', NULL, 'http://x', 1, 1000, now())")));
        const QString dispatcherConn =
            m_pg->connInfo(m_dbName) + QStringLiteral(" user=ctl_dispatcher");
        {
            auto info = outbox::core::ConnInfo::parse(dispatcherConn);
            QVERIFY(info.ok());
            auto opened =
                outbox::store::openDatabase(info.value(), QStringLiteral("as-dispatcher"));
            QVERIFY2(opened.ok(), qPrintable(opened.errorMessage()));
            QSqlDatabase asDispatcher = opened.value();
            // Someone else's row: a wrong secret changes nothing.
            QCOMPARE(
                sqlScalar(asDispatcher,
                          QStringLiteral("SELECT outbox_dispatcher_heartbeat("
                                         "'0190e0a0-0000-7000-8000-000000000001', repeat('b', 64),"
                                         " 'running', 0, 0, 0, 0)")),
                QStringLiteral("false"));
            QCOMPARE(sqlScalar(asDispatcher,
                               QStringLiteral(
                                   "SELECT outbox_dispatcher_unregister("
                                   "'0190e0a0-0000-7000-8000-000000000001', repeat('b', 64))")),
                     QStringLiteral("false"));
            QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_dispatchers")),
                     QStringLiteral("1"));
            // Nor take over a live row, nor write the table directly.
            QVERIFY(
                !sqlExec(asDispatcher,
                         QStringLiteral("SELECT outbox_dispatcher_register("
                                        "'0190e0a0-0000-7000-8000-000000000001', repeat('b', 64),"
                                        " 'h', 1, 'v', 'a', NULL, 'http://x', 1, 1000, now())")));
            QVERIFY(!sqlExec(asDispatcher, QStringLiteral("DELETE FROM outbox_dispatchers")));
            QVERIFY(
                !sqlExec(asDispatcher, QStringLiteral("UPDATE outbox_dispatchers SET pid = 2")));
            QVERIFY(!sqlExec(asDispatcher,
                             QStringLiteral("INSERT INTO outbox_pauses (namespace, reason)"
                                            " VALUES ('x', 'y')")));
        }
        QSqlDatabase::removeDatabase(QStringLiteral("as-dispatcher"));

        const QStringList pause{QStringLiteral("pause"),       QStringLiteral("--namespace"),
                                QStringLiteral("billing"),     QStringLiteral("--reason"),
                                QStringLiteral("runner down"), QStringLiteral("--yes")};
        for (const char *who : {"ctl_viewer", "ctl_dispatcher"}) {
            const auto [code, out] = ctl(
                QStringList{QStringLiteral("--db"), withUser(admin, QLatin1String(who))} + pause);
            QVERIFY2(code != 0 && out.contains(QStringLiteral("permission denied")),
                     qPrintable(out));
        }
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_pauses")),
                 QStringLiteral("0"));
        const auto [code, out] = ctl(
            QStringList{QStringLiteral("--db"), withUser(admin, QStringLiteral("ctl_operator"))} +
            pause);
        QVERIFY2(code == 0, qPrintable(out));
        QCOMPARE(
            sqlScalar(m_db, QStringLiteral("SELECT paused_by || '/' || reason FROM outbox_pauses")),
            QStringLiteral("ctl_operator/runner down"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(action || ':' || db_user, ',')"
                                                " FROM outbox_audit")),
                 QStringLiteral("pause:ctl_operator"));
        // Without --reason: a usage error that says what to add.
        const auto [usageCode, usageOut] =
            ctl({QStringLiteral("--db"), admin, QStringLiteral("pause"),
                 QStringLiteral("--namespace"), QStringLiteral("x"), QStringLiteral("--yes")});
        QCOMPARE(usageCode, 2);
        QVERIFY2(usageOut.contains(QStringLiteral("--reason")), qPrintable(usageOut));
    }

    // Three dispatchers: a paused namespace stays pending (attempts 0) while
    // the rest is delivered; pausing a running namespace holds its new events
    // within a poll interval; resume delivers at once.
    void pauseHoldsUnderThreeDispatchersAndResumeDrains() {
        const QString admin = m_pg->connInfo(m_dbName);
        const QString asOperator = withUser(admin, QStringLiteral("ctl_operator"));
        const auto pauseCmd = [&](const QString &ns) {
            return ctl({QStringLiteral("--db"), asOperator, QStringLiteral("pause"),
                        QStringLiteral("--namespace"), ns, QStringLiteral("--reason"),
                        QStringLiteral("test"), QStringLiteral("--yes")});
        };
        QCOMPARE(pauseCmd(QStringLiteral("billing")).first, 0);
        QVERIFY(insertEvents(m_db, 300, QStringLiteral("billing")));
        QVERIFY(insertEvents(m_db, 300, QStringLiteral("shipping")));

        RunnerProcess runner;
        QVERIFY(runner.start(0));
        const int metricsPort = freePort();
        std::vector<std::unique_ptr<CtlProcess>> dispatchers;
        for (int i = 0; i < 3; ++i) {
            QStringList extra{QStringLiteral("--batch-size"), QStringLiteral("20")};
            if (i == 0)
                extra << QStringLiteral("--metrics-addr")
                      << QStringLiteral("127.0.0.1:%1").arg(metricsPort)
                      << QStringLiteral("--gauges-interval") << QStringLiteral("200ms");
            dispatchers.push_back(std::make_unique<CtlProcess>(dispatchArguments(
                withUser(admin, QStringLiteral("ctl_dispatcher")), runner.url(), extra)));
            QVERIFY(dispatchers.back()->start());
        }
        QTRY_COMPARE_WITH_TIMEOUT(
            countWhere(m_db, QStringLiteral("namespace = 'shipping' AND status = 'delivered'")),
            qint64(300), 60000);
        // Several poll intervals later, nothing of billing was touched.
        QTest::qWait(1000);
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace = 'billing' AND status = 'pending'"
                                                 " AND attempts = 0")),
                 qint64(300));

        // Pause while running: later events of shipping wait too.
        QCOMPARE(pauseCmd(QStringLiteral("shipping")).first, 0);
        QTest::qWait(300); // a poll interval
        QVERIFY(insertEvents(m_db, 100, QStringLiteral("shipping")));
        QTest::qWait(1000);
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace = 'shipping' AND status = 'pending'")),
                 qint64(100));
        // The console and `outboxctl dispatchers` name the pause.
        const QJsonArray paused = dispatchersJson(admin).value(QStringLiteral("paused")).toArray();
        QCOMPARE(paused.size(), 2);
        // The queue gauges say the same as the table: 400 pending, none due
        // (all paused), 300 delivered, two paused namespaces, three alive.
        QTRY_VERIFY2_WITH_TIMEOUT(
            hasLines(scrape(metricsPort),
                     {"outbox_queue_events{status=\"pending\"} 400",
                      "outbox_queue_events{status=\"processing\"} 0",
                      "outbox_queue_events{status=\"delivered\"} 300",
                      "outbox_queue_events{status=\"dead\"} 0", "outbox_queue_due_events 0",
                      "outbox_queue_oldest_due_age_seconds 0", "outbox_queue_paused_namespaces 2",
                      "outbox_dispatchers_alive 3"}),
            scrape(metricsPort).constData(), 20000);
        QCOMPARE(countWhere(m_db, QStringLiteral("status = 'pending'")), qint64(400));
        QCOMPARE(paused.at(0).toObject().value(QStringLiteral("paused_by")).toString(),
                 QStringLiteral("ctl_operator"));

        const auto [code, out] = ctl({QStringLiteral("--db"), asOperator, QStringLiteral("resume"),
                                      QStringLiteral("--namespace"), QStringLiteral("billing"),
                                      QStringLiteral("--yes")});
        QVERIFY2(code == 0, qPrintable(out));
        QTRY_COMPARE_WITH_TIMEOUT(
            countWhere(m_db, QStringLiteral("namespace = 'billing' AND status = 'delivered'")),
            qint64(300), 60000);
        QCOMPARE(countWhere(m_db, QStringLiteral("namespace = 'shipping' AND status = 'pending'")),
                 qint64(100));
        QCOMPARE(ctl({QStringLiteral("--db"), asOperator, QStringLiteral("resume"),
                      QStringLiteral("--namespace"), QStringLiteral("shipping"),
                      QStringLiteral("--yes")})
                     .first,
                 0);
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status <> 'delivered'")),
                                  qint64(0), 60000);
        // Resuming what is not paused says so.
        QCOMPARE(ctl({QStringLiteral("--db"), asOperator, QStringLiteral("resume"),
                      QStringLiteral("--namespace"), QStringLiteral("shipping"),
                      QStringLiteral("--yes")})
                     .first,
                 1);
        for (auto &dispatcher : dispatchers) {
            dispatcher->terminate();
            QVERIFY(dispatcher->waitForExit(30000));
        }
        QCOMPARE(runner.counts().duplicates, qint64(0));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT string_agg(action, ',' ORDER BY id)"
                                                " FROM outbox_audit")),
                 QStringLiteral("pause,pause,resume,resume"));
    }

    // Two dispatchers with the same retention: old delivered and dead rows
    // go in batches (audited as retention), recent ones and live ones stay.
    void retentionDeletesOldRowsInBatches() {
        const QString admin = m_pg->connInfo(m_dbName);
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload, status,"
                           " delivered_at, created_at, updated_at)"
                           " SELECT outbox_uuid_v7(), 'old', 't', '{}', s, now(),"
                           "        now() - interval '3 hours', now() - interval '3 hours'"
                           "   FROM generate_series(1, 2500), unnest(ARRAY['delivered','dead'])"
                           "        AS s")));
        QVERIFY(insertEvents(m_db, 200, QStringLiteral("new")));
        RunnerProcess runner;
        QVERIFY(runner.start(0));
        std::vector<std::unique_ptr<CtlProcess>> dispatchers;
        for (int i = 0; i < 2; ++i) {
            dispatchers.push_back(std::make_unique<CtlProcess>(
                dispatchArguments(withUser(admin, QStringLiteral("ctl_dispatcher")), runner.url(),
                                  {QStringLiteral("--retain-delivered"), QStringLiteral("1h"),
                                   QStringLiteral("--retain-dead"), QStringLiteral("2h"),
                                   QStringLiteral("--retention-batch"), QStringLiteral("400")})));
            QVERIFY(dispatchers.back()->start());
        }
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("namespace = 'old'")), qint64(0),
                                  60000);
        QTRY_COMPARE_WITH_TIMEOUT(countWhere(m_db, QStringLiteral("status = 'delivered'")),
                                  qint64(200), 60000);
        for (auto &dispatcher : dispatchers) {
            dispatcher->terminate();
            QVERIFY(dispatcher->waitForExit(30000));
            QCOMPARE(dispatcher->exitCode(), 0);
        }
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT sum(affected) || ' ' || min(db_user)"
                                                " || ' ' || bool_and(affected <= 400)"
                                                " FROM outbox_audit WHERE action = 'retention'")),
                 QStringLiteral("5000 ctl_dispatcher true"));
        QVERIFY(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit"
                                               " WHERE action = 'retention'"))
                    .toInt() >= 13);
    }
};

QTEST_GUILESS_MAIN(TestE2eControl)
#include "tst_e2e_control.moc"
