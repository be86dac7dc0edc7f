// The fleet's watcher and model against 20 databases of one cluster, a
// refused port and a server that accepts the connection and never answers:
// every database gets its row, the slow and the refused ones do not hold up
// the others, rows are ordered worst first, and alerts name their database,
// once per condition. The model runs under QAbstractItemModelTester.

#include "console/model/fleetmodel.h"
#include "console/model/fleetwatcher.h"
#include "support/fleetdata.h"
#include "support/localport.h"
#include "support/pgtestcase.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;
using console::FleetModel;
using console::FleetWatcher;
using store::FleetState;

class TestFleetWatcher final : public PgTestSuite {
    Q_OBJECT

public:
    TestFleetWatcher()
        : PgTestSuite(migrateSchema, PerTest::Nothing) {}

private:
    QStringList m_names;
    QTcpServer m_silent; // accepts connections and never says a word
    QList<QTcpSocket *> m_held;

    static FleetWatcher::Options fastOptions() {
        FleetWatcher::Options o;
        o.interval = std::chrono::milliseconds(300);
        o.connectTimeoutSeconds = 2; // libpq's least
        o.statementTimeout = std::chrono::milliseconds(2000);
        o.maxBackoff = std::chrono::milliseconds(1000);
        return o;
    }

    QList<store::FleetEntry> entries() {
        QList<store::FleetEntry> list;
        for (int i = 0; i < m_names.size(); ++i) {
            store::FleetEntry e;
            e.name = QStringLiteral("db%1").arg(i, 2, 10, QLatin1Char('0'));
            e.target = core::ConnInfo::parse(m_pg->connInfo(m_names[i])).value();
            e.group = i < 10 ? QStringLiteral("payments") : QStringLiteral("shipping");
            list << e;
        }
        store::FleetEntry refused;
        refused.name = QStringLiteral("refused");
        refused.target = core::ConnInfo::parse(
                             QStringLiteral("host=127.0.0.1 port=%1 dbname=x").arg(closedPort()))
                             .value();
        list << refused;
        store::FleetEntry silent;
        silent.name = QStringLiteral("silent");
        silent.target =
            core::ConnInfo::parse(
                QStringLiteral("host=127.0.0.1 port=%1 dbname=x").arg(m_silent.serverPort()))
                .value();
        list << silent;
        return list;
    }

    static int memberNamed(const FleetWatcher &w, const QString &name) {
        for (int i = 0; i < w.size(); ++i) {
            if (w.member(i).entry.name == name)
                return i;
        }
        return -1;
    }

    // Names in row order, groups expanded: "payments/db03".
    static QStringList order(const FleetModel &model) {
        QStringList names;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QModelIndex top = model.index(r, 0);
            if (model.rowCount(top) == 0) {
                names << top.data().toString();
                continue;
            }
            for (int c = 0; c < model.rowCount(top); ++c) {
                names << model.index(c, 0, top).data().toString();
            }
        }
        return names;
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(startPg(migrateSchema));
        QVERIFY(m_silent.listen(QHostAddress::LocalHost, 0));
        connect(&m_silent, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *s = m_silent.nextPendingConnection())
                m_held << s;
        });
        for (int i = 0; i < 20; ++i) {
            const QString name = m_pg->freshMigratedDatabase();
            QVERIFY(!name.isEmpty());
            m_names << name;
        }
        // db03: events due for 10 minutes and no dispatcher: an alert.
        QSqlDatabase db3 = m_pg->open(m_names[3]);
        QVERIFY(insertDueSince(db3, 5, QStringLiteral("10 minutes")));
        // db07: events died in the last hour: a warning.
        QSqlDatabase db7 = m_pg->open(m_names[7]);
        QVERIFY(insertDeathsAFewMinutesAgo(db7, 2));
    }

    void everyDatabaseGetsItsRowWorstFirst() {
        FleetWatcher watcher(entries(), fastOptions());
        FleetModel model(&watcher);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Before any answer: every row is there, pending.
        QCOMPARE(order(model).size(), 22);
        for (int i = 0; i < watcher.size(); ++i)
            QCOMPARE(watcher.member(i).state, FleetState::Pending);
        QSignalSpy readings(&watcher, &FleetWatcher::memberChanged);
        QSignalSpy batches(&model, &FleetModel::updated);
        QSignalSpy moves(&model, &FleetModel::layoutChanged);
        watcher.start();

        // The databases of the cluster answer while the silent server still
        // holds its worker (it gives up only after the connect timeout).
        const int silent = memberNamed(watcher, QStringLiteral("silent"));
        const int refused = memberNamed(watcher, QStringLiteral("refused"));
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (int i = 0; i < 20; ++i) {
                    if (watcher.member(i).state == FleetState::Pending)
                        return false;
                }
                return true;
            }(),
            20000);
        QCOMPARE(watcher.member(silent).state, FleetState::Pending);
        QTRY_COMPARE_WITH_TIMEOUT(watcher.member(refused).state, FleetState::Unreachable, 20000);
        QVERIFY2(
            watcher.member(refused).error.contains(QLatin1String("refused"), Qt::CaseInsensitive),
            qPrintable(watcher.member(refused).error));
        QTRY_COMPARE_WITH_TIMEOUT(watcher.member(silent).state, FleetState::Unreachable, 20000);
        QVERIFY(!watcher.member(silent).error.isEmpty());
        model.applyPending(); // the last readings' batch
        // Readings arriving together are applied together: one re-sort (at
        // most one layout change) per batch, not per reading.
        QVERIFY2(batches.size() < readings.size(),
                 qPrintable(QStringLiteral("%1 batches for %2 readings")
                                .arg(batches.size())
                                .arg(readings.size())));
        QVERIFY(moves.size() <= batches.size());

        QCOMPARE(watcher.member(3).state, FleetState::Alert);
        QCOMPARE(watcher.member(7).state, FleetState::Warning);
        QCOMPARE(watcher.member(0).state, FleetState::Ok);
        QVERIFY(watcher.member(3).snapshot);
        QCOMPARE(watcher.member(3).snapshot->due.value, 5);

        // Worst first at each level: payments holds the alert, so it comes
        // first and db03 leads it; the unreachable ones come before the
        // shipping group that is all fine.
        const QStringList rows = order(model);
        QCOMPARE(rows.first(), QStringLiteral("db03"));
        QCOMPARE(rows.at(1), QStringLiteral("db07"));
        QCOMPARE(rows.at(2), QStringLiteral("db00"));
        QVERIFY(rows.indexOf(QStringLiteral("refused")) < rows.indexOf(QStringLiteral("db10")));
        QVERIFY(rows.indexOf(QStringLiteral("silent")) < rows.indexOf(QStringLiteral("db10")));
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("payments (10)"));
        QCOMPARE(model.index(0, FleetModel::StateColumn).data(FleetModel::StateNameRole).toString(),
                 QStringLiteral("alert"));
        const QModelIndex db3 = model.indexOfMember(3);
        QVERIFY(db3.siblingAtColumn(FleetModel::StateColumn)
                    .data()
                    .toString()
                    .startsWith(QLatin1String("Alert: ")));
        QCOMPARE(db3.siblingAtColumn(FleetModel::DueColumn).data().toString(), QStringLiteral("5"));
        QCOMPARE(db3.data(FleetModel::SparkRole).toList().size(),
                 store::FleetSnapshot::kSparkMinutes);
    }

    // A row that changes state moves, and a persistent index follows it.
    void aRowMovesWhenItsStateChanges() {
        FleetWatcher watcher(entries().mid(10, 10), fastOptions());
        FleetModel model(&watcher);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        watcher.start();
        QTRY_COMPARE_WITH_TIMEOUT(watcher.member(5).state, FleetState::Ok, 20000);
        model.applyPending();
        const QPersistentModelIndex followed = model.indexOfMember(5);
        QVERIFY(followed.isValid());
        QCOMPARE(followed.data().toString(), QStringLiteral("db15"));
        QVERIFY(followed.row() > 0);

        QSqlDatabase db = m_pg->open(m_names[15]);
        QVERIFY(insertDueSince(db, 1, QStringLiteral("1 hour")));
        QTRY_COMPARE_WITH_TIMEOUT(watcher.member(5).state, FleetState::Alert, 20000);
        // Applied with the next batch of readings.
        QTRY_COMPARE(followed.row(), 0);
        QCOMPARE(followed.data().toString(), QStringLiteral("db15"));
        QVERIFY(sqlExec(db, QStringLiteral("DELETE FROM outbox_events")));
        QTRY_COMPARE_WITH_TIMEOUT(watcher.member(5).state, FleetState::Ok, 20000);
    }

    // Connections are made a few at a time, and servers that accept the
    // connection and never answer hold their turn only for their share of
    // the connect timeout: with more of them than turns, listed first, the
    // databases behind them answer while they still hang.
    void hangingServersDelayNoOneBeyondTheirShare() {
        FleetWatcher::Options options = fastOptions();
        options.maxConnecting = 2;
        options.connectTimeoutSeconds = 6;
        QList<store::FleetEntry> list;
        const store::FleetEntry silent = entries().constLast();
        for (int i = 0; i < 4; ++i) {
            store::FleetEntry e = silent;
            e.name = QStringLiteral("silent%1").arg(i);
            list << e;
        }
        list << entries().mid(0, 5);
        FleetWatcher watcher(list, options);
        // 6 s x 2 turns / 9 databases.
        QCOMPARE(watcher.patience(), std::chrono::milliseconds(1333));
        const qsizetype heldBefore = m_held.size();
        QElapsedTimer clock;
        qint64 firstAnswerMs = -1;
        connect(&watcher, &FleetWatcher::memberChanged, this, [&](int member) {
            if (member >= 4 && firstAnswerMs < 0)
                firstAnswerMs = clock.elapsed();
        });
        clock.start();
        watcher.start();
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                for (int i = 4; i < watcher.size(); ++i) {
                    if (watcher.member(i).state == FleetState::Pending)
                        return false;
                }
                return true;
            }(),
            20000);
        // They hang for the whole connect timeout; the others did not wait
        // for it.
        for (int i = 0; i < 4; ++i)
            QCOMPARE(watcher.member(i).state, FleetState::Pending);
        for (int i = 4; i < watcher.size(); ++i)
            QVERIFY(watcher.member(i).snapshot.has_value());
        // Two at once: the databases behind the four silent ones waited for
        // two turns to pass (a timer is not early by more than a little).
        QCOMPARE(watcher.mostConnecting(), 2);
        QVERIFY2(firstAnswerMs >= 2 * 1333 - 50, qPrintable(QString::number(firstAnswerMs)));
        QTRY_COMPARE(m_held.size() - heldBefore, qsizetype(4));
    }

    // The console's alert rules, per database: one notice per condition
    // however many readings see it, and the database named in it.
    void alertsNameTheirDatabaseOnce() {
        FleetWatcher watcher(entries().mid(0, 5), fastOptions());
        console::AlertThresholds t;
        t.oldestDueAge = std::chrono::seconds(60);
        t.oldestDueFor = std::chrono::seconds(0);
        for (int i = 0; i < watcher.size(); ++i)
            watcher.setThresholds(i, t);
        QSignalSpy raised(&watcher, &FleetWatcher::alertRaised);
        watcher.start();
        QTRY_VERIFY_WITH_TIMEOUT(!raised.isEmpty(), 20000);
        // Several more readings of every database.
        QTest::qWait(2000);
        QCOMPARE(raised.size(), 1);
        QCOMPARE(raised.first().at(0).toInt(), 3);
        const auto alert = raised.first().at(1).value<console::Alert>();
        QCOMPARE(alert.kind, console::AlertKind::OldestDue);
        QVERIFY2(alert.title.startsWith(QLatin1String("db03: ")), qPrintable(alert.title));
        QVERIFY2(alert.text.contains(QLatin1String("db03")), qPrintable(alert.text));
        QCOMPARE(watcher.activeAlerts(3).size(), 1);
    }

    // outboxctl fleet status judges with store::FleetThresholds' defaults,
    // the window with the console's: they must be the same.
    void theCheckAndTheWindowShareTheirDefaults() {
        const store::FleetThresholds check;
        const console::AlertThresholds window;
        QCOMPARE(check.oldestDueAgeSeconds, qint64(window.oldestDueAge.count()));
        QCOMPARE(check.deathsPerMinute, window.deathsPerMinute);
        QCOMPARE(check.unclaimedForSeconds, qint64(window.unclaimedFor.count()));
    }

    void cleanupTestCase() {
        qDeleteAll(m_held);
        stopPg();
    }
};

QTEST_MAIN(TestFleetWatcher)
#include "tst_fleetwatcher.moc"
