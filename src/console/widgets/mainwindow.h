#pragma once

#include "console/model/consoletypes.h"
#include "console/model/eventexplanation.h"
#include "console/widgets/democontroller.h"
#include "core/conninfo.h"
#include "core/status.h"
#include "store/eventfilter.h"
#include "store/queries.h"

#include <QDateTime>
#include <QMainWindow>
#include <QPointer>
#include <QTimer>

#include <array>
#include <memory>

class QDockWidget;
class QMenu;
class QTabWidget;
class QTreeView;

namespace outbox::console {

class ActionController;
class ConnectionBanner;
class ConsoleSettings;
class DetailPane;
class DispatcherPanel;
class DispatchersView;
class ErrorGroupsView;
class EventView;
class FilterBar;
class HistoryCharts;
class KeyboardNavigation;
class StatusIndicators;
class StatusNavModel;
class StoreClient;
class WindowLayout;

struct MainWindowOptions {
    bool readOnly = false; // --read-only
    StoreClientOptions client;
    // Demo mode in this window; empty in outbox-console, whose "Start demo"
    // runs outbox-console-demo instead.
    DemoFactory demo;
};

// Where startDemo() started the demo.
enum class DemoStart {
    InThisWindow,
    InDemoProgram, // outbox-console-demo runs it: this window is not needed
    Failed,        // the user was told why
};

// Assembles the console: the status navigator and error groups (left), the
// filter bar and one table page per status (centre), the event detail
// (right), the embedded dispatcher (bottom), the demo controls in demo mode,
// status bar pieces and the connection banner. Behaviour lives in the parts;
// this class wires them and drives the live refresh (LISTEN + a tick).
class MainWindow final : public QMainWindow {
    Q_OBJECT

public:
    MainWindow(ConsoleSettings *settings, MainWindowOptions options, QWidget *parent = nullptr);
    ~MainWindow() override;
    Q_DISABLE_COPY_MOVE(MainWindow)

    // Connects (asynchronously) to `info`; replaces any previous connection.
    void connectTo(const core::ConnInfo &info, const QString &profileName = {});
    // Starts demo mode: a private cluster, runner, producer and dispatcher.
    // In this window with MainWindowOptions::demo, else in the demo program.
    DemoStart startDemo();

protected:
    void closeEvent(QCloseEvent *event) override;
    bool focusNextPrevChild(bool next) override; // Tab: pane by pane

private:
    EventView *view(core::Status status) const;
    EventView *currentView() const;
    void showStatus(core::Status status);
    // The filter the current page shows (its status included).
    store::EventFilter currentFilter() const;
    bool isReadOnly() const;
    void setLive(bool live);
    void refreshNow();
    void buildDocks();
    void buildMenus();
    void wireClient();
    void onConnectionState(ConnectionState state, const QString &message);
    void onCounts(const store::StatusCounts &counts);
    void onPrivileges(const store::Privileges &privileges);
    void onNavigatorClicked(const QModelIndex &index);
    void onTabChanged();
    void applyFilter();
    void updateReadOnly();
    void updateTitle();
    void askPassword(const QString &message);
    void openConnectionDialog();
    // startDemo() from the window's menu or dialog: closes the window when
    // the demo program took over.
    void startDemoOrHandOver();
    void showTableMenu(const QPoint &globalPos);
    void finishClose();
    void releaseClient();
    store::EventFilter filterFor(const EventView *view) const;

    ConsoleSettings *m_settings;
    MainWindowOptions m_options;
    std::unique_ptr<StoreClient> m_client;
    core::ConnInfo m_connInfo;
    QString m_profileName;
    std::optional<store::ServerInfo> m_serverInfo;
    std::optional<store::Privileges> m_privileges;

    StatusNavModel *m_nav;
    QTreeView *m_navView;
    ErrorGroupsView *m_errors;
    FilterBar *m_filterBar;
    QTabWidget *m_tabs;
    std::array<EventView *, 4> m_views{};
    DetailPane *m_detail;
    ActionController *m_actions;
    StatusIndicators *m_indicators;
    ConnectionBanner *m_banner;
    DispatcherPanel *m_dispatcher;
    HistoryCharts *m_charts = nullptr;     // the database's last hour, any connection
    DispatchersView *m_registry = nullptr; // registry dock, navigator pause/resume
    WindowLayout *m_layout;
    KeyboardNavigation *m_keys = nullptr;
    QDockWidget *m_demoDock = nullptr;
    QMenu *m_viewMenu = nullptr;
    QMenu *m_tableMenu = nullptr;
    DemoController *m_demo = nullptr; // child; only in demo mode

    QTimer m_tick;
    bool m_live = true;
    bool m_retryingOnly = false;
    bool m_blockedOnly = false; // "Blocked (aggregate order)" chosen in the navigator
    bool m_passwordAsked = false;
    DispatchActivity m_activity;
    std::optional<store::StatusCounts> m_lastCounts;
    RequestId m_countsId = 0;
    // Closing waits for the embedded dispatcher, then for the demo's cluster.
    enum class CloseStage { Open, StoppingDispatcher, StoppingDemo, Ready };
    CloseStage m_closeStage = CloseStage::Open;
};

} // namespace outbox::console
