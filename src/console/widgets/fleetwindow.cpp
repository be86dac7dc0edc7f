#include "console/widgets/fleetwindow.h"

#include "console/model/consolesettings.h"
#include "console/model/consoletypes.h"
#include "console/model/databasesettings.h"
#include "console/model/fleetmodel.h"
#include "console/model/fleetwatcher.h"
#include "console/widgets/fleetsparkline.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTabBar>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

constexpr const char *kMemberProperty = "fleetMember";

} // namespace

QList<store::FleetEntry> FleetWindow::withProfiles(QList<store::FleetEntry> entries,
                                                   const ConsoleSettings &settings) {
    QStringList names;
    for (const store::FleetEntry &e : std::as_const(entries)) {
        names << e.name;
    }
    for (const ConnectionProfile &profile : settings.profiles()) {
        auto info = profile.toConnInfo();
        if (!info || names.contains(profile.name)) {
            continue;
        }
        entries.append({profile.name, info.value(), tr("Saved profiles"), {}});
    }
    return entries;
}

FleetWindow::FleetWindow(ConsoleSettings *settings, QList<store::FleetEntry> entries,
                         MainWindowOptions options, QWidget *parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_options(std::move(options)) {
    setObjectName(QStringLiteral("fleetWindow"));
    setWindowTitle(tr("Fleet — Outbox Console"));
    if (!m_settings) {
        m_ownQSettings = std::make_unique<QSettings>();
        m_ownSettings = std::make_unique<ConsoleSettings>(m_ownQSettings.get());
        m_settings = m_ownSettings.get();
    }
    m_geometry = m_settings->windowGeometry();

    m_watcher = new FleetWatcher(std::move(entries), this);
    for (int i = 0; i < m_watcher->size(); ++i) {
        const DatabaseSettings database(
            m_settings->qsettings(), DatabaseSettings::keyFor(m_watcher->member(i).entry.target));
        m_watcher->setThresholds(i, database.alertThresholds());
    }
    m_model = new FleetModel(m_watcher, this);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("fleetTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->setTabsClosable(true);
    auto *page = new QWidget(m_tabs);
    page->setObjectName(QStringLiteral("fleetPage"));
    auto *layout = new QVBoxLayout(page);
    m_summary = new QLabel(page);
    m_summary->setObjectName(QStringLiteral("fleetSummary"));
    m_alerts = new QLabel(page);
    m_alerts->setObjectName(QStringLiteral("fleetAlerts"));
    m_alerts->setWordWrap(true);
    m_alerts->setStyleSheet(
        QStringLiteral("QLabel { background: #fdecea; color: #8a1c1c; border: 1px solid #f5c2c0;"
                       " border-radius: 3px; padding: 4px 6px; }"));
    m_alerts->hide();
    m_view = new QTreeView(page);
    m_view->setObjectName(QStringLiteral("fleetView"));
    m_view->setModel(m_model);
    m_view->setUniformRowHeights(true);
    m_view->setAllColumnsShowFocus(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setExpandsOnDoubleClick(true);
    m_view->setItemDelegateForColumn(FleetModel::DeliveredColumn,
                                     new FleetSparklineDelegate(m_view));
    m_view->header()->setStretchLastSection(true);
    m_view->header()->resizeSection(FleetModel::NameColumn, 190);
    m_view->header()->resizeSection(FleetModel::StateColumn, 330);
    for (int c : {FleetModel::DueColumn, FleetModel::OldestDueColumn, FleetModel::WaitingColumn,
                  FleetModel::DeadColumn, FleetModel::DiedColumn}) {
        m_view->header()->resizeSection(c, 78);
    }
    m_view->header()->resizeSection(FleetModel::DeliveredColumn, 150);
    m_view->header()->resizeSection(FleetModel::DispatchersColumn, 110);
    m_view->header()->resizeSection(FleetModel::PausedColumn, 90);
    m_view->header()->resizeSection(FleetModel::ErrorColumn, 260);
    m_view->expandAll();
    layout->addWidget(m_summary);
    layout->addWidget(m_alerts);
    layout->addWidget(m_view, 1);
    m_tabs->addTab(page, tr("Fleet"));
    // The fleet itself stays: no close button on its tab.
    m_tabs->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);
    m_tabs->tabBar()->setTabButton(0, QTabBar::LeftSide, nullptr);
    setCentralWidget(m_tabs);

    connect(m_view, &QTreeView::activated, this, [this](const QModelIndex &index) {
        const int member = index.data(FleetModel::MemberRole).toInt();
        if (member >= 0) {
            openMember(member);
        }
    });
    connect(m_tabs, &QTabWidget::tabCloseRequested, this, [this](int i) {
        if (i > 0) {
            m_tabs->setCurrentIndex(i);
            closeCurrentTab();
        }
    });
    // A group that moves keeps its expanded state (the model moves its
    // persistent index with it): no relayout of the whole tree per reading,
    // and a group the user collapsed stays collapsed.
    // With the rows, once per batch of readings (not once per reading).
    connect(m_model, &FleetModel::updated, this, &FleetWindow::updateSummary);
    connect(m_watcher, &FleetWatcher::alertRaised, this, &FleetWindow::onAlert);
    connect(m_watcher, &FleetWatcher::alertCleared, this, &FleetWindow::updateSummary);
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(windowIcon(), this);
        m_tray->setToolTip(tr("Outbox Console fleet"));
        m_tray->show();
    }
    // The menus (the menu bar loads its icons) in the event loop's first
    // turn, before the first paint: the constructor stays short.
    QMetaObject::invokeMethod(this, &FleetWindow::buildMenus, Qt::QueuedConnection);
    // Wide enough for every column, never wider than the screen (a laptop's).
    QSize size(1500, 720);
    if (const QScreen *screen = this->screen()) {
        size = size.boundedTo(screen->availableSize() * 0.95);
    }
    resize(size);
    updateSummary();
    m_watcher->start();
    m_view->setFocus();
    if (m_model->rowCount() > 0) {
        m_view->setCurrentIndex(m_model->index(0, 0));
    }
}

FleetWindow::~FleetWindow() {
    // The consoles of open tabs use the settings this window may own: they
    // go first (closing the window closes them properly; this is for a
    // window deleted outright).
    while (m_tabs->count() > 1) {
        delete m_tabs->widget(1);
    }
}

void FleetWindow::buildMenus() {
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QAction *open = file->addAction(tr("&Open the database"), this, [this] {
        const QModelIndex current = m_view->currentIndex();
        if (m_tabs->currentIndex() == 0 && current.isValid()) {
            Q_EMIT m_view->activated(current);
        }
    });
    open->setObjectName(QStringLiteral("fleetOpenAction"));
    QAction *closeTab = file->addAction(tr("&Close tab"), this, &FleetWindow::closeCurrentTab);
    // Ctrl+W on every desktop, beside the platform's own Close keys.
    QList<QKeySequence> keys{QKeySequence(Qt::CTRL | Qt::Key_W)};
    for (const QKeySequence &k : QKeySequence::keyBindings(QKeySequence::Close)) {
        if (!keys.contains(k)) {
            keys << k;
        }
    }
    closeTab->setShortcuts(keys);
    closeTab->setObjectName(QStringLiteral("fleetCloseTabAction"));
    closeTab->setShortcutContext(Qt::WindowShortcut);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu *view = menuBar()->addMenu(tr("&View"));
    // No shortcut: F5 and Ctrl+Shift+R are the consoles' own in their tabs.
    view->addAction(tr("&Refresh the fleet"), this, [this] { m_watcher->refreshNow(); });
    QAction *fleet = view->addAction(tr("&Fleet"), this, [this] {
        m_tabs->setCurrentIndex(0);
        m_view->setFocus();
    });
    fleet->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F));
    fleet->setObjectName(QStringLiteral("fleetShowAction"));
    view->addAction(tr("E&xpand all groups"), m_view, &QTreeView::expandAll);
    view->addAction(tr("C&ollapse all groups"), m_view, &QTreeView::collapseAll);
}

void FleetWindow::openMember(int member) {
    for (int i = 1; i < m_tabs->count(); ++i) {
        if (m_tabs->widget(i)->property(kMemberProperty).toInt() == member) {
            m_tabs->setCurrentIndex(i);
            return;
        }
    }
    const store::FleetEntry &entry = m_watcher->member(member).entry;
    auto *console = new MainWindow(m_settings, m_options, nullptr);
    console->setWindowFlags(Qt::Widget);
    console->setAttribute(Qt::WA_DeleteOnClose);
    console->setObjectName(QStringLiteral("fleetConsole-") + entry.name);
    console->setProperty(kMemberProperty, member);
    // Its consoles save their geometry as the console's own on closing: the
    // console started on its own keeps the one it had.
    connect(console, &QObject::destroyed, this, [this, member] {
        m_settings->setWindowGeometry(m_geometry);
        // Its thresholds may have been changed in its console.
        const DatabaseSettings database(
            m_settings->qsettings(),
            DatabaseSettings::keyFor(m_watcher->member(member).entry.target));
        m_watcher->setThresholds(member, database.alertThresholds());
        if (m_closing && m_tabs->count() <= 1) {
            close();
        }
    });
    const int tab = m_tabs->addTab(console, entry.name);
    m_tabs->setTabToolTip(tab, entry.target.redacted());
    console->connectTo(entry.target, entry.group == tr("Saved profiles") ? entry.name : QString());
    m_tabs->setCurrentIndex(tab);
    console->setFocus();
}

void FleetWindow::closeCurrentTab() {
    const int i = m_tabs->currentIndex();
    if (i <= 0) {
        return;
    }
    QWidget *console = m_tabs->widget(i);
    m_tabs->setCurrentIndex(0);
    m_view->setFocus();
    // Its close stops what it runs (an embedded dispatcher) first; it is
    // deleted, and its tab removed, once it has.
    console->close();
}

void FleetWindow::closeEvent(QCloseEvent *event) {
    if (m_tabs->count() <= 1) {
        event->accept();
        return;
    }
    event->ignore();
    m_closing = true;
    for (int i = m_tabs->count() - 1; i > 0; --i) {
        m_tabs->widget(i)->close();
    }
}

void FleetWindow::onAlert(int member, const Alert &alert) {
    if (m_tray && m_watcher->member(member).snapshot) {
        m_tray->showMessage(alert.title, alert.text, QSystemTrayIcon::Warning);
    }
    updateSummary();
}

void FleetWindow::updateSummary() {
    QList<int> counts(5, 0);
    QStringList alerts;
    for (int i = 0; i < m_watcher->size(); ++i) {
        const FleetMember &m = m_watcher->member(i);
        ++counts[store::fleetSeverity(m.state)];
        // Every database in alert, as its row says it (the rule's and the
        // alert monitor's, which judge() merges).
        if (m.state == store::FleetState::Alert && !m.reasons.isEmpty()) {
            alerts << m.entry.name + QLatin1String(": ") + firstLine(m.reasons.first(), 100);
        }
    }
    const auto n = [&](store::FleetState s) { return counts[store::fleetSeverity(s)]; };
    m_summary->setText(tr("%1 databases: %2 in alert, %3 unreachable, %4 warning, %5 ok, %6 "
                          "pending")
                           .arg(m_watcher->size())
                           .arg(n(store::FleetState::Alert))
                           .arg(n(store::FleetState::Unreachable))
                           .arg(n(store::FleetState::Warning))
                           .arg(n(store::FleetState::Ok))
                           .arg(n(store::FleetState::Pending)));
    m_alerts->setVisible(!alerts.isEmpty());
    m_alerts->setText(alerts.join(QStringLiteral("  \u00b7  ")));
}

void openFleetDialog(QWidget *parent) {
    const QString path = QFileDialog::getOpenFileName(
        parent, FleetWindow::tr("Open fleet"), QString(),
        FleetWindow::tr("Fleet files (*.conf *.fleet *.ini);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    auto entries = store::readFleetFile(path);
    if (!entries) {
        QMessageBox::warning(parent, FleetWindow::tr("Open fleet"), entries.errorMessage());
        return;
    }
    auto *settings = new QSettings;
    ConsoleSettings profiles(settings);
    auto *window = new FleetWindow(nullptr, FleetWindow::withProfiles(entries.value(), profiles),
                                   MainWindowOptions{});
    delete settings;
    window->setAttribute(Qt::WA_DeleteOnClose);
    window->show();
}

} // namespace outbox::console
