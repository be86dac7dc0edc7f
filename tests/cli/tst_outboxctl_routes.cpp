// `outboxctl routes check` (every problem of a routes file with its line and
// the fix; where an event would go) and `outboxctl destination pause|resume`
// (audited, kept by the database).

#include "ctl.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

class TestOutboxctlRoutes final : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestOutboxctlRoutes()
        : PgTestSuite(outbox::testing::migrateSchema, PerTest::Nothing) {}

private:
    QTemporaryDir m_dir;

    QString write(const QString &name, const QString &text) {
        const QString path = m_dir.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return {};
        file.write(text.toUtf8());
        return path;
    }

private Q_SLOTS:
    void checkReportsEveryProblemWithItsLine() {
        const QString path = write(QStringLiteral("bad.routes"),
                                   QStringLiteral("# a comment\n"                   // 1
                                                  "[destination hooks]\n"           // 2
                                                  "kind = http\n"                   // 3
                                                  "url = https://hooks.internal/\n" // 4
                                                  "secret = whsec_abc\n"            // 5
                                                  "mode = sometimes\n"              // 6
                                                  "[route]\n"                       // 7
                                                  "namespace = billing\n"           // 8
                                                  "destination = hookz\n"));        // 9
        const CtlResult result = runCtl({QStringLiteral("routes"), QStringLiteral("check"), path});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(path + QStringLiteral(":5: 'secret' would put a secret")),
                 qPrintable(result.err));
        QVERIFY2(result.err.contains(path + QStringLiteral(":6: mode = sometimes is unknown; use "
                                                           "event")),
                 qPrintable(result.err));
        QVERIFY2(result.err.contains(path + QStringLiteral(":7: the route's destination 'hookz' "
                                                           "is not defined")),
                 qPrintable(result.err));
        QVERIFY2(result.err.contains(path + QStringLiteral(":2: no route uses destination "
                                                           "'hooks'")),
                 qPrintable(result.err));
        QVERIFY(!result.err.contains(QLatin1String("whsec_abc")));
    }

    void checkShowsWhereAnEventGoes() {
        const QString path = write(QStringLiteral("good.routes"),
                                   QStringLiteral("[destination hooks]\n"
                                                  "kind = http\n"
                                                  "url = https://user:pw@hooks.internal/x?key=1\n"
                                                  "[destination rest]\n"
                                                  "kind = http\n"
                                                  "url = http://localhost:8080/events\n"
                                                  "[route]\n"
                                                  "namespace = billing\n"
                                                  "topic = invoice.*\n"
                                                  "destination = hooks\n"
                                                  "[route]\n"
                                                  "destination = rest\n"));
        CtlResult result = runCtl({QStringLiteral("routes"), QStringLiteral("check"), path,
                                   QStringLiteral("--namespace"), QStringLiteral("billing"),
                                   QStringLiteral("--topic"), QStringLiteral("invoice.paid")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("goes to hooks (the route on line 7)")),
                 qPrintable(result.out));
        QVERIFY2(!result.out.contains(QLatin1String("pw@")) &&
                     !result.out.contains(QLatin1String("key=1")),
                 qPrintable(result.out));
        result = runCtl({QStringLiteral("routes"), QStringLiteral("check"), path,
                         QStringLiteral("--namespace"), QStringLiteral("shipping"),
                         QStringLiteral("--topic"), QStringLiteral("x")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("goes to rest (the route on line 11)")),
                 qPrintable(result.out));
    }

    // "Why is this event not delivered?" from the command line names the
    // destination a routing dispatcher sends it to, and what holds it up.
    void showNamesTheDestination() {
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        QSqlDatabase db = m_pg->open(name);
        const QString conn = m_pg->connInfo(name);
        const QString worker = QStringLiteral("0190a5f4-7c2e-7b3a-9d4e-123456789abc");
        QVERIFY(sqlExec(db,
                        QStringLiteral("SELECT outbox_dispatcher_register(?::uuid,"
                                       " repeat('s', 64), 'worker-host', 4242, '1.0',"
                                       " 'outboxctl', '', 'routes x.routes', 8, 60000, now())"),
                        {worker}));
        QVERIFY(sqlExec(
            db,
            QStringLiteral(
                "SELECT outbox_dispatcher_destinations(?::uuid, repeat('s', 64), ?::jsonb)"),
            {worker,
             QStringLiteral(R"([{"name": "hooks", "kind": "http", "target": "https://h/x",)"
                            R"( "circuit": "open", "reason": "5 failed attempts in a row",)"
                            R"( "circuit_since": "2026-01-01T00:00:00.000Z",)"
                            R"( "routes": [{"n": 0, "namespace": "billing", "topic": "*"}]}])")}));
        const QString billing = sqlScalar(
            db, QStringLiteral("SELECT (outbox_enqueue('billing', 'refund.done', '{}')).id"));
        const QString shipping =
            sqlScalar(db, QStringLiteral("SELECT (outbox_enqueue('shipping', 'sent', '{}')).id"));
        QVERIFY(!billing.isEmpty() && !shipping.isEmpty());

        CtlResult result = runCtl({QStringLiteral("show"), billing, QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("Destination")) &&
                     result.out.contains(QLatin1String("hooks (http, https://h/x); circuit open "
                                                       "since 2026-01-01")) &&
                     result.out.contains(QLatin1String("5 failed attempts in a row")),
                 qPrintable(result.out));
        result = runCtl({QStringLiteral("destination"), QStringLiteral("pause"),
                         QStringLiteral("hooks"), QStringLiteral("--reason"),
                         QStringLiteral("INC-7"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        result = runCtl({QStringLiteral("show"), billing, QStringLiteral("--json"),
                         QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject destination = QJsonDocument::fromJson(result.out.toUtf8())
                                            .object()
                                            .value(QLatin1String("destination"))
                                            .toObject();
        QCOMPARE(destination.value(QLatin1String("name")).toString(), QStringLiteral("hooks"));
        QCOMPARE(destination.value(QLatin1String("pause_reason")).toString(),
                 QStringLiteral("INC-7"));

        result = runCtl({QStringLiteral("show"), shipping, QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("none: no route of the running dispatchers "
                                                   "matches namespace shipping")),
                 qPrintable(result.out));
    }

    void pauseAndResumeAreAudited() {
        const QString name = m_pg->freshMigratedDatabase();
        QVERIFY(!name.isEmpty());
        QSqlDatabase db = m_pg->open(name);
        const QString conn = m_pg->connInfo(name);
        CtlResult result = runCtl({QStringLiteral("destination"), QStringLiteral("pause"),
                                   QStringLiteral("hooks"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY(result.err.contains(QLatin1String("--reason TEXT is required")));
        result = runCtl({QStringLiteral("destination"), QStringLiteral("pause"),
                         QStringLiteral("hooks"), QStringLiteral("--reason"),
                         QStringLiteral("INC-42"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT reason FROM outbox_destination_pauses"
                                              " WHERE destination = 'hooks'")),
                 QStringLiteral("INC-42"));
        // Who looks at the dispatchers sees it.
        result = runCtl({QStringLiteral("dispatchers"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("Paused: destination hooks since")) &&
                     result.out.contains(QLatin1String(": INC-42")),
                 qPrintable(result.out));
        result = runCtl({QStringLiteral("destination"), QStringLiteral("resume"),
                         QStringLiteral("hooks"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT string_agg(action || ' ' || filter || ' '"
                                              " || application, ', ' ORDER BY id)"
                                              " FROM outbox_audit")),
                 QStringLiteral("pause destination=hooks reason=INC-42 outboxctl, "
                                "resume destination=hooks outboxctl"));
        result = runCtl({QStringLiteral("destination"), QStringLiteral("resume"),
                         QStringLiteral("hooks"), QStringLiteral("--db"), conn});
        CTL_VERIFY_EXIT(result, 1);
        QVERIFY(result.err.contains(QLatin1String("hooks is not paused")));

        // The database refuses a reason that would rewrite an operator's
        // terminal, whoever calls it, and audits nothing.
        QVERIFY(!sqlExec(db, QStringLiteral("SELECT outbox_destination_pause('hooks',"
                                            " E'INC-1\\x1b]0;pwned\\x07')")));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_destination_pauses")),
                 QStringLiteral("0"));
        QCOMPARE(sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_audit")),
                 QStringLiteral("2"));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlRoutes)
#include "tst_outboxctl_routes.moc"
