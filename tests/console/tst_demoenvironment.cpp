// Demo mode end to end: a private cluster, migrations, the development
// runners and the producer come up off the GUI thread; with a dispatcher on
// the demo configuration events are delivered, retried and dead-lettered;
// stop (and, as a last resort, the destructor) removes everything. The demo
// panel and the screenshots are in tst_consoleviews.

#include "devtools/demo/demoenvironment.h"
#include "devtools/demo/demopanel.h"
#include "devtools/demo/demoproducer.h"
#include "devtools/kafkamock.h"
#include "dispatch/dispatcherhost.h"
#include "store/database.h"
#include "support/pgfixture.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <csignal>

using namespace outbox;
using console::DemoEnvironment;

namespace {

constexpr int StartTimeoutMs = 180'000;

bool processAlive(qint64 pid) {
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}

// The demo's database through a connection of the test's own.
class DemoDb {
public:
    explicit DemoDb(const core::ConnInfo &info)
        : m_name(store::uniqueConnectionName(QStringLiteral("tst-demo"))) {
        auto db = store::openDatabase(info, m_name);
        if (db)
            m_db = db.value();
        else
            qWarning().noquote() << db.errorMessage();
    }
    ~DemoDb() {
        m_db = QSqlDatabase();
        store::closeDatabase(m_name);
    }
    Q_DISABLE_COPY_MOVE(DemoDb)
    QSqlDatabase db() const { return m_db; }
    qint64 count(const QString &where) const {
        return testing::sqlScalar(
                   m_db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") + where)
            .toLongLong();
    }

private:
    QString m_name;
    QSqlDatabase m_db;
};

bool waitReady(DemoEnvironment &demo) {
    QSignalSpy ready(&demo, &DemoEnvironment::ready);
    QSignalSpy failed(&demo, &DemoEnvironment::failed);
    demo.start();
    const bool done =
        QTest::qWaitFor([&] { return ready.count() + failed.count() > 0; }, StartTimeoutMs);
    if (!failed.isEmpty())
        qWarning().noquote() << "demo failed:" << failed.constFirst().constFirst().toString();
    return done && ready.count() == 1 && demo.isReady();
}

} // namespace

class TestDemoEnvironment : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void producerMix();
    void flowDeliverRetryDieStop();
    void destructorCleansUp();
    void stopWhileStarting();
};

void TestDemoEnvironment::producerMix() {
    console::DemoProducer producer(core::ConnInfo{},
                                   QLatin1String(DemoEnvironment::PoisonNamespace),
                                   QLatin1String(DemoEnvironment::PoisonTopic));
    QSet<QString> namespaces;
    QSet<QString> topics;
    int poison = 0;
    int deduped = 0;
    int tenants = 0;
    for (int i = 0; i < 2000; ++i) {
        const store::EnqueueRequest request = producer.nextEvent();
        QVERIFY(!request.nameSpace.isEmpty());
        QVERIFY(!request.topic.isEmpty());
        QJsonParseError error;
        const QJsonDocument json = QJsonDocument::fromJson(request.payload, &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(json.isObject() && json.object().size() >= 3);
        namespaces.insert(request.nameSpace);
        topics.insert(request.nameSpace + QLatin1Char('/') + request.topic);
        if (request.nameSpace == QLatin1String(DemoEnvironment::PoisonNamespace) &&
            request.topic == QLatin1String(DemoEnvironment::PoisonTopic))
            ++poison;
        if (request.dedupeKey)
            ++deduped;
        if (request.tenantId) {
            ++tenants;
            // modkit §1.6, enforced by outbox_enqueue(): a tenant's key starts with it.
            if (request.dedupeKey)
                QVERIFY(request.dedupeKey->startsWith(
                    request.tenantId->toString(QUuid::WithoutBraces) + QLatin1Char('/')));
        }
    }
    QCOMPARE(namespaces.size(), 3);
    QVERIFY(topics.size() >= 8);
    QVERIFY(poison > 0 && poison < 200);
    QVERIFY(deduped > 0 && deduped < 2000);
    QVERIFY(tenants > 0 && tenants < 2000);
}

void TestDemoEnvironment::flowDeliverRetryDieStop() {
    DemoEnvironment demo;
    QSignalSpy progress(&demo, &DemoEnvironment::progress);
    QSignalSpy stopped(&demo, &DemoEnvironment::stopped);
    QVERIFY(waitReady(demo));
    QVERIFY(progress.count() >= 3);

    const QString dir = demo.clusterDirectory();
    const qint64 pid = demo.postgresPid();
    QVERIFY(QFileInfo(dir).isDir());
    QVERIFY(processAlive(pid));
    QVERIFY(demo.runnerUrl().isValid());

    const core::DispatcherConfig config = demo.dispatcherConfig();
    QVERIFY2(config.validate().ok(), qPrintable(config.validate().errorMessage()));
    QCOMPARE(config.runnerUrl, demo.runnerUrl());
    QCOMPARE(config.maxAttempts, 5);
    QVERIFY(!config.secrets.isEmpty());

    QTRY_VERIFY_WITH_TIMEOUT(demo.producedCount() > 0, 30000);
    {
        DemoDb db(demo.connInfo());
        QVERIFY(db.db().isOpen());
        QTRY_VERIFY_WITH_TIMEOUT(db.count(QStringLiteral("true")) >= 100, 60000);
        QCOMPARE(testing::sqlScalar(db.db(), QStringLiteral("SELECT count(DISTINCT namespace) "
                                                            "FROM outbox_events")),
                 QStringLiteral("3"));
        // The panel's Ordering can be tried in the demo.
        QCOMPARE(testing::sqlScalar(db.db(), QStringLiteral("SELECT outbox_aggregate_order_on()")),
                 QStringLiteral("true"));

        dispatch::DispatcherHost host(demo.connInfo(), config, demo.publisherFactory());
        QSignalSpy hostStopped(&host, &dispatch::DispatcherHost::stopped);
        host.start();
        QTRY_VERIFY_WITH_TIMEOUT(db.count(QStringLiteral("status = 'delivered'")) > 50, 60000);
        // The Kafka namespace goes to the mock cluster through the routes:
        // its delivered rows are there, and nothing of another namespace.
        const QString kafkaRows = QStringLiteral("status = 'delivered' AND namespace = '") +
                                  QLatin1String(DemoEnvironment::KafkaNamespace) +
                                  QLatin1Char('\'');
        QTRY_VERIFY_WITH_TIMEOUT(db.count(kafkaRows) > 0, 60000);
        const QStringList deliveredToKafka = testing::sqlColumn(
            db.db(), QStringLiteral("SELECT id FROM outbox_events WHERE ") + kafkaRows);
        QVERIFY(demo.kafkaCluster());
        QString kafkaError;
        QSet<QString> inKafka;
        for (const auto &record : demo.kafkaCluster()->readAll(
                 QLatin1String(DemoEnvironment::KafkaTopic), &kafkaError)) {
            QCOMPARE(record.header("outbox-namespace"),
                     QByteArray(DemoEnvironment::KafkaNamespace));
            inKafka.insert(QString::fromLatin1(record.header("outbox-id")));
        }
        QVERIFY2(kafkaError.isEmpty(), qPrintable(kafkaError));
        for (const QString &id : deliveredToKafka)
            QVERIFY2(inKafka.contains(id), qPrintable(id + QStringLiteral(" is not in Kafka")));
        // The panel says where each namespace goes.
        const console::DemoPanel panel(&demo);
        const auto *routes = panel.findChild<QLabel *>(QStringLiteral("demoRoutes"));
        QVERIFY(routes);
        QVERIFY2(
            routes->text().contains(QStringLiteral("users → users-log (Kafka topic demo.users")),
            qPrintable(routes->text()));
        QVERIFY2(routes->text().contains(QStringLiteral("everything else → webhooks")),
                 qPrintable(routes->text()));
        // The runner fails ~10% with 503: retried, recorded in outbox_attempts.
        QTRY_VERIFY_WITH_TIMEOUT(
            testing::sqlScalar(db.db(), QStringLiteral("SELECT count(*) FROM outbox_attempts "
                                                       "WHERE http_status = 503"))
                    .toLongLong() > 0,
            60000);
        // The poison topic is rejected with 422 until max_attempts, then dead.
        QTRY_VERIFY_WITH_TIMEOUT(db.count(QStringLiteral("status = 'dead'")) > 0, 120000);
        QCOMPARE(db.count(QStringLiteral("status = 'dead' AND attempts < 5")), 0);
        QVERIFY(db.count(QStringLiteral("status = 'dead' AND topic = '") +
                         QLatin1String(DemoEnvironment::PoisonTopic) +
                         QStringLiteral("' AND last_error LIKE '%422%'")) > 0);
        QVERIFY(demo.runnerStats().delivered > 0);
        QCOMPARE(demo.runnerStats().badSignatures, 0); // signed with the demo secret

        // Live controls reach the runner (thread-safe setters) and the producer.
        demo.setRunnerFailRate(0.5);
        QCOMPARE(demo.settings().failRate, 0.5);
        demo.setProducerPaused(true);
        QTest::qWait(500); // the pause is queued to the producer's thread
        const qint64 before = db.count(QStringLiteral("true"));
        QTest::qWait(1500);
        QCOMPARE(db.count(QStringLiteral("true")), before);
        demo.setProducerPaused(false);
        QTRY_VERIFY_WITH_TIMEOUT(db.count(QStringLiteral("true")) > before, 30000);

        host.stop();
        QTRY_COMPARE_WITH_TIMEOUT(hostStopped.count(), 1, 30000);
    }

    demo.stop();
    QVERIFY(demo.state() == DemoEnvironment::State::Stopping);
    QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, 120000);
    QCOMPARE(demo.state(), DemoEnvironment::State::Stopped);
    QVERIFY(!QFileInfo::exists(dir));
    QTRY_VERIFY_WITH_TIMEOUT(!processAlive(pid), 30000);

    // A second stop is harmless and still answers.
    demo.stop();
    QTRY_COMPARE(stopped.count(), 2);
}

void TestDemoEnvironment::destructorCleansUp() {
    QString dir;
    qint64 pid = 0;
    {
        DemoEnvironment demo;
        QVERIFY(waitReady(demo));
        dir = demo.clusterDirectory();
        pid = demo.postgresPid();
        QVERIFY(QFileInfo(dir).isDir());
        QVERIFY(processAlive(pid));
        QTRY_VERIFY_WITH_TIMEOUT(demo.producedCount() > 0, 30000);
    }
    QVERIFY(!QFileInfo::exists(dir));
    QTRY_VERIFY_WITH_TIMEOUT(!processAlive(pid), 30000);
}

void TestDemoEnvironment::stopWhileStarting() {
    // The cluster's temporary directory goes under TMPDIR: a private one
    // shows whether anything is left behind.
    QTemporaryDir base;
    QVERIFY(base.isValid());
    // The server runs as `postgres` when the test runs as root: it must be
    // able to enter the directory, or the cluster would go elsewhere.
    QVERIFY(QFile::setPermissions(base.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                   QFileDevice::ExeOwner | QFileDevice::ReadGroup |
                                                   QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                                   QFileDevice::ExeOther));
    const QByteArray oldTmp = qgetenv("TMPDIR");
    qputenv("TMPDIR", QFile::encodeName(base.path()));
    const auto restore = qScopeGuard([&] {
        if (oldTmp.isNull())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", oldTmp);
    });

    DemoEnvironment demo;
    QSignalSpy ready(&demo, &DemoEnvironment::ready);
    QSignalSpy stopped(&demo, &DemoEnvironment::stopped);
    demo.start();
    QCOMPARE(demo.state(), DemoEnvironment::State::Starting);
    demo.stop();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 1, StartTimeoutMs);
    QCOMPARE(ready.count(), 0);
    QCOMPARE(demo.state(), DemoEnvironment::State::Stopped);
    // The half-started cluster's directory is gone as well.
    const QStringList left = QDir(base.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char(' '))));

    // And the environment can start again afterwards, in the same place
    // (which shows that the check above looked where the cluster lives).
    QVERIFY(waitReady(demo));
    QVERIFY2(demo.clusterDirectory().startsWith(base.path()), qPrintable(demo.clusterDirectory()));
    demo.stop();
    QTRY_COMPARE_WITH_TIMEOUT(stopped.count(), 2, 120000);
}

QTEST_MAIN(TestDemoEnvironment)
#include "tst_demoenvironment.moc"
