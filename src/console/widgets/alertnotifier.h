#pragma once

#include "console/model/alertmonitor.h"

#include <QObject>
#include <QPointer>

class QAction;
class QFrame;
class QLabel;
class QMainWindow;
class QSettings;
class QToolButton;

namespace outbox::console {

class ActionController;
class DesktopNotifier;
class StoreClient;

// Tells the operator first: feeds an AlertMonitor with the counts and the
// connection state of the window's client (with the thresholds of that
// database, DatabaseSettings) and shows each alert as a desktop
// notification where the desktop has a tray or a notification service
// (DesktopNotifier, which also marks an inactive window urgent), and always
// in the window: a banner above the tables (until dismissed) and a button in the
// status bar that stays while the condition holds. Clicking any of them
// brings the window up on the page that shows the problem. A lost
// connection has its own banner (ConnectionBanner): only the status bar and
// the tray tell it here.
//
// Its action "Alert thresholds…" (object name alertSettingsAction, a child
// of the window, listed in the File menu) edits the thresholds of the
// connected database (AlertSettingsDialog); the monitor uses them at once.
class AlertNotifier final : public QObject {
    Q_OBJECT

public:
    AlertNotifier(QMainWindow *window, ActionController *actions, QSettings *settings);
    Q_DISABLE_COPY_MOVE(AlertNotifier)

    AlertMonitor *monitor() const { return m_monitor; }
    DesktopNotifier *desktop() const { return m_desktop; }

    // Raises the window on the alert's page.
    void openView(const Alert &alert);
    // Opens the thresholds dialog for the connected database.
    void editThresholds();

private:
    void setClient(StoreClient *client);
    void onRaised(const Alert &alert);
    void updateBanner();

    QMainWindow *m_window;
    QSettings *m_settings;
    QPointer<StoreClient> m_client;
    AlertMonitor *m_monitor;
    DesktopNotifier *m_desktop;
    QAction *m_settingsAction;
    QToolButton *m_marker; // status bar
    QFrame *m_banner;      // above the tables
    QLabel *m_bannerText;
    bool m_dismissed = false;
    std::optional<Alert> m_lastShown; // what a click on the tray message opens
};

} // namespace outbox::console
