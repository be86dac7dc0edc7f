// outboxctl's bulk actions: requeue, retry, cancel, purge and replay, with
// their safety rails (filters, --dry-run, confirmation, Ctrl-C) and audit.

#include "ctl.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QtTest>

#include <csignal>
#include <unistd.h>

using namespace outbox::testing;

class TestOutboxctlActions final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    QString connInfo() const { return m_pg->connInfo(m_dbName); }

    // Everything an action could change, as one value.
    QString snapshot() {
        return sqlScalar(
            m_db, QStringLiteral("SELECT coalesce(md5(string_agg(e::text, '|' ORDER BY id)), "
                                 "'empty') || ' audit ' || (SELECT count(*) FROM outbox_audit) "
                                 "FROM outbox_events e"));
    }

    qint64 count(const QString &where) {
        return sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") + where)
            .toLongLong();
    }

    // A mix: 3 pending (namespace a), 4 dead in a, 2 dead in b, 3 delivered.
    void seedMix() {
        Seed seed{
            .nameSpace = QStringLiteral("a"), .attempts = 2, .nextIn = QStringLiteral("1 hour")};
        seedEvents(m_db, seed, 3);
        seed.status = QStringLiteral("dead");
        seed.attempts = 10;
        seed.nextIn = QStringLiteral("0s");
        seed.lastError = QStringLiteral("HTTP 503 from runner");
        seed.updatedAgo = QStringLiteral("2 days");
        seedEvents(m_db, seed, 4);
        seed.nameSpace = QStringLiteral("b");
        seed.lastError = QStringLiteral("HTTP 410 gone");
        seed.updatedAgo = QStringLiteral("0s");
        seedEvents(m_db, seed, 2);
        Seed delivered{
            .nameSpace = QStringLiteral("a"), .status = QStringLiteral("delivered"), .attempts = 1};
        seedEvents(m_db, delivered, 3);
    }

    CtlResult act(QStringList arguments, const QByteArray &input = {}) {
        arguments << QStringLiteral("--db") << connInfo();
        return runCtl(arguments, input);
    }

private Q_SLOTS:
    void init() {
        if (!openFreshDb())
            return;
        seedMix();
    }

    void dryRun_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("verb");
        QTest::addColumn<int>("matched");
        QTest::newRow("requeue") << commandLine("requeue --status dead")
                                 << QStringLiteral("requeue") << 6;
        QTest::newRow("requeue ns")
            << commandLine("requeue --namespace b") << QStringLiteral("requeue") << 2;
        QTest::newRow("retry") << commandLine("retry --namespace a") << QStringLiteral("retry")
                               << 3;
        QTest::newRow("cancel") << commandLine("cancel --namespace a") << QStringLiteral("cancel")
                                << 7;
        QTest::newRow("purge") << commandLine("purge --status delivered") << QStringLiteral("purge")
                               << 3;
        QTest::newRow("purge by age")
            << commandLine("purge --older-than 1d") << QStringLiteral("purge") << 4;
        QTest::newRow("replay") << commandLine("replay --error-contains 410")
                                << QStringLiteral("replay") << 2;
        QTest::newRow("all") << commandLine("requeue --all") << QStringLiteral("requeue") << 6;
        QTest::newRow("limit") << commandLine("requeue --all --limit 4")
                               << QStringLiteral("requeue") << 4;
    }

    void dryRun() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, verb);
        QFETCH(int, matched);
        const QString before = snapshot();
        CtlResult result = act(arguments + QStringList{QStringLiteral("--dry-run")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(
                     QStringLiteral("Dry run: would %1 %2 event").arg(verb).arg(matched)),
                 qPrintable(result.out));
        QCOMPARE(result.out.count(QRegularExpression(QStringLiteral("\\n  [0-9a-f-]{36}"))),
                 matched);
        QCOMPARE(snapshot(), before);

        result =
            act(arguments + QStringList{QStringLiteral("--dry-run"), QStringLiteral("--json")});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("dry_run")).toBool(), true);
        QCOMPARE(json.value(QLatin1String("action")).toString(), verb);
        QVERIFY(json.value(QLatin1String("matched")).toInteger() >= matched);
        QCOMPARE(json.value(QLatin1String("sample")).toArray().size(), matched);
        QCOMPARE(snapshot(), before);
    }

    void refused_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        for (const char *verb : {"requeue", "retry", "cancel", "purge", "replay"}) {
            QTest::addRow("%s without filter", verb)
                << QStringList{QString::fromLatin1(verb), QStringLiteral("--yes")}
                << (qstrcmp(verb, "purge") == 0 ? QStringLiteral("purge needs --status")
                                                : QStringLiteral("no filter given"));
            QTest::addRow("%s not confirmed", verb)
                << QStringList{QString::fromLatin1(verb), QStringLiteral("--namespace"),
                               QStringLiteral("a"), QStringLiteral("--older-than"),
                               QStringLiteral("1s")}
                << QStringLiteral("add --yes to confirm non-interactively");
        }
        QTest::newRow("purge --all")
            << commandLine("purge --all --yes") << QStringLiteral("purge needs --status");
        QTest::newRow("purge by namespace")
            << commandLine("purge --namespace a --yes") << QStringLiteral("purge needs --status");
        QTest::newRow("purge pending")
            << commandLine("purge --status pending --yes")
            << QStringLiteral("purge only touches delivered or dead events");
        QTest::newRow("requeue delivered") << commandLine("requeue --status delivered --yes")
                                           << QStringLiteral("requeue only touches dead events");
        QTest::newRow("zero rate") << commandLine("requeue --all --rate 0 --yes")
                                   << QStringLiteral("--rate must be more than 0");
        QTest::newRow("bad batch") << commandLine("requeue --all --batch-size 0 --yes")
                                   << QStringLiteral("--batch-size must be between 1");
    }

    void refused() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        const QString before = snapshot();
        const CtlResult result = act(arguments);
        CTL_VERIFY_EXIT(result, 2);
        QVERIFY2(result.err.contains(message), qPrintable(result.err));
        QCOMPARE(snapshot(), before);
    }

    void requeueByFilter() {
        const CtlResult result =
            act({QStringLiteral("requeue"), QStringLiteral("--status"), QStringLiteral("dead"),
                 QStringLiteral("--namespace"), QStringLiteral("a"), QStringLiteral("--reason"),
                 QStringLiteral("runner fixed"), QStringLiteral("--batch-size"),
                 QStringLiteral("3"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QLatin1String("requeue: changed 4, skipped 0 (moved "
                                                     "meanwhile)")),
                 qPrintable(result.out));
        QCOMPARE(count(QStringLiteral("namespace = 'a' AND status = 'dead'")), 0);
        QCOMPARE(count(QStringLiteral("namespace = 'a' AND status = 'pending' AND attempts = 0 "
                                      "AND next_attempt_at <= now()")),
                 4);
        QCOMPARE(count(QStringLiteral("namespace = 'b' AND status = 'dead'")), 2);
        QCOMPARE(count(QStringLiteral("namespace = 'a' AND status = 'pending' AND attempts = 2")),
                 3);

        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit")),
                 QStringLiteral("1"));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT action || ' ' || affected || ' ' || "
                                                "skipped || ' ' || application FROM "
                                                "outbox_audit")),
                 QStringLiteral("requeue 4 0 outboxctl"));
        QVERIFY(sqlScalar(m_db, QStringLiteral("SELECT filter FROM outbox_audit"))
                    .contains(QLatin1String("namespace=a")));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit_events ae "
                                                "JOIN outbox_events e ON e.id = ae.event_id "
                                                "WHERE e.namespace = 'a' AND e.status = "
                                                "'pending' AND e.attempts = 0")),
                 QStringLiteral("4"));
        // More than one batch: progress went to stderr, not stdout.
        QVERIFY2(result.err.contains(QLatin1String("requeue: 4/4")), qPrintable(result.err));
    }

    void otherActions() {
        // retry: pending and waiting -> due now, attempts kept.
        CtlResult result = act({QStringLiteral("retry"), QStringLiteral("--namespace"),
                                QStringLiteral("a"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QLatin1String("retry: changed 3, skipped 0")),
                 qPrintable(result.out));
        QCOMPARE(count(QStringLiteral("status = 'pending' AND attempts = 2 AND next_attempt_at <= "
                                      "now()")),
                 3);

        // replay: a new pending event pointing at the original.
        result = act({QStringLiteral("replay"), QStringLiteral("--status"), QStringLiteral("dead"),
                      QStringLiteral("--namespace"), QStringLiteral("b"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QLatin1String("replay: changed 2")), qPrintable(result.out));
        QVERIFY(result.out.contains(QLatin1String("New events:")));
        QCOMPARE(count(QStringLiteral("replay_of IS NOT NULL AND status = 'pending' AND "
                                      "namespace = 'b'")),
                 2);
        QCOMPARE(count(QStringLiteral("namespace = 'b' AND status = 'dead'")), 2);

        // cancel: pending -> dead with a message saying who.
        result =
            act({QStringLiteral("cancel"), QStringLiteral("--namespace"), QStringLiteral("b"),
                 QStringLiteral("--status"), QStringLiteral("pending"), QStringLiteral("--reason"),
                 QStringLiteral("duplicate"), QStringLiteral("--json"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        QCOMPARE(json.value(QLatin1String("changed")).toInteger(), 2);
        QVERIFY(json.value(QLatin1String("audit_id")).toInteger() > 0);
        QCOMPARE(count(QStringLiteral("namespace = 'b' AND status = 'dead' AND last_error ILIKE "
                                      "'cancelled%'")),
                 2);

        // purge: delivered rows are gone; nothing else is.
        const qint64 total = count(QStringLiteral("true"));
        result = act({QStringLiteral("purge"), QStringLiteral("--status"),
                      QStringLiteral("delivered"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QLatin1String("purge: changed 3")), qPrintable(result.out));
        QCOMPARE(count(QStringLiteral("status = 'delivered'")), 0);
        QCOMPARE(count(QStringLiteral("true")), total - 3);

        // --limit caps the change.
        result = act({QStringLiteral("requeue"), QStringLiteral("--all"), QStringLiteral("--limit"),
                      QStringLiteral("1"), QStringLiteral("--yes")});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QLatin1String("requeue: changed 1,")),
                 qPrintable(result.out));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_audit")),
                 QStringLiteral("5"));
    }

    void confirmOnTerminal_data() {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<int>("requeued");
        QTest::newRow("no") << QByteArray("n\n") << 1 << 0;
        QTest::newRow("empty") << QByteArray("\n") << 1 << 0;
        QTest::newRow("yes") << QByteArray("yes\n") << 0 << 2;
    }

    void confirmOnTerminal() {
        QFETCH(QByteArray, answer);
        QFETCH(int, exitCode);
        QFETCH(int, requeued);
        TerminalCtl ctl;
        QVERIFY(ctl.start({QStringLiteral("requeue"), QStringLiteral("--namespace"),
                           QStringLiteral("b"), QStringLiteral("--db"), connInfo()}));
        QVERIFY2(ctl.waitForQuestion(), ctl.err().constData());
        QVERIFY2(ctl.err().contains("Requeue 2 events (namespace=b)?"), ctl.err().constData());
        QVERIFY(ctl.answer(answer));
        QVERIFY(ctl.waitForFinished(30000));
        QCOMPARE(ctl.exitCode(), exitCode);
        QCOMPARE(count(QStringLiteral("namespace = 'b' AND status = 'pending'")), requeued);
    }

    void interrupted() {
        Seed seed{
            .nameSpace = QStringLiteral("slow"), .status = QStringLiteral("dead"), .attempts = 10};
        seedEvents(m_db, seed, 40);
        QProcess process;
        process.setProcessEnvironment(cleanEnvironment());
        // One event per batch at 5 per second: ~8 s unless interrupted.
        process.start(QStringLiteral(OUTBOXCTL_PATH),
                      {QStringLiteral("requeue"), QStringLiteral("--namespace"),
                       QStringLiteral("slow"), QStringLiteral("--batch-size"), QStringLiteral("1"),
                       QStringLiteral("--rate"), QStringLiteral("5"), QStringLiteral("--yes"),
                       QStringLiteral("--db"), connInfo()});
        QVERIFY(process.waitForStarted());
        QByteArray err;
        QTRY_VERIFY_WITH_TIMEOUT((err += process.readAllStandardError()).contains("requeue: 2/40"),
                                 30000);
        ::kill(pid_t(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(60000));
        err += process.readAllStandardError();
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 130);
        QVERIFY2(err.contains("Interrupted"), err.constData());
        const auto match =
            QRegularExpression(QStringLiteral("^requeue: changed (\\d+), skipped 0")).match(out);
        QVERIFY2(match.hasMatch(), qPrintable(out));
        const qint64 changed = match.captured(1).toLongLong();
        QVERIFY2(changed >= 2 && changed < 40, qPrintable(out));
        QCOMPARE(count(QStringLiteral("namespace = 'slow' AND status = 'pending'")), changed);
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT affected FROM outbox_audit")).toLongLong(),
                 changed);
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlActions)
#include "tst_outboxctl_actions.moc"
