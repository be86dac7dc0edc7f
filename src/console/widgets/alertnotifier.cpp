#include "console/widgets/alertnotifier.h"

#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/alertsettingsdialog.h"
#include "console/widgets/desktopnotifier.h"
#include "console/widgets/eventview.h"

#include <QAction>
#include <QApplication>
#include <QBoxLayout>
#include <QLabel>
#include <QMainWindow>
#include <QPushButton>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>

namespace outbox::console {

AlertNotifier::AlertNotifier(QMainWindow *window, ActionController *actions, QSettings *settings)
    : QObject(window)
    , m_window(window)
    , m_settings(settings)
    , m_monitor(new AlertMonitor(this))
    , m_desktop(new DesktopNotifier(window, QDBusConnection::sessionBus(), this))
    , m_settingsAction(new QAction(tr("Alert &thresholds…"), window))
    , m_marker(new QToolButton)
    , m_banner(new QFrame)
    , m_bannerText(new QLabel) {
    const QIcon warning = window->style()->standardIcon(QStyle::SP_MessageBoxWarning);
    m_marker->setObjectName(QStringLiteral("alertMarker"));
    m_marker->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_marker->setIcon(warning);
    m_marker->setAutoRaise(true);
    m_marker->setStyleSheet(QStringLiteral(
        "QToolButton#alertMarker { background: #fde8c8; color: #6b3a00; border: 1px solid "
        "#e0a050; border-radius: 3px; padding: 1px 6px; font-weight: bold; }"));
    m_marker->hide();
    window->statusBar()->addPermanentWidget(m_marker);
    const auto openLatest = [this] {
        const QList<Alert> active = m_monitor->activeAlerts();
        if (!active.isEmpty()) {
            openView(active.constLast());
        }
    };
    connect(m_marker, &QToolButton::clicked, this, openLatest);

    m_banner->setObjectName(QStringLiteral("alertBanner"));
    m_banner->setStyleSheet(
        QStringLiteral("#alertBanner { background: #fde8c8; border-bottom: 1px solid #e0a050; }"
                       "#alertBanner QLabel { color: #6b3a00; }"));
    m_bannerText->setObjectName(QStringLiteral("alertText"));
    m_bannerText->setWordWrap(true);
    m_bannerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *icon = new QLabel;
    icon->setPixmap(warning.pixmap(20, 20));
    auto *show = new QPushButton(tr("&Show events"));
    show->setObjectName(QStringLiteral("alertShowButton"));
    auto *dismiss = new QPushButton(tr("&Dismiss"));
    dismiss->setObjectName(QStringLiteral("alertDismissButton"));
    dismiss->setToolTip(tr("Hide this banner; the status bar keeps the alert while it holds"));
    auto *row = new QHBoxLayout(m_banner);
    row->setContentsMargins(10, 6, 10, 6);
    row->addWidget(icon);
    row->addWidget(m_bannerText, 1);
    row->addWidget(show);
    row->addWidget(dismiss);
    connect(show, &QPushButton::clicked, this, openLatest);
    connect(dismiss, &QPushButton::clicked, this, [this] {
        m_dismissed = true;
        m_banner->hide();
    });
    m_banner->hide();
    // Above the tables, when the window's centre is a box of rows.
    auto *centre = window->centralWidget()
                       ? qobject_cast<QBoxLayout *>(window->centralWidget()->layout())
                       : nullptr;
    if (centre) {
        centre->insertWidget(0, m_banner);
    }

    connect(m_desktop, &DesktopNotifier::clicked, this, [this] {
        if (m_lastShown) {
            openView(*m_lastShown);
        }
    });
    m_settingsAction->setObjectName(QStringLiteral("alertSettingsAction"));
    m_settingsAction->setToolTip(tr("When this database's alerts are raised"));
    m_settingsAction->setEnabled(false);
    connect(m_settingsAction, &QAction::triggered, this, &AlertNotifier::editThresholds);
    connect(m_monitor, &AlertMonitor::raised, this, &AlertNotifier::onRaised);
    connect(m_monitor, &AlertMonitor::cleared, this, &AlertNotifier::updateBanner);
    connect(m_monitor, &AlertMonitor::updated, this, &AlertNotifier::updateBanner);
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
    m_settingsAction->setEnabled(client != nullptr);
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
    m_dismissed = false; // a new alert shows again
    m_desktop->notify(alert.title, alert.text, m_monitor->thresholds().notify);
    updateBanner();
}

void AlertNotifier::updateBanner() {
    const QList<Alert> active = m_monitor->activeAlerts();
    if (active.isEmpty()) {
        m_marker->hide();
        m_banner->hide();
        return;
    }
    const Alert &latest = active.constLast();
    QString text = latest.title;
    if (active.size() > 1) {
        text += tr(" (+%1 more)").arg(active.size() - 1);
    }
    m_marker->setText(text);
    QStringList all;
    for (const Alert &a : active) {
        all << a.text;
    }
    m_marker->setToolTip(all.join(QLatin1Char('\n')) + QLatin1Char('\n') +
                         tr("Click to show the events."));
    m_marker->show();

    // The banner: what has a page to show (a lost connection has its own).
    QStringList lines;
    for (const Alert &a : active) {
        if (a.view) {
            lines << QStringLiteral("<b>%1.</b> %2")
                         .arg(a.title.toHtmlEscaped(), a.text.toHtmlEscaped());
        }
    }
    m_bannerText->setText(lines.join(QStringLiteral("<br>")));
    m_banner->setVisible(!lines.isEmpty() && !m_dismissed && m_banner->parentWidget() != nullptr);
}

void AlertNotifier::editThresholds() {
    if (!m_client) {
        return;
    }
    const QString key = DatabaseSettings::keyFor(m_client->connInfo());
    auto *dialog = new AlertSettingsDialog(
        m_monitor->thresholds(), m_client->connectionDescription(), m_desktop->channelDescription(),
        m_desktop->channel() != DesktopNotifier::Channel::None, m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog, key] {
        const AlertThresholds thresholds = dialog->thresholds();
        DatabaseSettings(m_settings, key).setAlertThresholds(thresholds);
        // Still the database the dialog was opened for?
        if (m_client && DatabaseSettings::keyFor(m_client->connInfo()) == key) {
            m_monitor->setThresholds(thresholds);
            updateBanner();
        }
    });
    dialog->open();
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
