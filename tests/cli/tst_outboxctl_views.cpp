// outboxctl's read side: stats, list (keyset paging with a cursor) and show,
// checked against what is in the database.

#include "ctl.h"
#include "store/migrator.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <csignal>

using namespace outbox::testing;

class TestOutboxctlViews final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    QString connInfo() const { return m_pg->connInfo(m_dbName); }

    static QStringList column(QSqlDatabase db, const QString &sql) {
        QStringList values;
        QSqlQuery query(db);
        if (!query.exec(sql)) {
            qWarning() << "query failed:" << sql;
            return values;
        }
        while (query.next())
            values << query.value(0).toString();
        return values;
    }

    static QString uuidText(const QString &raw) {
        return QUuid::fromString(raw).toString(QUuid::WithoutBraces);
    }

    // Follows "next cursor" until the last page; returns every id seen.
    QStringList pageThrough(const QString &db, const QStringList &extra, bool json) {
        QStringList ids;
        QString cursor;
        for (int page = 0; page < 100; ++page) {
            QStringList arguments{QStringLiteral("list"),
                                  QStringLiteral("--db"),
                                  db,
                                  QStringLiteral("--limit"),
                                  QStringLiteral("5"),
                                  json ? QStringLiteral("--json") : QStringLiteral("--jsonl")};
            arguments << extra;
            if (!cursor.isEmpty())
                arguments << QStringLiteral("--after") << cursor;
            const CtlResult result = runCtl(arguments);
            if (!result.finished || result.exitCode != 0) {
                qWarning().noquote() << "list failed:" << result.all();
                return {};
            }
            if (json) {
                const QJsonObject object = parseObject(result.out);
                const QJsonArray events = object.value(QLatin1String("events")).toArray();
                for (const QJsonValue &event : events)
                    ids << event.toObject().value(QLatin1String("id")).toString();
                cursor = object.value(QLatin1String("next_cursor")).toString();
            } else {
                const QStringList lines = result.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
                for (const QString &line : lines)
                    ids << parseObject(line).value(QLatin1String("id")).toString();
                const auto match =
                    QRegularExpression(QStringLiteral("next cursor: (\\S+)")).match(result.err);
                cursor = match.hasMatch() ? match.captured(1) : QString();
            }
            if (cursor.isEmpty())
                return ids;
        }
        qWarning("paging did not end");
        return {};
    }

private Q_SLOTS:
    void stats() {

        Seed seed{.nameSpace = QStringLiteral("a"),
                  .topic = QStringLiteral("t1"),
                  .createdAgo = QStringLiteral("10 minutes")};
        QVERIFY(!seedEvent(m_db, seed).isEmpty()); // the oldest pending event
        seed.createdAgo = QStringLiteral("1 minute");
        seedEvents(m_db, seed, 2);
        seed.attempts = 2;
        seed.nextIn = QStringLiteral("1 hour");
        seed.lastError = QStringLiteral("HTTP 503");
        seedEvents(m_db, seed, 2);
        Seed processing{.nameSpace = QStringLiteral("a"),
                        .topic = QStringLiteral("t2"),
                        .status = QStringLiteral("processing"),
                        .attempts = 1,
                        .leaseIn = QStringLiteral("5 minutes")};
        seedEvent(m_db, processing);
        processing.leaseIn = QStringLiteral("-1 minute");
        seedEvent(m_db, processing);
        Seed done{.nameSpace = QStringLiteral("b"),
                  .topic = QStringLiteral("t1"),
                  .status = QStringLiteral("delivered"),
                  .attempts = 1};
        seedEvents(m_db, done, 4);
        done.status = QStringLiteral("dead");
        done.attempts = 10;
        done.lastError = QStringLiteral("HTTP 410");
        seedEvents(m_db, done, 2);

        CtlResult result = runCtl({QStringLiteral("stats"), QStringLiteral("--json"),
                                   QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        auto count = [&](const char *where) {
            return sqlScalar(m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") +
                                       QLatin1String(where))
                .toLongLong();
        };
        QCOMPARE(json.value(QLatin1String("pending")).toInteger(),
                 count("status = 'pending' AND attempts = 0"));
        QCOMPARE(json.value(QLatin1String("pending")).toInteger(), 3);
        QCOMPARE(json.value(QLatin1String("retrying")).toInteger(),
                 count("status = 'pending' AND attempts > 0"));
        QCOMPARE(json.value(QLatin1String("processing")).toInteger(),
                 count("status = 'processing'"));
        QCOMPARE(json.value(QLatin1String("expired_leases")).toInteger(),
                 count("status = 'processing' AND locked_until < now()"));
        QCOMPARE(json.value(QLatin1String("expired_leases")).toInteger(), 1);
        QCOMPARE(json.value(QLatin1String("delivered")).toInteger(), count("status = 'delivered'"));
        QCOMPARE(json.value(QLatin1String("delivered_estimated")).toBool(true), false);
        QCOMPARE(json.value(QLatin1String("dead")).toInteger(), count("status = 'dead'"));

        const QDateTime oldest = QDateTime::fromString(
            json.value(QLatin1String("oldest_pending_at")).toString(), Qt::ISODateWithMs);
        QVERIFY(oldest.isValid());
        QCOMPARE(oldest.toMSecsSinceEpoch(),
                 sqlScalar(m_db, QStringLiteral("SELECT floor(extract(epoch FROM min(created_at)) "
                                                "* 1000)::bigint FROM outbox_events WHERE status "
                                                "= 'pending'"))
                     .toLongLong());
        const qint64 age = json.value(QLatin1String("oldest_pending_age_ms")).toInteger();
        QVERIFY2(age >= 10 * 60 * 1000, qPrintable(QString::number(age)));
        // Due now: the 3 first attempts (the 2 retries wait an hour).
        const QDateTime due = QDateTime::fromString(
            json.value(QLatin1String("oldest_due_at")).toString(), Qt::ISODateWithMs);
        QVERIFY(due.isValid());
        QCOMPARE(
            due.toMSecsSinceEpoch(),
            sqlScalar(m_db, QStringLiteral("SELECT floor(extract(epoch FROM min(next_attempt_at))"
                                           " * 1000)::bigint FROM outbox_events WHERE status ="
                                           " 'pending' AND next_attempt_at <= now()"))
                .toLongLong());
        QVERIFY(json.value(QLatin1String("oldest_due_age_ms")).toInteger() >= 0);
        QCOMPARE(json.value(QLatin1String("blocked")).toInteger(-1), 0);

        const QJsonArray topics = json.value(QLatin1String("topics")).toArray();
        QCOMPARE(topics.size(), 3);
        QHash<QString, QJsonObject> byName;
        for (const QJsonValue &topic : topics) {
            const QJsonObject object = topic.toObject();
            byName.insert(object.value(QLatin1String("namespace")).toString() + QLatin1Char('/') +
                              object.value(QLatin1String("topic")).toString(),
                          object);
        }
        QCOMPARE(byName.value(QStringLiteral("a/t1")).value(QLatin1String("pending")).toInteger(),
                 count("status = 'pending' AND namespace = 'a' AND topic = 't1'"));
        QCOMPARE(
            byName.value(QStringLiteral("a/t2")).value(QLatin1String("processing")).toInteger(), 2);
        QCOMPARE(byName.value(QStringLiteral("b/t1")).value(QLatin1String("dead")).toInteger(), 2);

        // The table says the same for people.
        result = runCtl({QStringLiteral("stats"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QRegularExpression(QStringLiteral("\\nretrying\\s+2\\s"))),
                 qPrintable(result.out));
        QVERIFY2(result.out.contains(QRegularExpression(QStringLiteral("\\ndead\\s+2\\s"))),
                 qPrintable(result.out));
        QVERIFY(result.out.contains(QLatin1String("1 with an expired lease")));
        QVERIFY(result.out.contains(QLatin1String("Oldest pending event: created")));
        QVERIFY(result.out.contains(QLatin1String("Oldest due event:     due since")));
        QVERIFY(!result.out.contains(QLatin1String("Blocked:")));

        // A dead event ahead of a pending one of its aggregate blocks it, once
        // aggregate order is on for the database.
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET aggregate_type = 'invoice',"
                                       " aggregate_id = '7', created_at = now() - interval '1 hour'"
                                       " WHERE id = (SELECT id FROM outbox_events"
                                       "             WHERE status = 'dead' ORDER BY id LIMIT 1)")));
        // (Aggregate order goes by the writing transaction first: this one.)
        QVERIFY(sqlExec(m_db, QStringLiteral("UPDATE outbox_events SET aggregate_type = 'invoice',"
                                             " aggregate_id = '7',"
                                             " producer_xid = pg_current_xact_id()"
                                             " WHERE id = (SELECT id FROM"
                                             " outbox_events WHERE status = 'pending'"
                                             " ORDER BY id LIMIT 1)")));
        const auto blocked = [&] {
            const CtlResult stats = runCtl({QStringLiteral("stats"), QStringLiteral("--json"),
                                            QStringLiteral("--db"), connInfo()});
            return parseObject(stats.out).value(QLatin1String("blocked")).toInteger(-1);
        };
        QCOMPARE(blocked(), 0);
        QCOMPARE(outbox::store::Migrator(m_db).enableAggregateOrder().value(), true);
        QCOMPARE(blocked(), 1);
        result = runCtl({QStringLiteral("stats"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("Blocked:              1 pending event(s)")),
                 qPrintable(result.out));
    }

    void statsWatch() {
        QProcess process;
        process.setProcessEnvironment(cleanEnvironment());
        process.start(QStringLiteral(OUTBOXCTL_PATH),
                      {QStringLiteral("stats"), QStringLiteral("--watch"), QStringLiteral("100ms"),
                       QStringLiteral("--json"), QStringLiteral("--db"), connInfo()});
        QVERIFY(process.waitForStarted());
        QByteArray output;
        QTRY_VERIFY_WITH_TIMEOUT((output += process.readAllStandardOutput()).count('\n') >= 2,
                                 30000);
        for (const QByteArray &line : output.split('\n')) {
            if (!line.isEmpty())
                QCOMPARE(
                    parseObject(QString::fromUtf8(line)).value(QLatin1String("dead")).toInt(-1), 0);
        }
        ::kill(pid_t(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 0);
    }

    void listPaging_data() {
        QTest::addColumn<bool>("json");
        QTest::addColumn<bool>("oldestFirst");
        QTest::newRow("jsonl newest first") << false << false;
        QTest::newRow("jsonl oldest first") << false << true;
        QTest::newRow("json newest first") << true << false;
        QTest::newRow("json oldest first") << true << true;
    }

    void listPaging() {
        QFETCH(bool, json);
        QFETCH(bool, oldestFirst);
        // Ties are the hard case for keyset paging: 13 events share one
        // created_at (one statement), 10 more differ by microseconds.
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, "
                                             "payload) SELECT outbox_uuid_v7(), 'n', 't', "
                                             "jsonb_build_object('i', i) FROM generate_series(1, "
                                             "13) i")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, "
                                             "payload, created_at) SELECT gen_random_uuid(), 'n', "
                                             "'t', '{}', now() - i * interval '7 microseconds' "
                                             "FROM generate_series(1, 10) i")));
        const QStringList expected = column(
            m_db, QStringLiteral("SELECT id FROM outbox_events ORDER BY created_at %1, id %1")
                      .arg(oldestFirst ? QLatin1String("ASC") : QLatin1String("DESC")));
        QCOMPARE(expected.size(), 23);

        const QStringList seen = pageThrough(
            connInfo(), oldestFirst ? QStringList{QStringLiteral("--oldest-first")} : QStringList{},
            json);
        QStringList expectedIds;
        for (const QString &id : expected)
            expectedIds << uuidText(id);
        QCOMPARE(seen, expectedIds); // every row once, in order
    }

    void listFiltersAndTable() {
        Seed seed;
        seedEvents(m_db, seed, 3);
        seed.status = QStringLiteral("dead");
        seed.attempts = 10;
        seed.lastError = QStringLiteral("HTTP 500: upstream exploded");
        const QStringList dead = seedEvents(m_db, seed, 2);

        CtlResult result =
            runCtl({QStringLiteral("list"), QStringLiteral("--status"), QStringLiteral("dead"),
                    QStringLiteral("--jsonl"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QSet<QString> ids;
        for (const QString &line : result.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
            const QJsonObject event = parseObject(line);
            QCOMPARE(event.value(QLatin1String("status")).toString(), QStringLiteral("dead"));
            QCOMPARE(event.value(QLatin1String("attempts")).toInt(), 10);
            ids.insert(event.value(QLatin1String("id")).toString());
        }
        QCOMPARE(ids, QSet<QString>(dead.begin(), dead.end()));
        QVERIFY(!result.err.contains(QLatin1String("next cursor")));

        result = runCtl({QStringLiteral("list"), QStringLiteral("--limit"), QStringLiteral("4"),
                         QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY(result.out.startsWith(QLatin1String("ID ")));
        QCOMPARE(result.out.count(QLatin1Char('\n')), 5); // header + 4 rows
        QVERIFY(result.out.contains(dead.first()));
        QVERIFY(result.out.contains(QLatin1String("upstream exploded")));
        QVERIFY(result.err.contains(QLatin1String("next cursor: ")));

        result = runCtl({QStringLiteral("list"), QStringLiteral("--error-contains"),
                         QStringLiteral("nothing like this"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QCOMPARE(result.out, QStringLiteral("No events match.\n"));
    }

    void showUnknown() {
        const CtlResult result =
            runCtl({QStringLiteral("show"), QStringLiteral("0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57"),
                    QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 1);
        QVERIFY2(result.err.contains(
                     QLatin1String("no event with id 0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57")),
                 qPrintable(result.err));
    }

    void showWhy_data() {
        QTest::addColumn<QString>("status");
        QTest::addColumn<int>("attempts");
        QTest::addColumn<QString>("nextIn");
        QTest::addColumn<QString>("leaseIn");
        QTest::addColumn<QString>("why");
        QTest::newRow("due") << QStringLiteral("pending") << 0 << QStringLiteral("-1s") << QString()
                             << QStringLiteral("pending, due now");
        QTest::newRow("scheduled") << QStringLiteral("pending") << 0 << QStringLiteral("2 hours")
                                   << QString() << QStringLiteral("pending, due in 2h");
        QTest::newRow("backoff") << QStringLiteral("pending") << 3 << QStringLiteral("5 minutes")
                                 << QString() << QStringLiteral("waiting for backoff until");
        QTest::newRow("retry due") << QStringLiteral("pending") << 3 << QStringLiteral("-5s")
                                   << QString() << QStringLiteral("after 3 failed attempts");
        QTest::newRow("leased") << QStringLiteral("processing") << 1 << QStringLiteral("0s")
                                << QStringLiteral("30 seconds")
                                << QStringLiteral("leased by worker");
        QTest::newRow("lease expired")
            << QStringLiteral("processing") << 1 << QStringLiteral("0s")
            << QStringLiteral("-2 minutes") << QStringLiteral("expired at");
        QTest::newRow("dead") << QStringLiteral("dead") << 7 << QStringLiteral("0s") << QString()
                              << QStringLiteral("dead after 7 attempts: boom");
        QTest::newRow("delivered") << QStringLiteral("delivered") << 1 << QStringLiteral("0s")
                                   << QString() << QStringLiteral("delivered at");
    }

    void showWhy() {
        QFETCH(QString, status);
        QFETCH(int, attempts);
        QFETCH(QString, nextIn);
        QFETCH(QString, leaseIn);
        QFETCH(QString, why);
        Seed seed{.status = status, .attempts = attempts, .nextIn = nextIn, .leaseIn = leaseIn};
        if (status == QLatin1String("dead"))
            seed.lastError = QStringLiteral("boom");
        const QString id = seedEvent(m_db, seed);
        QVERIFY(!id.isEmpty());

        CtlResult result = runCtl({QStringLiteral("show"), id, QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        const QRegularExpression whyLine(QStringLiteral("\\n  Why:\\s+(.*)\\n"));
        const auto match = whyLine.match(result.out);
        QVERIFY2(match.hasMatch(), qPrintable(result.out));
        QVERIFY2(match.captured(1).contains(why), qPrintable(match.captured(1)));

        result = runCtl({QStringLiteral("show"), id, QStringLiteral("--json"),
                         QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        const QJsonObject json = parseObject(result.out);
        QVERIFY(json.value(QLatin1String("why")).toString().contains(why));
        QCOMPARE(json.value(QLatin1String("event")).toObject().value(QLatin1String("status")),
                 QJsonValue(status));
    }

    void showDetail() {
        Seed seed{.status = QStringLiteral("dead"),
                  .attempts = 3,
                  .lastError = QStringLiteral("HTTP 500: still broken"),
                  .payload =
                      QStringLiteral("{\"a\": {\"b\": [1, 2]}, \"big\": 12345678901234567890}")};
        const QString id = seedEvent(m_db, seed);
        QVERIFY(!id.isEmpty());
        for (int attempt = 1; attempt <= 2; ++attempt) {
            QVERIFY(sqlExec(m_db,
                            QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, "
                                           "worker_id, http_status, duration_ms, error) VALUES "
                                           "(?::uuid, ?, gen_random_uuid(), 500, 120, ?)"),
                            {id, attempt, QStringLiteral("HTTP 500: attempt %1").arg(attempt)}));
        }
        // One operator action in the audit trail, then dead again.
        CtlResult result = runCtl({QStringLiteral("requeue"), QStringLiteral("--id"), id,
                                   QStringLiteral("--yes"), QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("UPDATE outbox_events SET status = 'dead', attempts = 3"
                                       " WHERE id = ?::uuid"),
                        {id}));

        result = runCtl({QStringLiteral("show"), id, QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.startsWith(QStringLiteral("Event ") + id), qPrintable(result.out));
        // Pretty printed, and the big number exactly as stored.
        QVERIFY2(result.out.contains(QLatin1String("\n      \"b\": [\n        1,")),
                 qPrintable(result.out));
        QVERIFY(result.out.contains(QLatin1String("\"big\": 12345678901234567890")));
        QVERIFY(result.out.contains(QLatin1String("Failed attempts (2):")));
        QVERIFY(result.out.contains(QLatin1String("HTTP 500: attempt 2")));
        QVERIFY(result.out.contains(QLatin1String("Operator actions (1):")));
        QVERIFY(result.out.contains(QRegularExpression(QStringLiteral("\\s+requeue\\s"))));

        result = runCtl({QStringLiteral("show"), QStringLiteral("--json"), id,
                         QStringLiteral("--db"), connInfo()});
        CTL_VERIFY_EXIT(result, 0);
        QVERIFY2(result.out.contains(QLatin1String("12345678901234567890")),
                 qPrintable(result.out));
        const QJsonObject json = parseObject(result.out);
        const QJsonObject event = json.value(QLatin1String("event")).toObject();
        QCOMPARE(event.value(QLatin1String("id")).toString(), id);
        QCOMPARE(event.value(QLatin1String("payload"))
                     .toObject()
                     .value(QLatin1String("a"))
                     .toObject()
                     .value(QLatin1String("b"))
                     .toArray()
                     .size(),
                 2);
        const QJsonArray attempts = json.value(QLatin1String("attempts")).toArray();
        QCOMPARE(attempts.size(), 2);
        QCOMPARE(attempts.at(0).toObject().value(QLatin1String("http_status")).toInt(), 500);
        const QJsonArray audit = json.value(QLatin1String("audit")).toArray();
        QCOMPARE(audit.size(), 1);
        QCOMPARE(audit.at(0).toObject().value(QLatin1String("action")).toString(),
                 QStringLiteral("requeue"));
    }
};

QTEST_GUILESS_MAIN(TestOutboxctlViews)
#include "tst_outboxctl_views.moc"
