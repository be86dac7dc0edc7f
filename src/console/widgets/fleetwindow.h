#pragma once

#include "console/model/alertmonitor.h"
#include "console/widgets/mainwindow.h"
#include "store/fleetfile.h"

#include <QMainWindow>

#include <memory>

class QLabel;
class QSettings;
class QSystemTrayIcon;
class QTabWidget;
class QTreeView;

namespace outbox::console {

class ConsoleSettings;
class FleetModel;
class FleetWatcher;

// The fleet: every outbox database an on-call engineer owns, in one window.
// The first tab lists them worst first (FleetModel over a FleetWatcher, the
// groups collapsible); Enter or a double-click opens that database's full
// console (a MainWindow, already connected) in a tab of its own, and closing
// that tab (Ctrl+W) returns to the fleet. Alerts of any database are shown
// above the list and, where the desktop has a system tray, as one desktop
// notification per condition, naming the database.
class FleetWindow final : public QMainWindow {
    Q_OBJECT

public:
    // `settings` may be null: then the window keeps settings of its own
    // (QSettings of the application).
    FleetWindow(ConsoleSettings *settings, QList<store::FleetEntry> entries,
                MainWindowOptions options, QWidget *parent = nullptr);
    ~FleetWindow() override;
    Q_DISABLE_COPY_MOVE(FleetWindow)

    // The fleet file's entries plus the saved connection profiles (group
    // "Saved profiles") whose names the file does not use.
    static QList<store::FleetEntry> withProfiles(QList<store::FleetEntry> entries,
                                                 const ConsoleSettings &settings);

    // Opens the console of the database `member` in its tab (or shows the tab).
    void openMember(int member);
    void closeCurrentTab();

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildMenus();
    void onAlert(int member, const Alert &alert);
    void updateSummary();

    std::unique_ptr<QSettings> m_ownQSettings;
    std::unique_ptr<ConsoleSettings> m_ownSettings;
    ConsoleSettings *m_settings;
    MainWindowOptions m_options;
    QByteArray m_geometry; // the console's saved geometry, kept from the tabs' consoles
    FleetWatcher *m_watcher;
    FleetModel *m_model;
    QTabWidget *m_tabs;
    QTreeView *m_view;
    QLabel *m_summary;
    QLabel *m_alerts;
    QSystemTrayIcon *m_tray = nullptr;
    bool m_closing = false;
};

// File > Open fleet…: asks for a fleet file and opens its FleetWindow (a
// window of its own, deleted when closed). A file that does not parse is
// explained in a message box.
void openFleetDialog(QWidget *parent);

} // namespace outbox::console
