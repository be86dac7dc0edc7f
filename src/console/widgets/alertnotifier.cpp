#include "console/widgets/alertnotifier.h"

#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/eventview.h"

#include <QApplication>
#include <QMainWindow>
#include <QStatusBar>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QTabWidget>
#include <QToolButton>

namespace outbox::console {

AlertNotifier::AlertNotifier(QMainWindow *window, ActionController *actions, QSettings *settings)
    : QObject(window)
    , m_window(window)
    , m_settings(settings)
    , m_monitor(new AlertMonitor(this))
    , m_banner(new QToolButton) {
    m_banner->setObjectName(QStringLiteral("alertBanner"));
    m_banner->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_banner->setIcon(window->style()->standardIcon(QStyle::SP_MessageBoxWarning));
    m_banner->setAutoRaise(true);
    m_banner->setStyleSheet(QStringLiteral(
        "QToolButton#alertBanner { background: #fde8c8; color: #6b3a00; border: 1px solid "
        "#e0a050; border-radius: 3px; padding: 1px 6px; font-weight: bold; }"));
    m_banner->hide();
    window->statusBar()->addPermanentWidget(m_banner);
    connect(m_banner, &QToolButton::clicked, this, [this] {
        const QList<Alert> active = m_monitor->activeAlerts();
        if (!active.isEmpty()) {
            openView(active.constLast());
        }
    });

    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(QIcon(QStringLiteral(":/icons/outbox-console.svg")), this);
        m_tray->setToolTip(QApplication::applicationDisplayName());
        connect(m_tray, &QSystemTrayIcon::messageClicked, this, [this] {
            if (m_lastShown) {
                openView(*m_lastShown);
            }
        });
        connect(m_tray, &QSystemTrayIcon::activated, this, [this] {
            m_window->showNormal();
            m_window->raise();
            m_window->activateWindow();
        });
        m_tray->show();
    }
    connect(m_monitor, &AlertMonitor::raised, this, &AlertNotifier::onRaised);
    connect(m_monitor, &AlertMonitor::cleared, this, &AlertNotifier::updateBanner);
    connect(actions, &ActionController::clientChanged, this, &AlertNotifier::setClient);
}

void AlertNotifier::setClient(StoreClient *client) {
    if (m_client == client) {
        return;
    }
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_monitor->reset();
    updateBanner();
    if (!client) {
        return;
    }
    const DatabaseSettings database(m_settings, DatabaseSettings::keyFor(client->connInfo()));
    m_monitor->setThresholds(database.alertThresholds());
    m_monitor->setTarget(client->connInfo().dbname.isEmpty() ? client->connectionDescription()
                                                             : client->connInfo().dbname);
    connect(client, &StoreClient::countsReady, this,
            [this](RequestId, const store::StatusCounts &counts) { m_monitor->addCounts(counts); });
    connect(client, &StoreClient::connectionStateChanged, this,
            [this](ConnectionState state, const QString &message) {
                m_monitor->setConnectionState(state, message);
            });
}

void AlertNotifier::onRaised(const Alert &alert) {
    m_lastShown = alert;
    if (m_tray) {
        m_tray->showMessage(alert.title, alert.text, QSystemTrayIcon::Warning);
    }
    updateBanner();
}

void AlertNotifier::updateBanner() {
    const QList<Alert> active = m_monitor->activeAlerts();
    if (active.isEmpty()) {
        m_banner->hide();
        return;
    }
    const Alert &latest = active.constLast();
    QString text = latest.title;
    if (active.size() > 1) {
        text += tr(" (+%1 more)").arg(active.size() - 1);
    }
    m_banner->setText(text);
    QStringList all;
    for (const Alert &a : active) {
        all << a.text;
    }
    m_banner->setToolTip(all.join(QLatin1Char('\n')) + QLatin1Char('\n') +
                         tr("Click to show the events."));
    m_banner->show();
}

void AlertNotifier::openView(const Alert &alert) {
    m_window->showNormal();
    m_window->raise();
    m_window->activateWindow();
    if (!alert.view) {
        return;
    }
    if (auto *tabs = m_window->findChild<QTabWidget *>(QStringLiteral("statusTabs"))) {
        for (int i = 0; i < tabs->count(); ++i) {
            auto *page = qobject_cast<EventView *>(tabs->widget(i));
            if (page && page->status() == *alert.view) {
                tabs->setCurrentIndex(i);
                return;
            }
        }
    }
}

} // namespace outbox::console
