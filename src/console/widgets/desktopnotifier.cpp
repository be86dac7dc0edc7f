#include "console/widgets/desktopnotifier.h"

#include <QApplication>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QIcon>
#include <QSystemTrayIcon>
#include <QVariantMap>
#include <QWidget>

namespace outbox::console {

namespace {

const QString kService = QStringLiteral("org.freedesktop.Notifications");
const QString kPath = QStringLiteral("/org/freedesktop/Notifications");
const QString kInterface = QStringLiteral("org.freedesktop.Notifications");
const QString kDefaultAction = QStringLiteral("default");

} // namespace

DesktopNotifier::DesktopNotifier(QWidget *window, const QDBusConnection &bus, QObject *parent)
    : QObject(parent)
    , m_window(window)
    , m_bus(bus) {
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(QIcon(QStringLiteral(":/icons/outbox-console.svg")), this);
        m_tray->setToolTip(QApplication::applicationDisplayName());
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, &DesktopNotifier::clicked);
        connect(m_tray, &QSystemTrayIcon::activated, this, &DesktopNotifier::clicked);
        m_tray->show();
        return;
    }
    probeService();
}

DesktopNotifier::~DesktopNotifier() = default;

void DesktopNotifier::probeService() {
    if (!m_bus.isConnected()) {
        QMetaObject::invokeMethod(
            this, [this] { Q_EMIT channelChanged(channel()); }, Qt::QueuedConnection);
        return;
    }
    m_bus.connect(kService, kPath, kInterface, QStringLiteral("ActionInvoked"), this,
                  SLOT(onActionInvoked(uint, QString)));
    const QDBusMessage ask = QDBusMessage::createMethodCall(kService, kPath, kInterface,
                                                            QStringLiteral("GetServerInformation"));
    auto *watcher = new QDBusPendingCallWatcher(m_bus.asyncCall(ask, 5000), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this,
            [this](QDBusPendingCallWatcher *call) {
                call->deleteLater();
                m_service = !call->isError();
                Q_EMIT channelChanged(channel());
            });
}

DesktopNotifier::Channel DesktopNotifier::channel() const {
    if (m_tray)
        return Channel::Tray;
    return m_service ? Channel::NotificationService : Channel::None;
}

QString DesktopNotifier::channelDescription() const {
    switch (channel()) {
    case Channel::Tray:
        return tr("Notifications appear at the system tray.");
    case Channel::NotificationService:
        return tr("Notifications go to the desktop's notification service.");
    case Channel::None:
        break;
    }
    return tr("This desktop has no system tray and no notification service: alerts show in "
              "the window only, and mark it as urgent in the task bar.");
}

void DesktopNotifier::notify(const QString &title, const QString &text, bool showMessage) {
    if (m_window && !m_window->isActiveWindow()) {
        QApplication::alert(m_window);
        Q_EMIT windowMarked();
    }
    if (!showMessage)
        return;
    if (m_tray) {
        m_tray->showMessage(title, text, QSystemTrayIcon::Warning);
        return;
    }
    if (!m_service)
        return;
    QDBusMessage call =
        QDBusMessage::createMethodCall(kService, kPath, kInterface, QStringLiteral("Notify"));
    // Urgency 1 (normal): the server shows it like other applications' and
    // may keep it in its history. Each alert is a notification of its own.
    QVariantMap hints;
    hints.insert(QStringLiteral("urgency"), QVariant::fromValue(uchar(1)));
    hints.insert(QStringLiteral("desktop-entry"), QStringLiteral("outbox-console"));
    call << QApplication::applicationDisplayName() << uint(0) << QStringLiteral("dialog-warning")
         << title << text.toHtmlEscaped() << QStringList{kDefaultAction, tr("Show events")} << hints
         << qint32(-1);
    auto *watcher = new QDBusPendingCallWatcher(m_bus.asyncCall(call, 5000), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this,
            [this](QDBusPendingCallWatcher *pending) {
                pending->deleteLater();
                const QDBusPendingReply<uint> reply = *pending;
                if (!reply.isValid())
                    return;
                m_shown.append(reply.value());
                if (m_shown.size() > 32)
                    m_shown.removeFirst();
            });
}

void DesktopNotifier::onActionInvoked(uint id, const QString &action) {
    if (action == kDefaultAction && m_shown.contains(id))
        Q_EMIT clicked();
}

} // namespace outbox::console
