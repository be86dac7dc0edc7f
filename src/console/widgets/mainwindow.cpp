#include "console/widgets/mainwindow.h"

#include "console/model/consolesettings.h"
#include "console/model/databasesettings.h"
#include "console/model/eventtablemodel.h"
#include "console/model/filterstate.h"
#include "console/model/statusnavmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/application.h"
#include "console/widgets/connectiondialog.h"
#include "console/widgets/demolauncher.h"
#include "console/widgets/detailpane.h"
#include "console/widgets/dispatcherpanel.h"
#include "console/widgets/dispatchersview.h"
#include "console/widgets/errorgroupsview.h"
#include "console/widgets/eventview.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/historycharts.h"
#include "console/widgets/keyboard.h"
#include "console/widgets/operatoraids.h"
#include "console/widgets/statusindicators.h"
#include "console/widgets/windowlayout.h"
#include "console/widgets/windowmenus.h"
#include "store/session.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QHeaderView>
#include <QMenu>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

constexpr std::array<core::Status, 4> kStatuses{core::Status::Pending, core::Status::Processing,
                                                core::Status::Delivered, core::Status::Dead};

QString statusTitle(core::Status status) {
    // In the order of core::Status.
    static constexpr std::array<const char *, 4> kTitles{
        QT_TRANSLATE_NOOP("MainWindow", "Pending"), QT_TRANSLATE_NOOP("MainWindow", "Processing"),
        QT_TRANSLATE_NOOP("MainWindow", "Delivered"), QT_TRANSLATE_NOOP("MainWindow", "Dead")};
    return MainWindow::tr(kTitles.at(std::size_t(status)));
}

} // namespace

MainWindow::MainWindow(ConsoleSettings *settings, MainWindowOptions options, QWidget *parent)
    : QMainWindow(parent)
    , m_settings(settings)
    , m_options(std::move(options))
    , m_state(new FilterState(this))
    , m_nav(new StatusNavModel(this))
    , m_navView(new QTreeView)
    , m_errors(new ErrorGroupsView(m_state))
    , m_filterBar(new FilterBar(m_state))
    , m_tabs(new QTabWidget)
    , m_detail(new DetailPane)
    , m_actions(new ActionController(settings, this))
    , m_indicators(new StatusIndicators(statusBar()))
    , m_banner(new ConnectionBanner)
    , m_dispatcher(new DispatcherPanel(settings ? settings->qsettings() : nullptr))
    , m_layout(new WindowLayout(this, settings)) {
    initResources();
    setObjectName(QStringLiteral("mainWindow"));
    m_state->setObjectName(QStringLiteral("filterState"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/outbox-console.svg")));
    m_tabs->setObjectName(QStringLiteral("statusTabs"));
    m_tabs->setDocumentMode(true);
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        auto *view = new EventView(kStatuses[i], settings);
        m_views[i] = view;
        m_tabs->addTab(view, statusTitle(kStatuses[i]));
        // Only the page on show drives the detail pane (the others refresh
        // too, and their current rows move with it).
        connect(view, &EventView::currentEventChanged, this, [this, view](const QUuid &id) {
            if (view == currentView())
                m_detail->setEvent(id);
        });
        connect(view, &EventView::selectionChanged, m_actions, &ActionController::updateState);
        connect(view, &EventView::contextMenuRequested, this, &MainWindow::showTableMenu);
        // Selected rows may change state under the selection.
        connect(view->model(), &EventTableModel::refreshed, m_actions,
                &ActionController::updateState);
    }
    auto *central = new QWidget;
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_banner);
    layout->addWidget(m_filterBar);
    layout->addWidget(m_tabs, 1);
    m_layout->setCentralWidget(central);

    m_actions->setSelectionProvider([this] { return currentView()->selectedEvents(); });
    m_actions->setFilterProvider([this] { return m_state->filter(); });
    connect(m_actions, &ActionController::message, this,
            [this](const QString &text) { statusBar()->showMessage(text, 15000); });
    connect(m_actions, &ActionController::eventsChanged, this, &MainWindow::refreshNow);

    buildDocks();
    installOperatorAids(this, m_actions, m_settings); // jobs panel, alerts
    buildMenus();
    QList<QAbstractItemView *> tables;
    for (EventView *v : m_views) {
        tables << v->table();
    }
    m_keys = new KeyboardNavigation(
        this, {m_tabs, m_detail, m_navView, m_errors, m_filterBar, m_dispatcher, statusBar()},
        tables, m_actions->action(ActionController::CopyId));

    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::onTabChanged);
    connect(m_state, &FilterState::changed, this, &MainWindow::showFilter);
    connect(
        m_detail, &DetailPane::linkFollowed, this, [this](const QUuid &id, core::Status status) {
            showStatus(status);
            m_detail->setEvent(id);
            // After the page has taken the filter (FilterState::changed,
            // queued before this), which would drop the choice.
            QMetaObject::invokeMethod(
                this, [this, id, status] { view(status)->selectEvent(id); }, Qt::QueuedConnection);
        });
    connect(m_banner, &ConnectionBanner::retryRequested, this, [this] {
        if (m_client) {
            m_client->reconnectNow();
        }
    });
    connect(m_banner, &ConnectionBanner::reconnectRequested, this,
            &MainWindow::openConnectionDialog);
    connect(m_indicators, &StatusIndicators::liveToggled, this, &MainWindow::setLive);
    connect(m_indicators, &StatusIndicators::intervalChanged, this,
            [this](std::chrono::milliseconds interval) {
                m_tick.setInterval(interval);
                if (m_settings) {
                    m_settings->setRefreshInterval(interval);
                }
            });
    connect(&m_tick, &QTimer::timeout, this, &MainWindow::refreshNow);

    const auto interval = m_settings ? m_settings->refreshInterval() : std::chrono::seconds(2);
    m_tick.setInterval(interval);
    m_indicators->setInterval(interval);
    setLive(m_settings ? m_settings->liveEnabled() : true);
    m_layout->restoreGeometry();
    updateReadOnly();
    updateTitle();
    showFilter(m_state->filter());
    // The keyboard starts in the events (else the first field made, the
    // status bar's Live toggle, would have it).
    currentView()->table()->setFocus(Qt::OtherFocusReason);
}

MainWindow::~MainWindow() {
    releaseClient();
}

void MainWindow::releaseClient() {
    // The parts hold the client without owning it: let go before it goes.
    for (EventView *view : m_views) {
        view->setClient(nullptr);
    }
    m_errors->setClient(nullptr);
    m_detail->setClient(nullptr);
    m_actions->setClient(nullptr);
    m_charts->setClient(nullptr);
    m_client.reset();
}

void MainWindow::buildDocks() {
    setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
    m_navView->setObjectName(QStringLiteral("navigatorView"));
    m_navView->setModel(m_nav);
    m_navView->setUniformRowHeights(true);
    m_navView->header()->setStretchLastSection(false);
    m_navView->header()->setSectionResizeMode(StatusNavModel::NameColumn, QHeaderView::Stretch);
    m_navView->header()->setSectionResizeMode(StatusNavModel::CountColumn,
                                              QHeaderView::ResizeToContents);
    m_navView->setExpandsOnDoubleClick(true);
    for (int row = 0; row < m_nav->rowCount(); ++row) {
        m_navView->expand(m_nav->index(row, 0)); // the first level is always worth seeing
    }
    connect(m_navView, &QTreeView::clicked, this, &MainWindow::onNavigatorClicked);
    connect(m_navView, &QTreeView::activated, this, &MainWindow::onNavigatorClicked);

    m_layout->addDock(tr("Outbox"), QStringLiteral("navigatorDock"), m_navView,
                      Qt::LeftDockWidgetArea);
    m_layout->addDock(tr("What is failing"), QStringLiteral("errorGroupsDock"), m_errors,
                      Qt::LeftDockWidgetArea);
    m_layout->addDock(tr("Event"), QStringLiteral("detailDock"), m_detail, Qt::RightDockWidgetArea);
    // Most consoles watch a dispatcher running elsewhere: shown on demand
    // (View menu) and in demo mode.
    m_layout->addDock(tr("Dispatcher"), QStringLiteral("dispatcherDock"), m_dispatcher,
                      Qt::BottomDockWidgetArea, false);
    m_charts = new HistoryCharts;
    m_layout->addDock(tr("Charts"), QStringLiteral("chartsDock"), m_charts,
                      Qt::BottomDockWidgetArea);
    m_registry = new DispatchersView(this, m_navView, &m_activity, m_detail); // its own dock
    m_layout->applyDefaults();
}

void MainWindow::buildMenus() {
    // In the order of kStatuses, with access letters that the View menu's
    // other entries do not use.
    const QStringList pages{tr("&Pending"), tr("Pr&ocessing"), tr("&Delivered"), tr("De&ad")};
    m_viewMenu = buildWindowMenus(this, m_actions, m_filterBar, pages,
                                  {[this] { openConnectionDialog(); },
                                   [this] {
                                       if (startDemo() == DemoStart::InDemoProgram) {
                                           close();
                                       }
                                   },
                                   [this] { refreshNow(); },
                                   [this](int page) { m_tabs->setCurrentIndex(page); }});
    m_tableMenu = new QMenu(this);
    m_actions->fillContextMenu(m_tableMenu);
}

EventView *MainWindow::view(core::Status status) const {
    for (EventView *v : m_views) {
        if (v->status() == status) {
            return v;
        }
    }
    return m_views[0];
}

EventView *MainWindow::currentView() const {
    return static_cast<EventView *>(m_tabs->currentWidget());
}

void MainWindow::showStatus(core::Status status) {
    m_tabs->setCurrentWidget(view(status));
}

void MainWindow::showFilter(const store::EventFilter &filter) {
    // Only the page of its status loads; the others catch up when shown.
    showStatus(*filter.status); // its tab passes on the status it already has
    currentView()->setFilter(filter);
    const QModelIndex place = m_nav->indexFor(filter);
    if (place != m_navView->currentIndex().siblingAtColumn(StatusNavModel::NameColumn)) {
        m_navView->setCurrentIndex(place);
    }
    m_actions->updateState();
}

void MainWindow::onTabChanged() {
    m_state->setStatus(currentView()->status());
    m_detail->setEvent(currentView()->currentEvent() ? currentView()->currentEvent()->id : QUuid());
}

void MainWindow::onNavigatorClicked(const QModelIndex &index) {
    const store::EventFilter place = StatusNavModel::filterAt(index);
    if (place.status) {
        m_state->setPlace(place);
    }
}

void MainWindow::connectTo(const core::ConnInfo &info, const QString &profileName) {
    releaseClient();
    m_serverInfo.reset();
    m_privileges.reset();
    m_lastCounts.reset();
    m_connInfo = info;
    m_profileName = profileName;
    m_layout->useProfile(profileName.isEmpty() ? info.redacted() : profileName);
    const auto profile =
        m_settings && !profileName.isEmpty() ? m_settings->profile(profileName) : std::nullopt;
    m_detail->setTraceUrlTemplate(profile ? profile->traceUrlTemplate : QString());
    StoreClientOptions clientOptions = m_options.client;
    clientOptions.readOnly = clientOptions.readOnly || m_options.readOnly; // in the server too
    m_client = std::make_unique<StoreClient>(info, clientOptions);
    wireClient();
    for (EventView *v : m_views) {
        v->setClient(m_client.get());
    }
    m_errors->setClient(m_client.get());
    m_detail->setClient(m_client.get());
    m_actions->setClient(m_client.get());
    m_charts->setClient(m_client.get());
    m_dispatcher->setConnInfo(m_options.readOnly ? store::readOnlySession(info) : info);
    m_registry->setConnInfo(info);
    m_indicators->setTarget(m_client->connectionDescription());
    updateReadOnly();
    updateTitle();
    m_client->start();
}

void MainWindow::wireClient() {
    StoreClient *c = m_client.get();
    connect(c, &StoreClient::connectionStateChanged, this, &MainWindow::onConnectionState);
    connect(c, &StoreClient::changed, this, [this] {
        if (m_live) {
            refreshNow();
        }
    });
    connect(c, &StoreClient::countsReady, this,
            [this](RequestId id, const store::StatusCounts &counts) {
                if (id == m_countsId) {
                    onCounts(counts);
                }
            });
    connect(c, &StoreClient::serverInfoReady, this,
            [this](RequestId, const store::ServerInfo &info) {
                m_serverInfo = info;
                m_indicators->setServerInfo(info);
                updateReadOnly();
                updateTitle();
            });
    connect(c, &StoreClient::privilegesReady, this,
            [this](RequestId, const store::Privileges &p) { onPrivileges(p); });
    connect(c, &StoreClient::requestFailed, this,
            [this](RequestId, RequestKind kind, const core::Error &error) {
                if (kind == RequestKind::Privileges || kind == RequestKind::ServerInfo ||
                    kind == RequestKind::Counts) {
                    statusBar()->showMessage(error.message, 15000);
                }
                if (kind == RequestKind::Privileges && error.kind != core::ErrorKind::Unavailable) {
                    m_banner->setProblem(error.message); // e.g. no outbox schema here
                }
            });
}

void MainWindow::onConnectionState(ConnectionState state, const QString &message) {
    m_indicators->setConnectionState(state, message);
    m_banner->setConnectionState(state, message);
    m_actions->setConnected(state == ConnectionState::Connected);
    if (state == ConnectionState::Connected) {
        m_passwordAsked = false;
        m_client->requestServerInfo();
        m_client->requestPrivileges();
        refreshNow();
    } else if (state == ConnectionState::Disconnected && m_client->needsPassword()) {
        askPassword(message);
    }
}

void MainWindow::askPassword(const QString &message) {
    if (m_passwordAsked) {
        return;
    }
    m_passwordAsked = true;
    askPasswordAsync(this, message, m_client ? m_client->connectionDescription() : QString(),
                     [this](const QString &password) {
                         core::ConnInfo info = m_connInfo;
                         info.password = password;
                         connectTo(info, m_profileName);
                     });
}

void MainWindow::onPrivileges(const store::Privileges &privileges) {
    m_privileges = privileges;
    updateReadOnly();
    if (!privileges.canRead) {
        statusBar()->showMessage(tr("This role may not read the outbox tables; grant it "
                                    "outbox_viewer or outbox_operator."));
    }
}

bool MainWindow::isReadOnly() const {
    return m_actions->isReadOnly();
}

void MainWindow::updateReadOnly() {
    const ReadOnlyReasons why = readOnlyReasons(m_options.readOnly, m_privileges,
                                                m_serverInfo ? m_serverInfo->user : QString());
    m_actions->setReadOnly(!why.actions.isEmpty(), why.actions);
    m_indicators->setReadOnly(!why.actions.isEmpty(), why.actions);
    m_dispatcher->setReadOnly(!why.dispatch.isEmpty(), why.dispatch);
    updateTitle();
}

void MainWindow::updateTitle() {
    QString target = m_profileName;
    if (m_serverInfo) {
        target = tr("%1 on %2").arg(m_serverInfo->database, m_serverInfo->host);
    } else if (target.isEmpty() && m_client) {
        target = m_client->connectionDescription();
    }
    if (m_demo) {
        target += tr(" [demo]");
    }
    if (isReadOnly()) {
        target += tr(" [read-only]");
    }
    setWindowTitle(windowTitleFor(target.trimmed()));
}

void MainWindow::setLive(bool live) {
    m_live = live;
    m_indicators->setLive(live);
    if (m_settings) {
        m_settings->setLiveEnabled(live);
    }
    if (live) {
        m_tick.start();
        refreshNow();
    } else {
        m_tick.stop();
    }
}

void MainWindow::refreshNow() {
    if (!m_client || m_client->connectionState() != ConnectionState::Connected) {
        return;
    }
    m_countsId = m_client->requestCounts(QStringLiteral("counts"));
    currentView()->refresh();
    m_errors->refresh();
    m_detail->refresh();
}

void MainWindow::onCounts(const store::StatusCounts &counts) {
    const bool moved = m_lastCounts && (counts.delivered != m_lastCounts->delivered ||
                                        counts.dead != m_lastCounts->dead ||
                                        counts.retrying != m_lastCounts->retrying);
    if (counts.processing > 0 || moved || m_dispatcher->isRunning()) {
        m_activity.lastActivity = counts.serverTime;
    }
    m_activity.processing = counts.processing;
    m_lastCounts = counts;
    m_nav->applyCounts(counts);
    m_filterBar->setKnownTopics(counts.topics);
    m_detail->setDispatchActivity(m_activity);
    m_dispatcher->addBacklogSample(counts);
    const std::array<QString, 4> texts{formatCount(counts.pending + counts.retrying),
                                       formatCount(counts.processing),
                                       formatCount(counts.delivered, counts.deliveredEstimated),
                                       formatCount(counts.dead, counts.deadEstimated)};
    for (std::size_t i = 0; i < kStatuses.size(); ++i) {
        m_tabs->setTabText(int(i), tr("%1 (%2)").arg(statusTitle(kStatuses[i]), texts[i]));
    }
    m_indicators->setLastRefresh(QDateTime::currentDateTime());
}

void MainWindow::showTableMenu(const QPoint &globalPos) {
    m_actions->updateState();
    m_tableMenu->popup(globalPos);
}

void MainWindow::openConnectionDialog() {
    openConnectionDialogAsync(m_settings, this, m_connInfo, [this](const ConnectionDialog &d) {
        if (d.demoRequested()) {
            if (startDemo() == DemoStart::InDemoProgram) {
                close();
            }
        } else if (auto info = d.connInfo()) {
            connectTo(info.value(), d.profileName());
        }
    });
}

DemoStart MainWindow::startDemo() {
    if (m_demo) {
        return DemoStart::InThisWindow;
    }
    if (!m_options.demo) {
        return launchDemoProgram(this, m_options.readOnly) ? DemoStart::InDemoProgram
                                                           : DemoStart::Failed;
    }
    m_demo = m_options.demo(this);
    // A tab behind the dispatcher it drives, so that the event's detail
    // keeps the right column's height and neither pane is squeezed.
    m_demoDock = m_layout->addDock(tr("Demo"), QStringLiteral("demoDock"), m_demo->createPanel(),
                                   Qt::BottomDockWidgetArea);
    m_viewMenu->addAction(m_demoDock->toggleViewAction());
    if (auto *dispatcherDock = findChild<QDockWidget *>(QStringLiteral("dispatcherDock"))) {
        m_layout->setShownByDefault(dispatcherDock, true);
        m_layout->setTabbedBehind(m_demoDock, dispatcherDock);
        dispatcherDock->show();
        tabifyDockWidget(dispatcherDock, m_demoDock);
        dispatcherDock->raise();
    }
    // The demo's panel charts it live; the history waits in the View menu.
    if (auto *chartsDock = findChild<QDockWidget *>(QStringLiteral("chartsDock"))) {
        m_layout->setShownByDefault(chartsDock, false);
        chartsDock->hide();
    }
    connect(m_demo, &DemoController::progress, this, [this](const QString &step) {
        statusBar()->showMessage(tr("Demo: %1").arg(step));
        m_indicators->setTarget(tr("demo: %1").arg(step));
    });
    if (auto *again = findChild<QAction *>(QStringLiteral("startDemoAction"))) {
        again->setEnabled(false);
        again->setToolTip(tr("A demo runs in this window"));
    }
    connect(m_demo, &DemoController::ready, this, [this](const core::ConnInfo &info) {
        // The demo's cluster is new on every run: what the console keeps
        // for it goes with it, instead of piling up in the settings.
        connect(m_demo, &DemoController::stopped, this,
                [this, key = DatabaseSettings::keyFor(info)] {
                    if (m_settings)
                        DatabaseSettings(m_settings->qsettings(), key).forget();
                });
        m_dispatcher->setConfig(m_demo->dispatcherConfig(), false);
        m_dispatcher->setPublisherFactory(m_demo->publisherFactory());
        connectTo(info, tr("demo"));
        statusBar()->showMessage(tr("Demo ready: events flow, fail, retry and die within a "
                                    "minute."),
                                 15000);
        m_dispatcher->start();
    });
    connect(m_demo, &DemoController::failed, this, [this](const QString &message) {
        m_banner->setConnectionState(ConnectionState::Disconnected,
                                     tr("the demo could not start: %1").arg(message));
    });
    updateTitle();
    m_demo->start();
    return DemoStart::InThisWindow;
}

void MainWindow::closeEvent(QCloseEvent *event) {
    if (m_closeStage == CloseStage::Ready) {
        event->accept();
        return;
    }
    event->ignore();
    if (m_closeStage != CloseStage::Open) {
        return;
    }
    if (m_settings) {
        m_layout->save();
        for (EventView *v : m_views) {
            v->saveLayout();
        }
        m_settings->sync();
    }
    m_closeStage = CloseStage::StoppingDispatcher;
    statusBar()->showMessage(tr("Stopping the dispatcher…"));
    connect(
        m_dispatcher, &DispatcherPanel::readyToClose, this,
        [this] {
            if (m_demo && !m_demo->hasStopped()) {
                m_closeStage = CloseStage::StoppingDemo;
                releaseClient(); // before its server goes away
                statusBar()->showMessage(tr("Stopping the demo and removing its cluster…"));
                connect(m_demo, &DemoController::stopped, this, &MainWindow::finishClose);
                m_demo->stop();
                return;
            }
            finishClose();
        },
        Qt::SingleShotConnection);
    m_dispatcher->stopForClose();
    // Never hang on the way out: after this long, close regardless (the
    // parts' destructors then stop what is left, blocking briefly).
    QTimer::singleShot(std::chrono::seconds(30), this, [this] {
        if (m_closeStage != CloseStage::Ready) {
            finishClose();
        }
    });
}

bool MainWindow::focusNextPrevChild(bool next) {
    return m_keys->focusNextPane(next) || QMainWindow::focusNextPrevChild(next);
}

void MainWindow::finishClose() {
    m_closeStage = CloseStage::Ready;
    close();
}

} // namespace outbox::console
