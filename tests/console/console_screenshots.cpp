// Makes the console screenshots in docs/screenshots/: a throwaway cluster
// with a realistic mix of events, the main window driven to each state, and
// a grab of the screen. Run it under a real X server (xvfb-run), not the
// offscreen platform:
//   xvfb-run -a -s '-screen 0 1600x1000x24' console_screenshots docs/screenshots

#include "console/model/consolesettings.h"
#include "console/model/databasesettings.h"
#include "console/model/errorgroupmodel.h"
#include "console/model/eventtablemodel.h"
#include "console/model/joblistmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/bulkdialog.h"
#include "console/widgets/detailpane.h"
#include "console/widgets/errorgroupsview.h"
#include "console/widgets/eventview.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/mainwindow.h"
#include "store/database.h"
#include "store/operations.h"
#include "support/pgfixture.h"

#include <QApplication>
#include <QCursor>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QScreen>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QToolButton>

#include <cstdio>
#include <functional>

using namespace outbox;

namespace {

const char *kSeed[] = {
    "CREATE TEMP TABLE t(i int, ns text, topic text)",
    "INSERT INTO t VALUES (0,'billing','invoice.paid'),(1,'billing','invoice.created'),"
    " (2,'billing','refund.issued'),(3,'shipping','parcel.dispatched'),"
    " (4,'shipping','parcel.delivered'),(5,'identity','user.signed_up'),"
    " (6,'identity','user.deleted')",
    // delivered
    "INSERT INTO outbox_events (id, namespace, topic, tenant_id, dedupe_key, payload, status,"
    " attempts, delivered_at, created_at, updated_at)"
    " SELECT outbox_uuid_v7(), t.ns, t.topic, '0190c8e2-7c3a-7d2e-9a51-3f2b6c1d4e5f', t.ns || ':' "
    "|| g,"
    "  jsonb_build_object('id', g, 'amount', round((g * 7.31)::numeric % 1000, 2), 'currency',"
    "   'EUR', 'customer', jsonb_build_object('id', 'cus_' || g, 'email', 'user' || g ||"
    "   '@example.com'), 'items', jsonb_build_array(jsonb_build_object('sku', 'A-1', 'qty', 1),"
    "   jsonb_build_object('sku', 'B-7', 'qty', 2))),"
    "  'delivered', 1 + (g % 3 = 0)::int, now() - make_interval(secs => g),"
    "  now() - make_interval(secs => g + 5), now() - make_interval(secs => g)"
    " FROM generate_series(1, 3000) g JOIN t ON t.i = g % 7",
    // dead, four kinds of failure
    "INSERT INTO outbox_events (id, namespace, topic, dedupe_key, payload, status, attempts,"
    " last_error, next_attempt_at, created_at, updated_at)"
    " SELECT outbox_uuid_v7(), t.ns, t.topic, t.ns || ':dead:' || g,"
    "  jsonb_build_object('id', g, 'amount', 12.5, 'currency', 'EUR', 'note',"
    "   'customer ' || g || ' asked for a refund', 'lines', jsonb_build_array(1, 2, 3),"
    "   'paid', g % 2 = 0, 'coupon', NULL), 'dead', 10,"
    "  (ARRAY['HTTP 503: upstream billing-service unavailable (request ' || md5(g::text) || ')',"
    "   'HTTP 422: invalid invoice ' || g || ': currency XYZ not supported',"
    "   'timeout after 10000 ms waiting for the runner',"
    "   'connection refused (runner 10.0.3.' || (g % 200) || ':8080)'])[1 + g % 4],"
    "  now() - make_interval(secs => g * 13), now() - make_interval(secs => g * 60),"
    "  now() - make_interval(secs => g * 13)"
    " FROM generate_series(1, 160) g JOIN t ON t.i = g % 7",
    // pending: first attempt, and retrying with backoff
    "INSERT INTO outbox_events (id, namespace, topic, payload, created_at)"
    " SELECT outbox_uuid_v7(), t.ns, t.topic, jsonb_build_object('id', g),"
    "  now() - make_interval(secs => g)"
    " FROM generate_series(1, 40) g JOIN t ON t.i = g % 7",
    "INSERT INTO outbox_events (id, namespace, topic, payload, attempts, last_error,"
    " next_attempt_at, created_at)"
    " SELECT outbox_uuid_v7(), t.ns, t.topic, jsonb_build_object('id', g), 1 + g % 6,"
    "  'HTTP 503: upstream billing-service unavailable (request ' || md5(g::text) || ')',"
    "  now() + make_interval(secs => g * 7), now() - make_interval(secs => g * 30)"
    " FROM generate_series(1, 35) g JOIN t ON t.i = g % 7",
    // processing, a third with an expired lease
    "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts, locked_by,"
    " locked_until, created_at)"
    " SELECT outbox_uuid_v7(), 'shipping', 'parcel.dispatched', jsonb_build_object('id', g),"
    "  'processing', 1, CASE WHEN g % 3 = 0 THEN '0190c8e2-0000-7000-8000-00000000dead'::uuid"
    "  ELSE '0190c8e2-0000-7000-8000-0000000000a1'::uuid END,"
    "  CASE WHEN g % 3 = 0 THEN now() - interval '2 minutes' ELSE now() + interval '10 minutes'"
    "  END, now() - make_interval(secs => g)"
    " FROM generate_series(1, 9) g",
    // failure history
    "INSERT INTO outbox_attempts (event_id, attempt, attempted_at, worker_id, http_status,"
    " duration_ms, error)"
    " SELECT e.id, a, e.created_at + (e.updated_at - e.created_at) * a / 4,"
    "  '0190c8e2-0000-7000-8000-0000000000a1', CASE WHEN e.last_error LIKE 'HTTP 422%' THEN 422"
    "  WHEN e.last_error LIKE 'HTTP%' THEN 503 END, 40 + a * 37, e.last_error"
    " FROM outbox_events e, generate_series(1, 4) a WHERE e.last_error IS NOT NULL",
};

bool waitFor(const std::function<bool()> &condition, int timeoutMs = 20000) {
    QElapsedTimer timer;
    timer.start();
    while (!condition()) {
        if (timer.elapsed() > timeoutMs)
            return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(20);
    }
    return true;
}

void settle(int ms) {
    waitFor([] { return false; }, ms);
}

bool shoot(QWidget *window, const QString &path) {
    // The screen, not QWidget::grab(): dialogs are separate windows.
    settle(400);
    const QRect area = window->frameGeometry();
    const QPixmap pixmap = QGuiApplication::primaryScreen()->grabWindow(
        0, area.x(), area.y(), area.width(), area.height());
    const bool ok = pixmap.save(path);
    std::fprintf(stderr, "%s %s\n", ok ? "wrote" : "FAILED", qPrintable(path));
    return ok;
}

int fail(const char *what) {
    std::fprintf(stderr, "console_screenshots: %s\n", what);
    return 1;
}

} // namespace

int main(int argc, char *argv[]) {
    QApplication app(argc, argv);
    const QString out = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral(".");
    QDir().mkpath(out);

    testing::PgFixture pg;
    if (auto started = pg.start(); !started)
        return fail(qPrintable(started.errorMessage()));
    pg.setTemplatePreparer(outbox::testing::migrateSchemaWithRoles);
    const QString dbName = pg.freshMigratedDatabase();
    QSqlDatabase db = pg.open(dbName);
    for (const char *sql : kSeed) {
        if (!testing::sqlExec(db, QString::fromUtf8(sql)))
            return fail("seeding failed");
    }

    QTemporaryDir dir;
    QSettings qsettings(dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat);
    console::ConsoleSettings settings(&qsettings);
    // Alert when an event has waited a day: none of the seeded events has,
    // the one added for the last picture has.
    console::AlertThresholds thresholds;
    thresholds.oldestDueAge = std::chrono::hours(24);
    thresholds.oldestDueFor = std::chrono::seconds(0);
    console::DatabaseSettings(&qsettings, console::DatabaseSettings::keyFor(
                                              core::ConnInfo::parse(pg.connInfo(dbName)).value()))
        .setAlertThresholds(thresholds);
    console::MainWindow window(&settings, {});
    window.setGeometry(0, 0, 1500, 920);
    window.connectTo(core::ConnInfo::parse(pg.connInfo(dbName)).value(), QStringLiteral("demo"));
    window.show();
    // The pointer off the window: under a resting pointer the tables hold
    // new rows back (behind "N new events"), which these pictures do not show.
    QCursor::setPos(window.screen()->geometry().bottomRight());
    // The window's parts, as a user finds them.
    auto *pages = window.findChild<QTabWidget *>(QStringLiteral("statusTabs"));
    const auto page = [&](core::Status status) {
        return window.findChild<console::EventView *>(QStringLiteral("eventView_") +
                                                      core::statusName(status));
    };
    const auto showPage = [&](core::Status status) { pages->setCurrentWidget(page(status)); };
    auto *detail = window.findChild<console::DetailPane *>();
    auto *whyLine = detail->findChild<QLabel *>(QStringLiteral("whyLabel"));
    // Selects the event's row as a click would.
    const auto clickRow = [](console::EventView *view, const QUuid &id) {
        QTableView *table = view->table();
        const int column = table->horizontalHeader()->logicalIndexAt(0); // leftmost shown
        table->doItemsLayout();
        for (int row = 0; row < table->model()->rowCount(); ++row) {
            const QModelIndex cell = table->model()->index(row, column);
            if (cell.data(console::EventTableModel::IdRole).toUuid() == id) {
                table->scrollTo(cell);
                QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                                  table->visualRect(cell).center());
            }
        }
    };
    auto *state = window.findChild<QLabel *>(QStringLiteral("connectionStateLabel"));
    if (!waitFor([&] { return state->text().endsWith(QLatin1String(" connected")); }))
        return fail("no connection");

    // 1. The dead page: what is failing, and one event in detail.
    showPage(core::Status::Dead);
    console::EventView *dead = page(core::Status::Dead);
    if (!waitFor([&] { return dead->model()->rowCount() >= 100; }) || !waitFor([&] {
            return window.findChild<console::ErrorGroupsView *>()->model()->rowCount() == 4;
        }))
        return fail("the dead page did not load");
    clickRow(dead, dead->model()->eventAt(3).id);
    if (!waitFor([&] { return !whyLine->text().isEmpty(); }))
        return fail("no detail");
    shoot(&window, out + QStringLiteral("/main-window.png"));

    // 2. The detail pane: an event requeued by an operator that failed again
    // and now waits for its backoff; its payload, failures and history.
    const QUuid id = dead->model()->eventAt(6).id;
    store::OperatorStore operations(db, store::Actor{QStringLiteral("alice"),
                                                     QStringLiteral("ops-laptop"),
                                                     QStringLiteral("outbox-console")});
    store::EventFilter one;
    one.ids = {id};
    store::BulkOptions why;
    why.reason = QStringLiteral("INC-2291: billing-service redeployed");
    if (!operations.requeue(one, why))
        return fail("requeue failed");
    const QString error = QStringLiteral("HTTP 503: upstream billing-service unavailable (request "
                                         "5d41402abc4b2a76b9719d911017c592)");
    if (!testing::sqlExec(db,
                          QStringLiteral("UPDATE outbox_events SET attempts = 2, last_error = ?, "
                                         " next_attempt_at = now() + interval '95 seconds' "
                                         "WHERE id = ?"),
                          {error, id}) ||
        !testing::sqlExec(db,
                          QStringLiteral("INSERT INTO outbox_attempts (event_id, attempt, "
                                         " attempted_at, worker_id, http_status, duration_ms, "
                                         " error) SELECT ?, a, now() - make_interval(secs => "
                                         " 60 / a), '0190c8e2-0000-7000-8000-0000000000b2', 503, "
                                         " 80 + a, ? FROM generate_series(1, 2) a"),
                          {id, error}))
        return fail("could not stage the detail event");
    showPage(core::Status::Pending);
    console::EventView *pending = page(core::Status::Pending);
    if (!waitFor([&] { return pending->model()->rowOf(id) >= 0; }))
        return fail("the requeued event did not show up");
    clickRow(pending, id);
    if (!waitFor([&] { return whyLine->text().contains(QLatin1String("backoff")); }))
        return fail("no detail for the requeued event");
    settle(1500);
    shoot(&window, out + QStringLiteral("/main-window-pending.png"));
    auto *tabs = detail->findChild<QTabWidget *>(QStringLiteral("tabs"));
    QWidget *detailDock = detail->parentWidget();
    const QStringList tabShots{QStringLiteral("detail-pane"), QStringLiteral("detail-payload"),
                               QStringLiteral("detail-failures"), QStringLiteral("detail-history")};
    for (int i = 0; i < tabShots.size(); ++i) {
        tabs->setCurrentIndex(i);
        settle(300);
        detailDock->grab().save(out + QLatin1Char('/') + tabShots.at(i) + QStringLiteral(".png"));
    }
    tabs->setCurrentIndex(0);
    showPage(core::Status::Dead);

    // 3. A bulk requeue by filter, rate-limited, in progress.
    window.findChild<console::FilterBar *>()->setNamespace(QStringLiteral("billing"));
    if (!waitFor([&] { return dead->model()->rowCount() > 0 && dead->model()->rowCount() < 100; }))
        return fail("the filter did not apply");
    window.findChild<console::ActionController *>()
        ->action(console::ActionController::RequeueMatching)
        ->trigger();
    auto *bulk = window.findChild<console::BulkDialog *>();
    if (!bulk || !waitFor([&] { return bulk->stage() == console::BulkDialog::Stage::Confirm; }))
        return fail("no dry run");
    bulk->setRate(4);
    bulk->setBatchSize(4);
    bulk->setReason(QStringLiteral("billing-service is back (INC-2291)"));
    shoot(&window, out + QStringLiteral("/bulk-requeue-confirm.png"));
    bulk->start(); // the job goes to the Jobs panel, the window stays free
    settle(5500);
    shoot(&window, out + QStringLiteral("/jobs-panel-redrive.png"));
    auto *jobs = window.findChild<console::JobListModel *>();
    jobs->stopAll();
    if (!waitFor([&] { return jobs->runningCount() == 0; }))
        return fail("the requeue did not stop");

    // 4. It tells you first: an event due for 26 hours. Without a system
    // tray (xvfb) the alert shows in the status bar, once the condition has
    // held for the threshold's "for at least" (30 s by default).
    if (!testing::sqlExec(db, QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, "
                                             " payload, created_at, next_attempt_at) VALUES "
                                             " (outbox_uuid_v7(), 'billing', 'invoice.paid', "
                                             " '{\"id\": 1}', now() - interval '26 hours', "
                                             " now() - interval '26 hours')")))
        return fail("could not add the late event");
    auto *alert = window.findChild<QToolButton *>(QStringLiteral("alertMarker"));
    if (!waitFor([&] { return alert->isVisible(); }, 90000))
        return fail("no alert");
    QTest::mouseClick(alert, Qt::LeftButton); // opens the pending page
    settle(1500);
    shoot(&window, out + QStringLiteral("/alert-in-window.png"));

    // 5. Who is delivering: two dispatchers alive, one killed an hour ago
    // (its heartbeat stale), and a paused namespace.
    const char *registry[] = {
        "SELECT outbox_dispatcher_register(outbox_uuid_v7(), md5('a') || md5('a'), 'app-1',"
        " 41872, '1.0.0', 'outboxctl', NULL, 'http://runner.internal:8080/events', 64, 5000,"
        " now() - interval '3 days')",
        "SELECT outbox_dispatcher_register(outbox_uuid_v7(), md5('b') || md5('b'), 'app-2',"
        " 9131, '1.0.0', 'outboxctl', 'billing', 'http://runner.internal:8080/events', 32, 5000,"
        " now() - interval '2 hours')",
        "SELECT outbox_dispatcher_register(outbox_uuid_v7(), md5('c') || md5('c'), 'app-3',"
        " 2210, '0.9.4', 'outboxctl', NULL, 'http://runner.internal:8080/events', 64, 5000,"
        " now() - interval '5 days')",
        "UPDATE outbox_dispatchers SET heartbeat_at = now() - interval '1 hour' WHERE host = "
        "'app-3'",
        "UPDATE outbox_dispatchers SET delivered_per_s = 412.5, in_flight = 37,"
        " delivered_total = 18233117 WHERE host = 'app-1'",
        "UPDATE outbox_dispatchers SET delivered_per_s = 96.2, failed_per_s = 3.1, in_flight = 9,"
        " delivered_total = 402118 WHERE host = 'app-2'",
        "SELECT outbox_pause('shipping', NULL, 'carrier API down (INC-2302)', 'maria',"
        " 'oncall-laptop', 'outboxctl')",
    };
    for (const char *sql : registry) {
        if (!testing::sqlExec(db, QString::fromLatin1(sql)))
            return fail(sql);
    }
    auto *dispatchersDock = window.findChild<QDockWidget *>(QStringLiteral("dispatchersDock"));
    auto *dispatchers = window.findChild<QTableWidget *>(QStringLiteral("dispatchersTable"));
    dispatchersDock->show();
    dispatchersDock->raise();
    if (!waitFor([&] { return dispatchers->rowCount() == 3; }))
        return fail("the dispatchers did not show");
    settle(1500);
    shoot(&window, out + QStringLiteral("/dispatchers-dock.png"));
    return 0;
}
