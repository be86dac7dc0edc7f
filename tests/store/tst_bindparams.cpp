// Secrets and payloads travel as bind parameters (store::execBound), not in
// the statement's text: another session of the same login reading
// pg_stat_activity sees the statement with $1, $2, ..., and a statement log
// writes the values only as parameters, which log_parameter_max_length = 0
// leaves out. Each statement is held behind a lock while the view is read.

#include "core/conninfo.h"
#include "store/boundstatement.h"
#include "store/outboxstore.h"
#include "store/registrystore.h"
#include "store/session.h"
#include "support/pgtestcase.h"

#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>
#include <QThread>
#include <QtTest>

#include <functional>

using namespace outbox;
using outbox::testing::sqlExec;
using outbox::testing::sqlScalar;

class TestBindParams final : public outbox::testing::PgTestSuite {
    Q_OBJECT

private:
    core::ConnInfo info() const { return core::ConnInfo::parse(m_pg->connInfo(m_dbName)).value(); }

    // Runs `statement` on a session of its own in another thread while `table`
    // is locked, and returns what pg_stat_activity shows of it meanwhile.
    // `statement` gets the open session and returns whether it succeeded.
    QString activityWhileBlocked(const QString &table,
                                 const std::function<bool(store::Session &)> &statement) {
        QSqlDatabase blocker = m_pg->open(m_dbName);
        if (!blocker.transaction() ||
            !sqlExec(blocker, QStringLiteral("LOCK TABLE %1 IN ACCESS EXCLUSIVE MODE").arg(table)))
            return QStringLiteral("(could not lock %1)").arg(table);
        bool succeeded = false;
        QThread *worker = QThread::create([this, &statement, &succeeded] {
            store::Session session(info(), {.applicationName = QStringLiteral("tst-bound")});
            const auto opened = session.open();
            if (!opened.ok())
                qWarning().noquote() << "cannot open a session:" << opened.errorMessage();
            succeeded = opened.ok() && statement(session);
        });
        worker->start();
        QString shown;
        const QString query = QStringLiteral("SELECT coalesce(max(query), '') FROM pg_stat_activity"
                                             " WHERE application_name = 'tst-bound'"
                                             " AND wait_event_type = 'Lock'");
        [&] { QTRY_VERIFY_WITH_TIMEOUT(!(shown = sqlScalar(m_db, query)).isEmpty(), 60000); }();
        blocker.commit();
        [&] { QTRY_VERIFY_WITH_TIMEOUT(worker->isFinished(), 60000); }();
        delete worker;
        if (!succeeded)
            return QStringLiteral("(the statement failed)");
        return shown;
    }

    static store::EnqueueRequest request(const QByteArray &marker) {
        store::EnqueueRequest r;
        r.nameSpace = QStringLiteral("billing");
        r.topic = QStringLiteral("invoice.paid");
        r.payload = "{\"card\": \"" + marker + "\"}";
        return r;
    }

private Q_SLOTS:
    void payloadIsNotInTheActivityView() {
        const QByteArray marker = "4111-1111-1111-1111";
        const QString shown =
            activityWhileBlocked(QStringLiteral("outbox_events"), [&](store::Session &session) {
                const auto enqueued = store::OutboxStore(session).enqueue(request(marker));
                if (!enqueued.ok())
                    qWarning().noquote() << enqueued.errorMessage();
                return enqueued.ok();
            });
        qInfo().noquote() << "pg_stat_activity.query:" << shown;
        QVERIFY2(shown.contains(QLatin1String("outbox_enqueue($1::text")), qPrintable(shown));
        QVERIFY2(!shown.contains(QString::fromLatin1(marker)), qPrintable(shown));
        QCOMPARE(sqlScalar(m_db, QStringLiteral("SELECT payload->>'card' FROM outbox_events")),
                 QString::fromLatin1(marker));
    }

    void tokenIsNotInTheActivityView() {
        const QUuid worker = QUuid::createUuid();
        const QString token = store::RegistryStore::newToken();
        const store::DispatcherRegistration r{
            .workerId = worker,
            .token = token,
            .host = QStringLiteral("host"),
            .pid = 42,
            .version = QStringLiteral("0"),
            .application = QStringLiteral("tst"),
            .nameSpace = QString(),
            .runnerUrl = QStringLiteral("https://runner.example/events"),
            .concurrency = 4,
            .heartbeatInterval = core::Millis(5000),
            .startedAt = QDateTime::currentDateTimeUtc(),
        };
        const QString registering =
            activityWhileBlocked(QStringLiteral("outbox_dispatchers"), [&](store::Session &s) {
                return store::RegistryStore(s).registerDispatcher(r).ok();
            });
        qInfo().noquote() << "pg_stat_activity.query:" << registering;
        QVERIFY2(registering.contains(QLatin1String("outbox_dispatcher_register($1::uuid")),
                 qPrintable(registering));
        QVERIFY2(!registering.contains(token), qPrintable(registering));

        bool beaten = false;
        const QString beating =
            activityWhileBlocked(QStringLiteral("outbox_dispatchers"), [&](store::Session &s) {
                const auto result = store::RegistryStore(s).heartbeat(
                    worker, token, store::DispatcherHeartbeat{.state = QStringLiteral("running")});
                beaten = result.ok() && result.value();
                return result.ok();
            });
        QVERIFY2(!beating.contains(token), qPrintable(beating));
        QVERIFY(beaten); // the token still works: it travelled as a parameter
    }

    // With log_statement = all the server writes each statement; the values
    // appear only on the "parameters:" line, which log_parameter_max_length
    // = 0 leaves out (docs/SECURITY.md). Before, the payload was part of the
    // EXECUTE statement's own text, which no setting hides.
    void statementLogCanLeaveValuesOut() {
        const QString log =
            QFileInfo(m_pg->cluster().dataDirectory()).path() + QStringLiteral("/server.log");
        const auto logged = [&log] {
            QFile file(log);
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const auto enqueueLogged = [&](const QByteArray &marker, const QStringList &settings) {
            store::Session session(info(), {.applicationName = QStringLiteral("tst-log")});
            if (!session.open().ok())
                return false;
            for (const QString &setting : settings) {
                QSqlQuery set(session.database());
                if (!set.exec(QStringLiteral("SET ") + setting))
                    return false;
            }
            return store::OutboxStore(session).enqueue(request(marker)).ok();
        };
        QVERIFY(enqueueLogged("marker-with-parameters", {QStringLiteral("log_statement = 'all'")}));
        QTRY_VERIFY(logged().contains("marker-with-parameters"));
        for (const QByteArray &line : logged().split('\n')) {
            if (line.contains("marker-with-parameters"))
                QVERIFY2(line.contains("parameters:"), line.constData());
        }
        QVERIFY(enqueueLogged("marker-left-out", {QStringLiteral("log_statement = 'all'"),
                                                  QStringLiteral("log_parameter_max_length = 0")}));
        // The statement itself is logged, its values are not.
        QTRY_VERIFY(logged().count("outbox_enqueue($1::text") >= 2);
        QVERIFY(!logged().contains("marker-left-out"));
    }

    void errorsNameNoValue() {
        store::Session session(info(), {.applicationName = QStringLiteral("tst-bound")});
        QVERIFY(session.open().ok());
        store::EnqueueRequest bad = request("x");
        bad.payload = "{\"secret-value\": ";
        const auto refused = store::OutboxStore(session).enqueue(bad);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.errorKind(), core::ErrorKind::Invalid);
        QVERIFY2(!refused.errorMessage().contains(QLatin1String("secret-value")),
                 qPrintable(refused.errorMessage()));
        QVERIFY2(refused.errorMessage().startsWith(QLatin1String("enqueueing an event: ")),
                 qPrintable(refused.errorMessage()));
        // The session is still usable afterwards, by QPSQL and by execBound().
        QVERIFY(session.probe().ok());
        const auto rows = store::execBound(session.database(),
                                           QStringLiteral("SELECT $1::int + 1, $2::text IS NULL"),
                                           {41, QVariant()}, QStringLiteral("adding"));
        QVERIFY(rows.ok());
        QCOMPARE(rows->value(0, 0), std::optional<QString>(QStringLiteral("42")));
        QVERIFY(rows->isTrue(0, 1));
    }
};

QTEST_GUILESS_MAIN(TestBindParams)
#include "tst_bindparams.moc"
