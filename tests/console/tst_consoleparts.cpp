// The console's parts that need no database: the "why not delivered" line,
// JSON re-indenting, export lines, command line parsing, settings and
// profiles; and the outbox-console executable's answer to a bad command line.

#include "console/model/commandline.h"
#include "console/model/consolesettings.h"
#include "console/model/eventexplanation.h"
#include "console/model/exportjob.h"
#include "console/widgets/actions.h"
#include "console/widgets/application.h"
#include "console/widgets/jsonhighlighter.h"
#include "console/widgets/statusindicators.h"
#include "console/widgets/windowlayout.h"

#include <QDir>
#include <QIcon>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

using namespace outbox;
using console::Explanation;

class TestConsoleParts : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void explainEvent_data();
    void explainEvent();
    void explainBlockedByItsAggregate();
    void prettyJson_data();
    void prettyJson();
    void jsonLineKeepsPayloadExactly();
    void readOnlyReasons_data();
    void readOnlyReasons();
    void commandLine_data();
    void commandLine();
    void profilesNeverStorePasswords();
    void settingsRoundTrip();
    void iconsLoad();
    void windowTitleNamesTheAppOnce();
    void bannerEndsItsSentenceOnce();
    void executableRejectsBadDb_data();
    void executableRejectsBadDb();
};

namespace {

const QDateTime kNow = QDateTime(QDate(2024, 5, 1), QTime(12, 0, 0), Qt::UTC);

core::OutboxEvent makeEvent(core::Status status) {
    core::OutboxEvent e;
    e.id = QUuid::fromString(QStringLiteral("0190c8e2-7c3a-7d2e-9a51-3f2b6c1d4e5f"));
    e.nameSpace = QStringLiteral("billing");
    e.topic = QStringLiteral("invoice.paid");
    e.status = status;
    e.createdAt = kNow.addSecs(-600);
    e.nextAttemptAt = e.createdAt;
    return e;
}

} // namespace

void TestConsoleParts::explainEvent_data() {
    QTest::addColumn<core::OutboxEvent>("event");
    QTest::addColumn<qint64>("processing");
    QTest::addColumn<QDateTime>("lastActivity");
    QTest::addColumn<int>("tone");
    QTest::addColumn<QStringList>("expected");

    const QUuid worker = QUuid::fromString(QStringLiteral("7f000001-0000-7000-8000-000000000001"));
    auto backoff = makeEvent(core::Status::Pending);
    backoff.attempts = 3;
    backoff.nextAttemptAt = kNow.addSecs(90);
    backoff.lastError = QStringLiteral("HTTP 503 upstream\nsecond line");
    QTest::newRow("backoff") << backoff << qint64(2) << QDateTime()
                             << int(Explanation::Tone::Waiting)
                             << QStringList{QStringLiteral("Waiting for backoff until"),
                                            QStringLiteral("in 1m 30s"),
                                            QStringLiteral("3 attempts failed"),
                                            QStringLiteral("HTTP 503 upstream")};
    auto scheduled = makeEvent(core::Status::Pending);
    scheduled.nextAttemptAt = kNow.addSecs(30);
    QTest::newRow("scheduled") << scheduled << qint64(0) << QDateTime()
                               << int(Explanation::Tone::Waiting)
                               << QStringList{QStringLiteral("first attempt is due"),
                                              QStringLiteral("in 30s")};
    auto due = makeEvent(core::Status::Pending);
    QTest::newRow("due, dispatchers busy")
        << due << qint64(12) << kNow.addSecs(-1) << int(Explanation::Tone::Waiting)
        << QStringList{QStringLiteral("Due since 10m ago"), QStringLiteral("12 events")};
    QTest::newRow("due, nobody dispatching")
        << due << qint64(0) << QDateTime() << int(Explanation::Tone::Error)
        << QStringList{QStringLiteral("no dispatcher is running")};
    QTest::newRow("due, nothing processing but recent activity")
        << due << qint64(0) << kNow.addSecs(-5) << int(Explanation::Tone::Waiting)
        << QStringList{QStringLiteral("waiting for a dispatcher")};
    auto justDue = makeEvent(core::Status::Pending);
    justDue.nextAttemptAt = kNow.addSecs(-3);
    QTest::newRow("just due, nothing processing")
        << justDue << qint64(0) << QDateTime() << int(Explanation::Tone::Waiting)
        << QStringList{QStringLiteral("waiting for a dispatcher")};
    auto leased = makeEvent(core::Status::Processing);
    leased.attempts = 2;
    leased.lockedBy = worker;
    leased.lockedUntil = kNow.addSecs(25);
    QTest::newRow("leased") << leased << qint64(1) << QDateTime() << int(Explanation::Tone::Waiting)
                            << QStringList{QStringLiteral("Leased by worker 7f000001 until"),
                                           QStringLiteral("in 25s"),
                                           QStringLiteral("attempt 2 is in flight")};
    auto expired = leased;
    expired.lockedUntil = kNow.addSecs(-120);
    QTest::newRow("lease expired")
        << expired << qint64(1) << QDateTime() << int(Explanation::Tone::Warning)
        << QStringList{QStringLiteral("lease of worker 7f000001 expired"), QStringLiteral("2m ago"),
                       QStringLiteral("reclaim")};
    auto dead = makeEvent(core::Status::Dead);
    dead.attempts = 10;
    dead.lastError = QStringLiteral("HTTP 410 gone");
    QTest::newRow("dead") << dead << qint64(0) << QDateTime() << int(Explanation::Tone::Error)
                          << QStringList{QStringLiteral("Dead after 10 attempts"),
                                         QStringLiteral("HTTP 410 gone"),
                                         QStringLiteral("Requeue")};
    auto cancelled = dead;
    cancelled.lastError = QStringLiteral("cancelled by ops/alice@host");
    QTest::newRow("cancelled") << cancelled << qint64(0) << QDateTime()
                               << int(Explanation::Tone::Error)
                               << QStringList{QStringLiteral("Cancelled by an operator"),
                                              QStringLiteral("alice")};
    auto delivered = makeEvent(core::Status::Delivered);
    delivered.attempts = 1;
    delivered.deliveredAt = kNow.addSecs(-5);
    QTest::newRow("delivered") << delivered << qint64(0) << QDateTime()
                               << int(Explanation::Tone::Ok)
                               << QStringList{QStringLiteral("Delivered at"),
                                              QStringLiteral("5s ago"),
                                              QStringLiteral("after 1 attempt")};
}

void TestConsoleParts::explainEvent() {
    QFETCH(core::OutboxEvent, event);
    QFETCH(qint64, processing);
    QFETCH(QDateTime, lastActivity);
    QFETCH(int, tone);
    QFETCH(QStringList, expected);
    console::DispatchActivity activity;
    activity.processing = processing;
    activity.lastActivity = lastActivity;
    const Explanation why = console::explainEvent(event, kNow, activity);
    for (const QString &part : expected)
        QVERIFY2(why.text.contains(part), qPrintable(why.text + QStringLiteral(" lacks ") + part));
    QCOMPARE(int(why.tone), tone);
    QVERIFY2(!why.text.contains(QLatin1String("second line")), qPrintable(why.text));
}

// Under aggregate order a due event names the earlier event it waits for;
// a dead one blocks until requeued or purged.
void TestConsoleParts::explainBlockedByItsAggregate() {
    auto due = makeEvent(core::Status::Pending);
    due.aggregateType = QStringLiteral("invoice");
    due.aggregateId = QStringLiteral("42");
    store::AggregateBlocker blocker;
    blocker.id = QUuid::fromString(QStringLiteral("0190c8e2-7c3a-7d2e-9a51-000000000001"));
    blocker.status = core::Status::Dead;
    blocker.unfinishedBefore = 3;
    const Explanation dead = console::explainEvent(due, kNow, {}, blocker);
    QCOMPARE(dead.tone, Explanation::Tone::Error);
    for (const char *part : {"0190c8e2-7c3a-7d2e-9a51-000000000001", "dead", "invoice 42",
                             "oldest of 3", "requeued", "purged"})
        QVERIFY2(dead.text.contains(QLatin1String(part)), qPrintable(dead.text));
    blocker.status = core::Status::Processing;
    blocker.unfinishedBefore = 1;
    const Explanation waiting = console::explainEvent(due, kNow, {}, blocker);
    QCOMPARE(waiting.tone, Explanation::Tone::Waiting);
    QVERIFY2(waiting.text.contains(QLatin1String("(processing)")), qPrintable(waiting.text));
    // No earlier event, but a producer's transaction that may still add one
    // is open: the wait is named, with its backend where the database shows it.
    store::AggregateBlocker open;
    open.kind = store::AggregateBlocker::Kind::OpenTransaction;
    open.transactionId = 74211;
    open.backendPid = 4321;
    open.transactionStart = kNow.addSecs(-600);
    const Explanation transaction = console::explainEvent(due, kNow, {}, open);
    QCOMPARE(transaction.tone, Explanation::Tone::Waiting);
    for (const char *part : {"open transaction", "earlier event of aggregate invoice 42",
                             "transaction 74211", "backend 4321", "commits or rolls back"})
        QVERIFY2(transaction.text.contains(QLatin1String(part)), qPrintable(transaction.text));
    open.backendPid = 0;
    QVERIFY2(!console::explainEvent(due, kNow, {}, open).text.contains(QLatin1String("backend")),
             qPrintable(transaction.text));
    // Without a blocker the usual answer.
    QVERIFY(!console::explainEvent(due, kNow).text.contains(QLatin1String("aggregate")));
}

void TestConsoleParts::prettyJson_data() {
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QString>("expected");
    QTest::newRow("object") << QByteArray(R"({"a": 1, "b": [true, null]})")
                            << QStringLiteral(
                                   "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}");
    QTest::newRow("empty containers") << QByteArray(R"({"a": {}, "b": [ ]})")
                                      << QStringLiteral("{\n  \"a\": {},\n  \"b\": []\n}");
    QTest::newRow("big number kept") << QByteArray(R"({"n": 12345678901234567890})")
                                     << QStringLiteral("{\n  \"n\": 12345678901234567890\n}");
    QTest::newRow("punctuation inside strings")
        << QByteArray(R"({"s": "a, b: {c} [d] \"e\""})")
        << QStringLiteral("{\n  \"s\": \"a, b: {c} [d] \\\"e\\\"\"\n}");
    QTest::newRow("scalar") << QByteArray("\"text\"") << QStringLiteral("\"text\"");
    QTest::newRow("not json") << QByteArray("{oops") << QStringLiteral("{oops");
}

void TestConsoleParts::prettyJson() {
    QFETCH(QByteArray, input);
    QFETCH(QString, expected);
    QCOMPARE(console::prettyJson(input), expected);
}

void TestConsoleParts::jsonLineKeepsPayloadExactly() {
    auto e = makeEvent(core::Status::Dead);
    e.payload = QByteArray(R"({"big": 12345678901234567890, "s": "x\ny"})");
    e.dedupeKey = QStringLiteral("inv-1");
    e.lastError = QStringLiteral("HTTP 503");
    const QByteArray line = console::eventJsonLine(e);
    QVERIFY(!line.contains('\n'));
    QVERIFY2(line.contains(R"("payload":{"big": 12345678901234567890)"), line.constData());
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    const QJsonObject o = doc.object();
    QCOMPARE(o.value(QStringLiteral("id")).toString(), e.id.toString(QUuid::WithoutBraces));
    QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("dead"));
    QCOMPARE(o.value(QStringLiteral("dedupe_key")).toString(), QStringLiteral("inv-1"));
    QVERIFY(o.value(QStringLiteral("tenant_id")).isNull());
    QCOMPARE(o.value(QStringLiteral("payload")).toObject().value(QStringLiteral("s")).toString(),
             QStringLiteral("x\ny"));

    e.payload = QByteArray("42");
    const QJsonDocument scalar = QJsonDocument::fromJson(console::eventJsonLine(e));
    QCOMPARE(scalar.object().value(QStringLiteral("payload")).toString(), QStringLiteral("42"));
}

void TestConsoleParts::readOnlyReasons_data() {
    QTest::addColumn<bool>("flag");
    QTest::addColumn<int>("role"); // -1 unknown, 0 viewer, 1 operator, 2 dispatcher, 3 both
    QTest::addColumn<QString>("actions");
    QTest::addColumn<QString>("dispatch");
    QTest::newRow("flag") << true << 3 << QStringLiteral("--read-only")
                          << QStringLiteral("--read-only");
    QTest::newRow("not known yet") << false << -1 << QString() << QString();
    QTest::newRow("viewer") << false << 0 << QStringLiteral("outbox_operator")
                            << QStringLiteral("outbox_operator");
    QTest::newRow("operator") << false << 1 << QString() << QStringLiteral("outbox_dispatcher");
    QTest::newRow("dispatcher") << false << 2 << QStringLiteral("outbox_operator")
                                << QStringLiteral("outbox_operator");
    QTest::newRow("both") << false << 3 << QString() << QString();
}

void TestConsoleParts::readOnlyReasons() {
    QFETCH(bool, flag);
    QFETCH(int, role);
    QFETCH(QString, actions);
    QFETCH(QString, dispatch);
    std::optional<store::Privileges> privileges;
    if (role >= 0) {
        privileges = store::Privileges{};
        privileges->canRead = true;
        privileges->canOperate = role == 1 || role == 3;
        privileges->canDispatch = role == 2 || role == 3;
    }
    const auto why = console::readOnlyReasons(flag, privileges, QStringLiteral("ops"));
    QCOMPARE(why.actions.isEmpty(), actions.isEmpty());
    QCOMPARE(why.dispatch.isEmpty(), dispatch.isEmpty());
    QVERIFY2(why.actions.contains(actions), qPrintable(why.actions));
    QVERIFY2(why.dispatch.contains(dispatch), qPrintable(why.dispatch));
    if (role >= 0 && !flag && !why.actions.isEmpty())
        QVERIFY(why.actions.contains(QLatin1String("ops")));
}

void TestConsoleParts::commandLine_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<QString>("check"); // error fragment, or what was parsed

    QTest::newRow("nothing") << QStringList{} << true << QStringLiteral("dialog");
    QTest::newRow("db") << QStringList{QStringLiteral("--db"), QStringLiteral("host=h dbname=app")}
                        << true << QStringLiteral("db:app");
    QTest::newRow("db uri") << QStringList{QStringLiteral("--db=postgresql://ops@h/app")} << true
                            << QStringLiteral("db:app");
    QTest::newRow("read-only demo")
        << QStringList{QStringLiteral("--demo"), QStringLiteral("--read-only")} << true
        << QStringLiteral("demo,ro");
    QTest::newRow("profile") << QStringList{QStringLiteral("--profile"), QStringLiteral("prod")}
                             << true << QStringLiteral("profile:prod");
    QTest::newRow("bad db") << QStringList{QStringLiteral("--db"), QStringLiteral("host=h port=x")}
                            << false << QStringLiteral("--db:");
    QTest::newRow("empty db") << QStringList{QStringLiteral("--db"), QString()} << false
                              << QStringLiteral("--db is empty");
    QTest::newRow("two sources") << QStringList{QStringLiteral("--db"), QStringLiteral("dbname=a"),
                                                QStringLiteral("--demo")}
                                 << false << QStringLiteral("only one");
    QTest::newRow("unknown option")
        << QStringList{QStringLiteral("--frobnicate")} << false << QStringLiteral("frobnicate");
    QTest::newRow("positional") << QStringList{QStringLiteral("dbname=app")} << false
                                << QStringLiteral("--db");
    QTest::newRow("bad delay") << QStringList{QStringLiteral("--screenshot-delay"),
                                              QStringLiteral("soon")}
                               << false << QStringLiteral("--screenshot-delay");
}

void TestConsoleParts::commandLine() {
    QFETCH(QStringList, arguments);
    QFETCH(bool, ok);
    QFETCH(QString, check);
    arguments.prepend(QStringLiteral("outbox-console"));
    const auto parsed = console::parseCommandLine(arguments);
    QCOMPARE(parsed.ok(), ok);
    if (!ok) {
        QVERIFY2(parsed.errorMessage().contains(check), qPrintable(parsed.errorMessage()));
        return;
    }
    QString seen;
    if (parsed->connInfo)
        seen = QStringLiteral("db:") + parsed->connInfo->dbname;
    else if (parsed->demo)
        seen = QStringLiteral("demo");
    else if (!parsed->profile.isEmpty())
        seen = QStringLiteral("profile:") + parsed->profile;
    else
        seen = QStringLiteral("dialog");
    if (parsed->readOnly)
        seen += QStringLiteral(",ro");
    QCOMPARE(seen, check);
}

void TestConsoleParts::profilesNeverStorePasswords() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("console.ini"));
    {
        QSettings qs(path, QSettings::IniFormat);
        console::ConsoleSettings settings(&qs);
        console::ConnectionProfile typed;
        typed.name = QStringLiteral("prod");
        typed.connInfo =
            QStringLiteral("host=db.internal dbname=app user=ops password=s3cr3t sslmode=require");
        settings.saveProfile(typed);
        console::ConnectionProfile uri;
        uri.name = QStringLiteral("staging/eu");
        uri.connInfo = QStringLiteral("postgresql://ops:hunter2@db.staging/app");
        settings.saveProfile(uri);
        settings.sync();
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray stored = file.readAll();
    QVERIFY2(!stored.contains("s3cr3t") && !stored.contains("hunter2"), stored.constData());

    QSettings qs(path, QSettings::IniFormat);
    console::ConsoleSettings settings(&qs);
    QCOMPARE(settings.profiles().size(), 2);
    const auto prod = settings.profile(QStringLiteral("prod"));
    QVERIFY(prod);
    const auto info = prod->toConnInfo();
    QVERIFY(info.ok());
    QCOMPARE(info->host, QStringLiteral("db.internal"));
    QCOMPARE(info->sslmode, QStringLiteral("require"));
    QVERIFY(info->password.isEmpty());
    const auto staging = settings.profile(QStringLiteral("staging/eu"));
    QVERIFY(staging);
    QCOMPARE(staging->toConnInfo()->user, QStringLiteral("ops"));
    settings.removeProfile(QStringLiteral("prod"));
    QCOMPARE(settings.profiles().size(), 1);
}

void TestConsoleParts::settingsRoundTrip() {
    QTemporaryDir dir;
    QSettings qs(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
    console::ConsoleSettings settings(&qs);
    QCOMPARE(settings.refreshInterval(), std::chrono::milliseconds(2000));
    QVERIFY(settings.liveEnabled());
    settings.setRefreshInterval(std::chrono::milliseconds(10));
    QCOMPARE(settings.refreshInterval(), std::chrono::milliseconds(500)); // clamped
    settings.setLiveEnabled(false);
    QVERIFY(!settings.liveEnabled());
    settings.setHeaderState(QStringLiteral("dead"), QByteArray("state"));
    QCOMPARE(settings.headerState(QStringLiteral("dead")), QByteArray("state"));
    QVERIFY(settings.headerState(QStringLiteral("pending")).isEmpty());
    settings.setWindowState(QStringLiteral("demo"), QByteArray("demo layout"));
    settings.setWindowState(QStringLiteral("a/b"), QByteArray("other layout"));
    QCOMPARE(settings.windowState(QStringLiteral("demo")), QByteArray("demo layout"));
    QCOMPARE(settings.windowState(QStringLiteral("a/b")), QByteArray("other layout"));
    QVERIFY(settings.windowState(QStringLiteral("production")).isEmpty()); // per profile
}

// The toolbar's icons are SVG: without Qt's SVG image plugin (packaging/dev.sh
// installs it, the package depends on it) they would all be empty.
void TestConsoleParts::iconsLoad() {
    QVERIFY2(QImageReader::supportedImageFormats().contains("svg"),
             "no SVG image plugin: install libqt6svg6");
    console::initResources();
    const QStringList icons = QDir(QStringLiteral(":/icons")).entryList({QStringLiteral("*.svg")});
    QVERIFY(icons.size() >= 10);
    for (const QString &name : icons) {
        const QIcon icon(QStringLiteral(":/icons/") + name);
        const QImage image = icon.pixmap(QSize(18, 18)).toImage();
        QVERIFY2(!image.isNull(), qPrintable(name));
        // Something is drawn, not a transparent square.
        bool drawn = false;
        for (int y = 0; y < image.height() && !drawn; ++y)
            for (int x = 0; x < image.width() && !drawn; ++x)
                drawn = qAlpha(image.pixel(x, y)) > 0;
        QVERIFY2(drawn, qPrintable(name));
    }
}

void TestConsoleParts::windowTitleNamesTheAppOnce() {
    QCOMPARE(console::windowTitleFor(QString()), QStringLiteral("Outbox Console"));
    const QString title = console::windowTitleFor(QStringLiteral("orders on db1 [read-only]"));
    QCOMPARE(title, QStringLiteral("orders on db1 [read-only] — Outbox Console"));
    QCOMPARE(title.count(QLatin1String("Outbox Console")), 1);
}

void TestConsoleParts::bannerEndsItsSentenceOnce() {
    console::ConnectionBanner banner;
    banner.setConnectionState(console::ConnectionState::Reconnecting,
                              QStringLiteral("The database connection was lost. Retrying in 1s."));
    QVERIFY2(banner.text().contains(QLatin1String("Retrying in 1s. ")), qPrintable(banner.text()));
    QVERIFY2(!banner.text().contains(QLatin1String("..")), qPrintable(banner.text()));
}

void TestConsoleParts::executableRejectsBadDb_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad port") << QStringList{QStringLiteral("--db"),
                                             QStringLiteral("host=db port=http")}
                              << QStringLiteral("--db:");
    QTest::newRow("password not echoed")
        << QStringList{QStringLiteral("--db"), QStringLiteral("password=topsecret port=0x")}
        << QStringLiteral("--db:");
    QTest::newRow("unknown profile")
        << QStringList{QStringLiteral("--profile"), QStringLiteral("nope")}
        << QStringLiteral("no connection profile \"nope\"");
}

void TestConsoleParts::executableRejectsBadDb() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QTemporaryDir home;
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.path()); // no saved profiles
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(OUTBOX_CONSOLE_BIN), arguments);
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 2);
    const QString err = QString::fromLocal8Bit(process.readAllStandardError());
    QVERIFY2(err.contains(message), qPrintable(err));
    QVERIFY2(!err.contains(QLatin1String("topsecret")), qPrintable(err));
}

QTEST_MAIN(TestConsoleParts)
#include "tst_consoleparts.moc"
