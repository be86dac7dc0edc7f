#pragma once

#include <QDBusConnection>
#include <QList>
#include <QObject>
#include <QPointer>

class QSystemTrayIcon;
class QWidget;

namespace outbox::console {

// Gets an alert to someone who is not looking at the window. Three ways,
// the first the desktop has: the system tray's balloon; else the
// freedesktop notification service on the session bus
// (org.freedesktop.Notifications, as notify-send uses it), which desktops
// without a tray (openbox with a notification daemon, tiling window
// managers, Wayland compositors) provide; else nothing but the window
// itself. In every case an inactive window is marked urgent (the task bar
// or the window manager flashes it: QApplication::alert).
//
// The service is asked for asynchronously (GetServerInformation, which
// also starts a service the bus activates on demand); until it answers the
// channel is None. Nothing here waits on the bus.
class DesktopNotifier final : public QObject {
    Q_OBJECT

public:
    enum class Channel { None, Tray, NotificationService };
    Q_ENUM(Channel)

    // `bus`: the session bus in the application; tests pass a private one.
    DesktopNotifier(QWidget *window, const QDBusConnection &bus, QObject *parent = nullptr);
    ~DesktopNotifier() override;
    Q_DISABLE_COPY_MOVE(DesktopNotifier)

    Channel channel() const;
    // One sentence for the settings: where notifications go, or that they
    // cannot go anywhere but the window.
    QString channelDescription() const;

    // Shows `title` and `text` through the channel (when `showMessage`) and
    // marks the window urgent when it is not the active one.
    void notify(const QString &title, const QString &text, bool showMessage);

Q_SIGNALS:
    // The user clicked the notification (or its "Show events" action).
    void clicked();
    // The channel became known (the service answered, or did not, or there
    // is no bus); once, soon after construction, without a tray.
    void channelChanged(outbox::console::DesktopNotifier::Channel channel);
    // The window was marked urgent (not the active window when notified).
    void windowMarked();

private Q_SLOTS:
    void onActionInvoked(uint id, const QString &action);

private:
    void probeService();

    QPointer<QWidget> m_window;
    QDBusConnection m_bus;
    QSystemTrayIcon *m_tray = nullptr;
    bool m_service = false;
    QList<uint> m_shown; // the service's ids of our latest notifications
};

} // namespace outbox::console
