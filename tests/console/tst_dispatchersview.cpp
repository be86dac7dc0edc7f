// The console's side of the registry and the pauses, offscreen against a real
// cluster: the Dispatchers dock lists registered dispatchers, "why is this
// not delivered?" uses the registry and the pauses, and Pause / Resume from
// the navigator's context menu go through the database (audited).

#include "console/model/eventexplanation.h"
#include "console/model/statusnavmodel.h"
#include "console/widgets/alertnotifier.h"
#include "console/widgets/dispatchersview.h"
#include "dispatch/routingreport.h"
#include "windowtestbase.h"

#include <QDockWidget>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QTableWidget>
#include <QTreeView>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

namespace {

store::DispatcherEntry entry(const QString &nameSpace, bool alive, const QDateTime &beat) {
    store::DispatcherEntry e;
    e.nameSpace = nameSpace;
    e.alive = alive;
    e.heartbeatAt = beat;
    return e;
}

// A billing invoice event due for two minutes.
core::OutboxEvent dueInvoice(const QDateTime &now) {
    core::OutboxEvent event;
    event.status = core::Status::Pending;
    event.nameSpace = QStringLiteral("billing");
    event.topic = QStringLiteral("invoice.paid");
    event.createdAt = now.addSecs(-120);
    event.nextAttemptAt = event.createdAt;
    return event;
}

} // namespace

class TestDispatchersView final : public WindowTestBase {
    Q_OBJECT

private Q_SLOTS:
    // The registry's answers, pure: paused, nobody alive, nobody serving.
    void explanationUsesTheRegistry() {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        core::OutboxEvent event = dueInvoice(now);
        console::DispatchActivity activity;
        activity.processing = 5; // the old guess would say "someone is working"
        activity.registry = console::RegistrySnapshot{};
        activity.registry->dispatchers.serverTime = now;

        activity.registry->dispatchers.entries = {entry(QStringLiteral("shipping"), true, now),
                                                  entry(QString(), false, now.addSecs(-600))};
        auto why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Error);
        QVERIFY2(why.text.contains(QStringLiteral("does not serve namespace billing")),
                 qPrintable(why.text));

        activity.registry->dispatchers.entries = {entry(QStringLiteral("a"), true, now),
                                                  entry(QStringLiteral("b"), true, now)};
        why = console::explainEvent(event, now, activity);
        QVERIFY2(why.text.contains(QStringLiteral("2 dispatchers alive, none serves namespace "
                                                  "billing")),
                 qPrintable(why.text));

        activity.registry->dispatchers.entries = {entry(QString(), false, now.addSecs(-600))};
        why = console::explainEvent(event, now, activity);
        QVERIFY2(why.text.contains(QStringLiteral("no dispatcher has heartbeat since")),
                 qPrintable(why.text));

        activity.registry->dispatchers.entries = {entry(QString(), true, now)};
        why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Waiting);

        store::Pause pause;
        pause.nameSpace = QStringLiteral("billing");
        pause.reason = QStringLiteral("runner down");
        pause.pausedBy = QStringLiteral("alice");
        pause.pausedAt = now.addSecs(-60);
        activity.registry->pauses = {pause};
        why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Warning);
        QVERIFY2(why.text.contains(QStringLiteral("paused by alice")) &&
                     why.text.contains(QStringLiteral("runner down")),
                 qPrintable(why.text));
    }

    // A routing dispatcher's registry report names the destination an event
    // goes to: its open circuit or its pause is why the event waits; no
    // route at all means nobody claims it.
    void explanationNamesTheDestination() {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        core::OutboxEvent event = dueInvoice(now);
        dispatch::DestinationStats hooks;
        hooks.name = QStringLiteral("billing-hooks");
        hooks.kind = QStringLiteral("kafka");
        hooks.target = QStringLiteral("broker:9092");
        hooks.circuit = QStringLiteral("open");
        hooks.reason = QStringLiteral("5 failed attempts in a row");
        hooks.circuitSince = now.addSecs(-30);
        hooks.routes = {{1, QStringLiteral("bill*"), QStringLiteral("*")}};
        dispatch::DestinationStats rest;
        rest.name = QStringLiteral("rest");
        rest.kind = QStringLiteral("http");
        rest.target = QStringLiteral("http://runner/events");
        rest.circuit = QStringLiteral("closed");
        // The first route that matches wins: route 0 sends invoices to rest.
        rest.routes = {{0, QStringLiteral("*"), QStringLiteral("invoice.*")},
                       {2, QStringLiteral("*"), QStringLiteral("*")}};
        console::DispatchActivity activity;
        activity.registry = console::RegistrySnapshot{};
        activity.registry->dispatchers.serverTime = now;
        store::DispatcherEntry routing = entry(QString(), true, now);
        routing.workerId = QUuid::createUuid();
        activity.registry->dispatchers.entries = {routing};
        activity.registry->destinations.insert(routing.workerId,
                                               dispatch::destinationsJson({hooks, rest}));

        auto why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Waiting);
        QVERIFY2(why.text.contains(QStringLiteral("goes to destination rest (http")),
                 qPrintable(why.text));

        event.topic = QStringLiteral("refund.done");
        why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Warning);
        QVERIFY2(why.text.contains(QStringLiteral("destination billing-hooks")) &&
                     why.text.contains(QStringLiteral("circuit is open")) &&
                     why.text.contains(QStringLiteral("5 failed attempts in a row")),
                 qPrintable(why.text));

        store::DestinationPause pause;
        pause.destination = QStringLiteral("billing-hooks");
        pause.reason = QStringLiteral("INC-42");
        pause.pausedBy = QStringLiteral("alice");
        pause.pausedAt = now.addSecs(-60);
        activity.registry->destinationPauses = {pause};
        why = console::explainEvent(event, now, activity);
        QVERIFY2(why.text.contains(QStringLiteral("destination billing-hooks, paused by alice")) &&
                     why.text.contains(QStringLiteral("INC-42")),
                 qPrintable(why.text));

        // Without the catch-all, nothing takes shipping's events.
        rest.routes.removeLast();
        activity.registry->destinations.insert(routing.workerId,
                                               dispatch::destinationsJson({hooks, rest}));
        event.nameSpace = QStringLiteral("shipping");
        why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Error);
        QVERIFY2(why.text.contains(QStringLiteral("No route of the running dispatchers matches "
                                                  "namespace shipping")),
                 qPrintable(why.text));

        // A dispatcher that takes every event: no destination to blame.
        store::DispatcherEntry plain = entry(QString(), true, now);
        plain.workerId = QUuid::createUuid();
        activity.registry->dispatchers.entries.append(plain);
        why = console::explainEvent(event, now, activity);
        QCOMPARE(why.tone, console::Explanation::Tone::Waiting);
    }

    // The dock lists what the database holds; the navigator pauses and
    // resumes a namespace, audited with the console as the application.
    void dockListsAndNavigatorPausesAndResumes() {
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("SELECT outbox_dispatcher_register(outbox_uuid_v7(),"
                                       " repeat('s', 64), 'worker-host', 4242, '1.0', 'outboxctl',"
                                       " 'shipping', 'http://runner', 8, 60000, now())")));
        QVERIFY(sqlExec(m_db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic,"
                                             " payload) VALUES (outbox_uuid_v7(), 'billing',"
                                             " 'invoice.paid', '{}')")));
        openWindow();
        auto *table = part<QTableWidget>(QStringLiteral("dispatchersTable"));
        QVERIFY(table);
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 1, kWindowTimeout);
        QCOMPARE(table->item(0, 2)->text(), QStringLiteral("worker-host (4242)"));

        auto *navigator = part<QTreeView>(QStringLiteral("navigatorView"));
        QVERIFY(navigator);
        auto *nav = qobject_cast<console::StatusNavModel *>(navigator->model());
        const QString key =
            console::StatusNavModel::namespaceKey(core::Status::Pending, QStringLiteral("billing"));
        QTRY_VERIFY_WITH_TIMEOUT(nav->indexForKey(key).isValid(), kWindowTimeout);
        const QModelIndex index = nav->indexForKey(key);
        navigator->expand(index.parent());
        navigator->scrollTo(index);
        const QPoint at = navigator->visualRect(index).center();

        // Pause: the menu, then the reason.
        answerNext<QInputDialog>([](QInputDialog *dialog) {
            dialog->setTextValue(QStringLiteral("billing API down"));
            dialog->accept();
        });
        chooseFromMenu(navigator, at, QStringLiteral("pauseAction"));
        QTRY_COMPARE_WITH_TIMEOUT(scalar(QStringLiteral("SELECT reason FROM outbox_pauses"
                                                        " WHERE namespace = 'billing'")),
                                  QStringLiteral("billing API down"), kWindowTimeout);
        auto *pauses = part<QLabel>(QStringLiteral("pausesLabel"));
        QTRY_VERIFY_WITH_TIMEOUT(pauses->text().contains(QStringLiteral("billing API down")),
                                 kWindowTimeout);

        chooseFromMenu(navigator, at, QStringLiteral("resumeAction"));
        QTRY_COMPARE_WITH_TIMEOUT(scalar(QStringLiteral("SELECT count(*) FROM outbox_pauses")),
                                  QStringLiteral("0"), kWindowTimeout);
        QCOMPARE(scalar(QStringLiteral("SELECT string_agg(action || ':' || application, ','"
                                       " ORDER BY id) FROM outbox_audit")),
                 QStringLiteral("pause:outbox-console,resume:outbox-console"));
    }

    // A routing dispatcher's destinations (its registry report): listed with
    // their circuit; an open circuit is an alert; a destination is paused
    // from the table's menu, audited.
    void destinationsListedAlertedAndPaused() {
        const QString worker = QStringLiteral("0190a5f4-7c2e-7b3a-9d4e-123456789abc");
        QVERIFY(sqlExec(m_db,
                        QStringLiteral("SELECT outbox_dispatcher_register(?::uuid, repeat('s', 64),"
                                       " 'worker-host', 4242, '1.0', 'outboxctl', '',"
                                       " 'routes /etc/outbox/x.routes', 8, 60000, now())"),
                        {worker}));
        QVERIFY(sqlExec(
            m_db,
            QStringLiteral(
                "SELECT outbox_dispatcher_destinations(?::uuid, repeat('s', 64), ?::jsonb)"),
            {worker,
             QStringLiteral(R"([{"name": "billing-hooks", "kind": "http", "target": "https://b/x",)"
                            R"( "circuit": "open", "reason": "5 failed attempts in a row",)"
                            R"( "in_flight": 0, "limit": 8, "last_error": "HTTP 503"},)"
                            R"( {"name": "rest", "kind": "http", "target": "http://r/e",)"
                            R"( "circuit": "closed", "in_flight": 3, "limit": 64,)"
                            R"( "delivered_per_s": 120.5}])")}));
        openWindow();
        part<QDockWidget>(QStringLiteral("dispatchersDock"))->show();
        auto *table = part<QTableWidget>(QStringLiteral("destinationsTable"));
        QVERIFY(table);
        QTRY_COMPARE_WITH_TIMEOUT(table->rowCount(), 2, kWindowTimeout);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("billing-hooks"));
        QVERIFY2(table->item(0, 4)->text().contains(QLatin1String("open: 5 failed attempts")),
                 qPrintable(table->item(0, 4)->text()));
        QCOMPARE(table->item(0, 7)->text(), QStringLiteral("HTTP 503"));
        QCOMPARE(table->item(1, 5)->text(), QStringLiteral("120.5"));
        auto *alerts = part<console::AlertNotifier>();
        QVERIFY(alerts);
        QTRY_VERIFY_WITH_TIMEOUT(alerts->monitor()->isActive(console::AlertKind::CircuitOpen),
                                 kWindowTimeout);

        answerNext<QInputDialog>([](QInputDialog *dialog) {
            dialog->setTextValue(QStringLiteral("INC-42"));
            dialog->accept();
        });
        chooseFromMenu(table, table->visualItemRect(table->item(0, 0)).center(),
                       QStringLiteral("pauseDestinationAction"));
        QTRY_COMPARE_WITH_TIMEOUT(scalar(QStringLiteral("SELECT reason FROM"
                                                        " outbox_destination_pauses"
                                                        " WHERE destination = 'billing-hooks'")),
                                  QStringLiteral("INC-42"), kWindowTimeout);
        QTRY_VERIFY_WITH_TIMEOUT(table->item(0, 4)->text().startsWith(QLatin1String("paused")),
                                 kWindowTimeout);
        // Paused is not failing: the alert clears.
        QTRY_VERIFY_WITH_TIMEOUT(!alerts->monitor()->isActive(console::AlertKind::CircuitOpen),
                                 kWindowTimeout);
        QCOMPARE(scalar(QStringLiteral("SELECT string_agg(action || ':' || filter, ','"
                                       " ORDER BY id) FROM outbox_audit")),
                 QStringLiteral("pause:destination=billing-hooks reason=INC-42"));
    }

    // View > Dispatchers brings its pane to the front, also when it shares
    // a tab group with the Jobs pane that is on show.
    void viewMenuBringsThePaneToTheFront() {
        openWindow();
        auto *dispatchers = part<QDockWidget>(QStringLiteral("dispatchersDock"));
        auto *jobs = part<QDockWidget>(QStringLiteral("jobsDock"));
        QVERIFY(dispatchers && jobs);
        m_window->tabifyDockWidget(jobs, dispatchers);
        if (dispatchers->toggleViewAction()->isChecked())
            dispatchers->toggleViewAction()->trigger(); // hidden
        if (!jobs->toggleViewAction()->isChecked())
            jobs->toggleViewAction()->trigger();
        jobs->raise();
        QTRY_VERIFY_WITH_TIMEOUT(jobs->isVisible() && !dispatchers->isVisible(), kWindowTimeout);
        dispatchers->toggleViewAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(dispatchers->isVisible(), kWindowTimeout);
        QVERIFY(!dispatchers->visibleRegion().isEmpty());
    }

private:
    // Opens the view's context menu at `at` and triggers the action named
    // `name` in it.
    void chooseFromMenu(QAbstractItemView *navigator, const QPoint &at, const QString &name) {
        QTimer::singleShot(50, navigator, [name] {
            auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
            if (!menu)
                return;
            for (QAction *action : menu->actions()) {
                if (action->objectName() == name && action->isEnabled()) {
                    menu->setActiveAction(action);
                    QTest::keyClick(menu, Qt::Key_Return);
                    return;
                }
            }
            menu->close();
        });
        Q_EMIT navigator->customContextMenuRequested(at);
    }
};

QTEST_MAIN(TestDispatchersView)
#include "tst_dispatchersview.moc"
