// The dispatcher panel under the offscreen platform: inline validation,
// settings persistence without the secret, and a real run against the
// embedded PostgreSQL and a development runner (figures, charts, log,
// graceful close).

#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/logview.h"
#include "console/widgets/throughputchart.h"
#include "core/routes.h"
#include "devtools/devrunner.h"
#include "store/database.h"
#include "store/outboxstore.h"
#include "store/queries.h"
#include "support/pgtestcase.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace outbox;
using console::DispatcherPanel;
using console::ThroughputChart;

namespace {

template <typename T> T *child(QWidget *parent, const char *name) {
    T *found = parent->findChild<T *>(QLatin1String(name));
    if (!found)
        qWarning() << "no child" << name;
    return found;
}

QString figure(DispatcherPanel &panel, const char *key) {
    QLabel *label = panel.findChild<QLabel *>(QStringLiteral("figure:") + QLatin1String(key));
    return label ? label->text() : QString();
}

// The console's settings file, in a directory removed with the object.
class SettingsFile final {
public:
    bool isValid() const { return m_dir.isValid(); }
    std::unique_ptr<QSettings> open() const {
        return std::make_unique<QSettings>(path(), QSettings::IniFormat);
    }
    // What the file holds (empty, with a warning, when it cannot be read).
    QByteArray contents() const {
        QFile file(path());
        if (!file.open(QIODevice::ReadOnly)) {
            qWarning().noquote() << "cannot read" << path();
            return {};
        }
        return file.readAll();
    }

private:
    QString path() const { return m_dir.filePath(QStringLiteral("console.ini")); }

    QTemporaryDir m_dir;
};

core::DispatcherConfig validConfig() {
    core::DispatcherConfig config;
    config.runnerUrl = QUrl(QStringLiteral("http://127.0.0.1:9/events"));
    config.lease = core::Millis(30'000);
    config.pollInterval = core::Millis(1000);
    config.requestTimeout = core::Millis(5000);
    return config;
}

} // namespace

class TestDispatcherPanel : public outbox::testing::PgTestSuite {
    Q_OBJECT

public:
    TestDispatcherPanel()
        : PgTestSuite(outbox::testing::migrateSchema, PerTest::Nothing) {}

private Q_SLOTS:
    void validation_data();
    void validation();
    void validFormEnablesStart();
    void freshFormAsksForTheRunnerWithoutAlarm();
    void readOnlyDisablesStart();
    void settingsPersistWithoutSecret();
    void runnerUrlCredentialsAreNotSaved();
    void batchDeliverySetting();
    void routesFileSetting();
    void readyToCloseWhenIdle();
    void logIsBounded();
    void chartKeepsWindow();
    void chartBreaksWhereSamplesStopped();
    void runAgainstDatabase();
    void startFailureIsShown();
    void destroyWhileRunning();
    void stopNeverBlocksTheGuiThread();
};

void TestDispatcherPanel::validation_data() {
    QTest::addColumn<QString>("field");    // object name of the edited widget
    QTest::addColumn<QString>("text");     // entered text
    QTest::addColumn<QString>("mentions"); // the field's label in the message

    QTest::newRow("poll interval above lease/3")
        << QStringLiteral("pollInterval") << QStringLiteral("20s")
        << QStringLiteral("Poll interval");
    QTest::newRow("request timeout not below lease")
        << QStringLiteral("requestTimeout") << QStringLiteral("30s")
        << QStringLiteral("Request timeout");
    QTest::newRow("lease not a duration")
        << QStringLiteral("lease") << QStringLiteral("thirty") << QStringLiteral("Lease");
    QTest::newRow("bare number") << QStringLiteral("baseDelay") << QStringLiteral("500")
                                 << QStringLiteral("Backoff base");
    QTest::newRow("base above max")
        << QStringLiteral("baseDelay") << QStringLiteral("1h") << QStringLiteral("Backoff base");
    QTest::newRow("not http") << QStringLiteral("runnerUrl")
                              << QStringLiteral("ftp://example.com/x")
                              << QStringLiteral("Runner URL");
    QTest::newRow("empty url") << QStringLiteral("runnerUrl") << QString()
                               << QStringLiteral("Runner URL");
    QTest::newRow("bad secret") << QStringLiteral("secret") << QStringLiteral("whsec_###")
                                << QStringLiteral("Secret");
}

void TestDispatcherPanel::validation() {
    QFETCH(QString, field);
    QFETCH(QString, text);
    QFETCH(QString, mentions);

    DispatcherPanel panel;
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo()).value());
    panel.setConfig(validConfig(), false);
    panel.show();
    auto *start = child<QPushButton>(&panel, "dispatcherStart");
    QVERIFY(start);
    QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));
    QVERIFY(start->isEnabled());

    auto *edit = child<QLineEdit>(&panel, field.toLatin1().constData());
    QVERIFY(edit);
    edit->setText(text);

    const QString message = panel.validationError();
    QVERIFY2(message.contains(mentions), qPrintable(message));
    QVERIFY2(!message.contains(QLatin1String("--")), qPrintable(message)); // no CLI flags
    auto *label = child<QLabel>(&panel, "validationMessage");
    QVERIFY(label && label->isVisible());
    QCOMPARE(label->text(), message);
    QVERIFY(!start->isEnabled());
    QVERIFY(start->toolTip().contains(message));
    QVERIFY(edit->styleSheet().contains(QLatin1String("border")));
    // The secret never shows up in a message.
    if (field == QLatin1String("secret"))
        QVERIFY(!message.contains(text));
}

void TestDispatcherPanel::validFormEnablesStart() {
    DispatcherPanel panel;
    auto *start = child<QPushButton>(&panel, "dispatcherStart");
    QVERIFY(start);
    panel.setConfig(validConfig(), false);
    QVERIFY(!start->isEnabled()); // no database yet
    QVERIFY(start->toolTip().contains(QLatin1String("database")));
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo()).value());
    QVERIFY(start->isEnabled());
    QVERIFY(!child<QPushButton>(&panel, "dispatcherStop")->isEnabled());
    QVERIFY(!child<QPushButton>(&panel, "dispatcherApply")->isEnabled());

    const core::DispatcherConfig config = panel.config();
    QCOMPARE(config.runnerUrl, validConfig().runnerUrl);
    QCOMPARE(config.pollInterval, core::Millis(1000));
    QCOMPARE(config.requestTimeout, core::Millis(5000));
}

// A console that never ran a dispatcher shows what to fill in, not an error
// in red; once the user edits the URL, mistakes are marked as usual.
void TestDispatcherPanel::freshFormAsksForTheRunnerWithoutAlarm() {
    DispatcherPanel panel;
    panel.show();
    auto *label = child<QLabel>(&panel, "validationMessage");
    QVERIFY(label && label->isVisible());
    QVERIFY2(panel.validationError().contains(QLatin1String("Runner URL")),
             qPrintable(panel.validationError()));
    QVERIFY2(!label->styleSheet().contains(QLatin1String("#c01c28")),
             qPrintable(label->styleSheet()));
    auto *url = child<QLineEdit>(&panel, "runnerUrl");
    QVERIFY(url);
    QVERIFY(!url->styleSheet().contains(QLatin1String("border")));
    QVERIFY(!child<QPushButton>(&panel, "dispatcherStart")->isEnabled());

    url->setText(QStringLiteral("ftp://runner"));
    QVERIFY(label->styleSheet().contains(QLatin1String("#c01c28")));
    QVERIFY(url->styleSheet().contains(QLatin1String("border")));
}

void TestDispatcherPanel::readOnlyDisablesStart() {
    DispatcherPanel panel;
    panel.setConfig(validConfig(), false);
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo()).value());
    panel.setReadOnly(true, QStringLiteral("Read-only: the role cannot update outbox_events."));
    auto *start = child<QPushButton>(&panel, "dispatcherStart");
    QVERIFY(!start->isEnabled());
    QCOMPARE(start->toolTip(), QStringLiteral("Read-only: the role cannot update outbox_events."));
    panel.start();
    QVERIFY(!panel.isRunning());
    panel.setReadOnly(false);
    QVERIFY(start->isEnabled());
}

void TestDispatcherPanel::settingsPersistWithoutSecret() {
    const SettingsFile file;
    QVERIFY(file.isValid());
    const QString secret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    {
        const auto settings = file.open();
        DispatcherPanel panel(settings.get());
        child<QLineEdit>(&panel, "runnerUrl")->setText(QStringLiteral("http://runner.test/hooks"));
        child<QLineEdit>(&panel, "secret")->setText(secret);
        child<QSpinBox>(&panel, "concurrency")->setValue(7);
        child<QLineEdit>(&panel, "lease")->setText(QStringLiteral("45s"));
        child<QCheckBox>(&panel, "aggregateOrder")->setChecked(true);
        QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));
        QCOMPARE(child<QLineEdit>(&panel, "secret")->echoMode(), QLineEdit::Password);
        settings->sync();
    }
    const QByteArray contents = file.contents();
    QVERIFY(contents.contains("runner.test"));
    QVERIFY(!contents.contains("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"));
    QVERIFY(!contents.toLower().contains("whsec"));

    const auto settings = file.open();
    DispatcherPanel panel(settings.get());
    const core::DispatcherConfig config = panel.config();
    QCOMPARE(config.runnerUrl, QUrl(QStringLiteral("http://runner.test/hooks")));
    QCOMPARE(config.concurrency, 7);
    QCOMPARE(config.lease, core::Millis(45'000));
    QCOMPARE(config.ordering, core::Ordering::Aggregate);
    QVERIFY(config.secrets.isEmpty());

    // Demo values (persist = false) never overwrite the saved settings.
    core::DispatcherConfig demo = validConfig();
    panel.setConfig(demo, false);
    child<QSpinBox>(&panel, "concurrency")->setValue(3);
    settings->sync();
    const auto reread = file.open();
    QCOMPARE(reread->value(QStringLiteral("dispatcher/runnerUrl")).toString(),
             QStringLiteral("http://runner.test/hooks"));
    QCOMPARE(reread->value(QStringLiteral("dispatcher/concurrency")).toInt(), 7);
}

// Credentials in the runner URL work for the session but never reach the
// settings file.
void TestDispatcherPanel::runnerUrlCredentialsAreNotSaved() {
    const SettingsFile file;
    QVERIFY(file.isValid());
    {
        const auto settings = file.open();
        DispatcherPanel panel(settings.get());
        child<QLineEdit>(&panel, "runnerUrl")
            ->setText(QStringLiteral("https://ops:Sup3rSecretPw@runner.test/hooks"));
        QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));
        QCOMPARE(panel.config().runnerUrl.password(), QStringLiteral("Sup3rSecretPw"));
        settings->sync();
    }
    const QByteArray contents = file.contents();
    QVERIFY2(contents.contains("runner.test/hooks"), contents.constData());
    QVERIFY2(!contents.contains("Sup3rSecretPw"), contents.constData());
    QVERIFY2(!contents.contains("ops@"), contents.constData());
}

void TestDispatcherPanel::batchDeliverySetting() {
    const SettingsFile file;
    QVERIFY(file.isValid());
    {
        const auto settings = file.open();
        DispatcherPanel panel(settings.get());
        child<QLineEdit>(&panel, "runnerUrl")->setText(QStringLiteral("http://runner.test/hooks"));
        auto *delivery = child<QComboBox>(&panel, "delivery");
        auto *maxEvents = child<QSpinBox>(&panel, "batchMaxEvents");
        auto *maxBytes = child<QSpinBox>(&panel, "batchMaxBytes");
        QVERIFY(delivery && maxEvents && maxBytes);
        QCOMPARE(panel.config().delivery, core::Delivery::PerEvent);
        QVERIFY(!maxEvents->isEnabled()); // only meaningful for batches
        delivery->setCurrentIndex(delivery->findText(QStringLiteral("Batch")));
        QVERIFY(maxEvents->isEnabled() && maxBytes->isEnabled());
        maxEvents->setValue(250);
        maxBytes->setValue(200000);
        QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));
        const core::DispatcherConfig config = panel.config();
        QCOMPARE(config.delivery, core::Delivery::Batch);
        QCOMPARE(config.batchMaxEvents, 250);
        QCOMPARE(config.batchMaxBytes, 200000);
        settings->sync();
    }
    const auto settings = file.open();
    DispatcherPanel panel(settings.get());
    const core::DispatcherConfig config = panel.config();
    QCOMPARE(config.delivery, core::Delivery::Batch);
    QCOMPARE(config.batchMaxEvents, 250);
    QCOMPARE(config.batchMaxBytes, 200000);
    QVERIFY(child<QSpinBox>(&panel, "batchMaxEvents")->isEnabled());
}

// A routes file instead of the runner URL: its problems with their lines
// under the form, and a good one makes the dispatcher route.
void TestDispatcherPanel::routesFileSetting() {
    QTemporaryDir dir;
    const auto write = [&dir](const char *name, const char *text) {
        QFile file(dir.filePath(QLatin1String(name)));
        if (file.open(QIODevice::WriteOnly))
            file.write(text);
        return file.fileName();
    };
    const QString bad = write("bad.routes", "[destination a]\nkind = http\nurl = http://x/e\n"
                                            "[route]\ndestination = b\n");
    const QString good = write("good.routes", "[destination a]\nkind = http\nurl = http://x/e\n"
                                              "[route]\ndestination = a\n");
    DispatcherPanel panel;
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo()).value());
    panel.setConfig(validConfig(), false);
    auto *routes = child<QLineEdit>(&panel, "routesFile");
    QVERIFY(routes);
    routes->setText(bad);
    QVERIFY2(panel.validationError().contains(bad + QStringLiteral(":4: the route's destination "
                                                                   "'b' is not defined")),
             qPrintable(panel.validationError()));
    QVERIFY(!child<QPushButton>(&panel, "dispatcherStart")->isEnabled());
    routes->setText(good);
    QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));
    const core::DispatcherConfig config = panel.config();
    QVERIFY(config.routes);
    QCOMPARE(config.routes->destinations.first().name, QStringLiteral("a"));
    QCOMPARE(config.routesFile, good);
}

void TestDispatcherPanel::readyToCloseWhenIdle() {
    DispatcherPanel panel;
    QSignalSpy ready(&panel, &DispatcherPanel::readyToClose);
    panel.stopForClose();
    QCOMPARE(ready.count(), 0); // queued: the caller's closeEvent returns first
    QTRY_COMPARE(ready.count(), 1);
}

void TestDispatcherPanel::logIsBounded() {
    console::LogView log;
    log.setMaxLines(5);
    for (int i = 0; i < 12; ++i)
        log.append(console::LogView::Level::Info, QStringLiteral("line %1\nsecond part").arg(i));
    QCOMPARE(log.lineCount(), 5);
    const QStringList lines = log.lines();
    QCOMPARE(lines.size(), 5);
    QVERIFY2(lines.last().endsWith(QLatin1String("line 11 second part")), qPrintable(lines.last()));
    QVERIFY2(lines.first().endsWith(QLatin1String("line 7 second part")),
             qPrintable(lines.first()));
    log.clear();
    QCOMPARE(log.lineCount(), 0);
}

void TestDispatcherPanel::chartKeepsWindow() {
    ThroughputChart chart;
    chart.setWindow(core::Millis(60'000));
    const QDateTime start = QDateTime::currentDateTimeUtc().addSecs(-600);
    for (int i = 0; i <= 600; i += 10)
        chart.addThroughputSample(start.addSecs(i), i, 1.0);
    const QList<QPointF> delivered = chart.points(ThroughputChart::Series::Delivered);
    // 60 s of 10 s samples, plus the one point left of the window's edge.
    QCOMPARE(delivered.size(), 8);
    QCOMPARE(delivered.last().y(), 600.0);
    QCOMPARE(chart.points(ThroughputChart::Series::Failed).size(), 8);

    store::StatusCounts counts;
    counts.pending = 12;
    counts.retrying = 3;
    counts.processing = 4;
    counts.dead = 1;
    counts.serverTime = QDateTime::currentDateTimeUtc();
    chart.addBacklogSample(counts);
    QCOMPARE(chart.points(ThroughputChart::Series::Pending).size(), 1);
    QCOMPARE(chart.points(ThroughputChart::Series::Retrying).constFirst().y(), 3.0);
    QCOMPARE(chart.points(ThroughputChart::Series::Processing).constFirst().y(), 4.0);
    QCOMPARE(chart.points(ThroughputChart::Series::Dead).constFirst().y(), 1.0);
    chart.clear();
    QVERIFY(chart.points(ThroughputChart::Series::Delivered).isEmpty());
}

void TestDispatcherPanel::chartBreaksWhereSamplesStopped() {
    ThroughputChart chart;
    chart.setWindow(core::Millis(600'000));
    const QDateTime start = QDateTime::currentDateTimeUtc().addSecs(-300);
    for (int i = 0; i <= 20; i += 2) // running
        chart.addThroughputSample(start.addSecs(i), 5.0, 0.0);
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Delivered), 1);
    for (int i = 140; i <= 150; i += 2) // two minutes later: stopped meanwhile
        chart.addThroughputSample(start.addSecs(i), 7.0, 0.0);
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Delivered), 2);
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Failed), 2);
    QCOMPARE(chart.points(ThroughputChart::Series::Delivered).size(), 11 + 6);

    store::StatusCounts counts;
    counts.serverTime = start;
    for (int i = 0; i < 3; ++i) {
        counts.serverTime = start.addSecs(2 * i);
        chart.addBacklogSample(counts);
    }
    counts.serverTime = start.addSecs(60); // the connection was lost for a minute
    chart.addBacklogSample(counts);
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Pending), 2);
    // Slower ticks are no gap.
    counts.serverTime = start.addSecs(90);
    chart.addBacklogSample(counts);
    counts.serverTime = start.addSecs(120);
    chart.addBacklogSample(counts);
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Pending), 2);

    chart.clear();
    QCOMPARE(chart.segmentCount(ThroughputChart::Series::Delivered), 1);
    QVERIFY(chart.points(ThroughputChart::Series::Delivered).isEmpty());
}

void TestDispatcherPanel::runAgainstDatabase() {
    const QString dbName = m_pg->freshMigratedDatabase();
    QVERIFY(!dbName.isEmpty());
    QSqlDatabase db = m_pg->open(dbName);
    QVERIFY(db.isOpen());

    devtools::DevRunner runner;
    QVERIFY(runner.listen().ok());
    const QString secret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    QVERIFY(runner.setSecrets({secret}).ok());
    runner.setFailRate(0.2);

    constexpr int Events = 60;
    {
        store::OutboxStore store(db);
        for (int i = 0; i < Events; ++i) {
            store::EnqueueRequest request;
            request.nameSpace = QStringLiteral("billing");
            request.topic = QStringLiteral("invoice.paid");
            request.payload = QByteArray(R"({"n":)") + QByteArray::number(i) + '}';
            QVERIFY(store.enqueue(request).ok());
        }
    }

    DispatcherPanel panel;
    panel.resize(1400, 600);
    panel.show();
    QSignalSpy running(&panel, &DispatcherPanel::runningChanged);
    QSignalSpy stats(&panel, &DispatcherPanel::statsUpdated);
    QSignalSpy ready(&panel, &DispatcherPanel::readyToClose);
    core::DispatcherConfig config = validConfig();
    config.runnerUrl = runner.url();
    config.secrets = {secret};
    config.baseDelay = core::Millis(50);
    config.maxDelay = core::Millis(200);
    config.maxAttempts = 50;
    panel.setConfig(config, false);
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo(dbName)).value());
    QVERIFY2(panel.validationError().isEmpty(), qPrintable(panel.validationError()));

    QTest::mouseClick(child<QPushButton>(&panel, "dispatcherStart"), Qt::LeftButton);
    QVERIFY(panel.isRunning());
    QCOMPARE(running.count(), 1);
    QVERIFY(!child<QPushButton>(&panel, "dispatcherStart")->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(panel.state(), dispatch::DispatcherState::Running, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(panel.lastStats().delivered, qint64(Events), 60000);
    QTRY_COMPARE_WITH_TIMEOUT(figure(panel, "delivered"), QString::number(Events), 10000);
    QCOMPARE(figure(panel, "state"), QStringLiteral("running"));
    QVERIFY(panel.lastStats().retried > 0); // the runner failed some on purpose
    QCOMPARE(runner.stats().badSignatures, 0);
    QVERIFY(stats.count() > 0);
    QTRY_VERIFY(!panel.chart()->points(ThroughputChart::Series::Delivered).isEmpty());
    QCOMPARE(panel.chart()->points(ThroughputChart::Series::Failed).size(),
             panel.chart()->points(ThroughputChart::Series::Delivered).size());
    double peak = 0.0;
    for (const QPointF &point : panel.chart()->points(ThroughputChart::Series::Delivered))
        peak = std::max(peak, point.y());
    QVERIFY(peak > 0.0);

    // Backlog samples from the console's counts.
    {
        store::EventQueries queries(db);
        const auto counts = queries.counts();
        QVERIFY(counts.ok());
        panel.addBacklogSample(counts.value());
        const auto pending = panel.chart()->points(ThroughputChart::Series::Pending);
        QCOMPARE(pending.size(), 1);
        QCOMPARE(pending.constFirst().y(), double(counts->pending));
    }

    // Live apply.
    auto *apply = child<QPushButton>(&panel, "dispatcherApply");
    QVERIFY(!apply->isEnabled());
    child<QSpinBox>(&panel, "concurrency")->setValue(5);
    QVERIFY(apply->isEnabled());
    QTest::mouseClick(apply, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel.logView()
                                 ->lines()
                                 .join(QLatin1Char('\n'))
                                 .contains(QLatin1String("Settings applied")),
                             10000);
    QTRY_COMPARE_WITH_TIMEOUT(panel.lastStats().concurrency, 5, 10000);
    QVERIFY(!apply->isEnabled());

    const QString log = panel.logView()->lines().join(QLatin1Char('\n'));
    QVERIFY2(log.contains(QLatin1String("State: running")), qPrintable(log));
    QVERIFY2(!log.contains(QLatin1String("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")), qPrintable(log));

    // Graceful close.
    panel.stopForClose();
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 30000);
    QVERIFY(!panel.isRunning());
    QCOMPARE(running.count(), 2);
    QCOMPARE(running.last().constFirst().toBool(), false);
    QCOMPARE(panel.state(), dispatch::DispatcherState::Stopped);
    QVERIFY(child<QPushButton>(&panel, "dispatcherStart")->isEnabled());
    QVERIFY(panel.logView()->lines().join(QLatin1Char('\n')).contains(QLatin1String("Stopped.")));
    QCOMPARE(testing::sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_events "
                                                   "WHERE status <> 'delivered'")),
             QStringLiteral("0"));

    const QString shots = qEnvironmentVariable("OUTBOX_SCREENSHOT_DIR");
    if (!shots.isEmpty())
        QVERIFY(panel.grab().save(shots + QStringLiteral("/dispatcher-panel-test.png")));
}

void TestDispatcherPanel::startFailureIsShown() {
    // An unmigrated database: the dispatcher refuses to start (schema check).
    const QString dbName = m_pg->freshDatabase();
    QVERIFY(!dbName.isEmpty());
    DispatcherPanel panel;
    QSignalSpy running(&panel, &DispatcherPanel::runningChanged);
    panel.setConfig(validConfig(), false);
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo(dbName)).value());
    panel.start();
    QVERIFY(panel.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(running.count(), 2, 30000);
    QVERIFY(!panel.isRunning());
    QCOMPARE(panel.state(), dispatch::DispatcherState::Failed);
    QCOMPARE(figure(panel, "state"), QStringLiteral("failed"));
    const QString log = panel.logView()->lines().join(QLatin1Char('\n'));
    QVERIFY2(log.contains(QLatin1String("error Failed: ")), qPrintable(log));
    QVERIFY2(log.contains(QLatin1String("migrate")), qPrintable(log)); // says what to do
    QVERIFY(child<QPushButton>(&panel, "dispatcherStart")->isEnabled());
}

void TestDispatcherPanel::destroyWhileRunning() {
    const QString dbName = m_pg->freshMigratedDatabase();
    QSqlDatabase db = m_pg->open(dbName);
    QVERIFY(db.isOpen());
    devtools::DevRunner runner;
    QVERIFY(runner.listen().ok());
    runner.setLatency(core::Millis(60'000)); // requests stay in flight
    {
        store::OutboxStore store(db);
        for (int i = 0; i < 5; ++i) {
            store::EnqueueRequest request;
            request.nameSpace = QStringLiteral("users");
            request.topic = QStringLiteral("user.created");
            request.payload = QByteArrayLiteral("{}");
            QVERIFY(store.enqueue(request).ok());
        }
    }
    auto panel = std::make_unique<DispatcherPanel>();
    core::DispatcherConfig config = validConfig();
    config.runnerUrl = runner.url();
    config.requestTimeout = core::Millis(9000);
    panel->setConfig(config, false);
    panel->setConnInfo(core::ConnInfo::parse(m_pg->connInfo(dbName)).value());
    panel->start();
    QTRY_COMPARE_WITH_TIMEOUT(panel->lastStats().inFlight, 5, 30000);
    QCOMPARE(testing::sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_events "
                                                   "WHERE status = 'processing'")),
             QStringLiteral("5"));
    panel.reset(); // aborts: leases handed back at once
    QCOMPARE(
        testing::sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_events "
                                              "WHERE status = 'pending' AND locked_by IS NULL")),
        QStringLiteral("5"));
}

// Stopping while the dispatcher's housekeeping is stuck behind a lock that
// this (the GUI) thread holds: the panel stops and waits for the host without
// waiting on it, so this thread still sees the stuck unregister, and the
// close finishes once the lock goes. A GUI thread that waited for the host
// would wait for itself; the locking session's idle timeout ends that wait
// (and then the unregister is no longer seen waiting: the test fails).
void TestDispatcherPanel::stopNeverBlocksTheGuiThread() {
    devtools::DevRunner runner;
    QVERIFY(runner.listen().ok());
    const QString dbName = m_pg->freshMigratedDatabase();
    QSqlDatabase db = m_pg->open(dbName);
    QVERIFY(db.isOpen());
    DispatcherPanel panel;
    core::DispatcherConfig config = validConfig();
    config.runnerUrl = runner.url();
    panel.setConfig(config, false);
    panel.setConnInfo(core::ConnInfo::parse(m_pg->connInfo(dbName)).value());
    panel.start();
    QTRY_COMPARE_WITH_TIMEOUT(panel.state(), dispatch::DispatcherState::Running, 30000);
    const QString registered = QStringLiteral("SELECT count(*) FROM outbox_dispatchers");
    QTRY_COMPARE_WITH_TIMEOUT(testing::sqlScalar(db, registered), QStringLiteral("1"), 30000);

    QSqlDatabase locker = m_pg->open(dbName, QStringLiteral("locker"));
    QVERIFY(locker.isOpen());
    QVERIFY(testing::sqlExec(locker,
                             QStringLiteral("SET idle_in_transaction_session_timeout = '20s'")));
    QVERIFY(testing::sqlExec(locker, QStringLiteral("BEGIN")));
    QVERIFY(
        testing::sqlExec(locker, QStringLiteral("SELECT 1 FROM outbox_dispatchers FOR UPDATE")));
    auto release = qScopeGuard([&] { testing::sqlExec(locker, QStringLiteral("ROLLBACK")); });

    QSignalSpy ready(&panel, &DispatcherPanel::readyToClose);
    panel.stopForClose();
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 30000);
    const QString waiting = QStringLiteral("SELECT count(*) FROM pg_stat_activity"
                                           " WHERE wait_event_type = 'Lock'"
                                           " AND datname = current_database()");
    QTRY_COMPARE_WITH_TIMEOUT(testing::sqlScalar(db, waiting), QStringLiteral("1"), 15000);
    QCOMPARE(ready.count(), 0);

    release.dismiss();
    QVERIFY(testing::sqlExec(locker, QStringLiteral("ROLLBACK")));
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 30000);
    QCOMPARE(testing::sqlScalar(db, registered), QStringLiteral("0"));
    locker = QSqlDatabase();
    m_pg->close(QStringLiteral("locker"));
}

QTEST_MAIN(TestDispatcherPanel)
#include "tst_dispatcherpanel.moc"
