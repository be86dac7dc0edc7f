#include "console/widgets/statusindicators.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QToolButton>

namespace outbox::console {

namespace {

QLabel *addLabel(QStatusBar *bar, const QString &name, const QString &tip) {
    auto *label = new QLabel(bar);
    label->setObjectName(name);
    label->setToolTip(tip);
    label->setContentsMargins(4, 0, 4, 0);
    bar->addPermanentWidget(label);
    return label;
}

QString dot(const char *color) {
    return QStringLiteral("<span style=\"color:%1\">&#9679;</span> ").arg(QLatin1String(color));
}

} // namespace

StatusIndicators::StatusIndicators(QStatusBar *bar)
    : QObject(bar) {
    m_server = addLabel(bar, QStringLiteral("serverLabel"), tr("Server and PostgreSQL version"));
    m_database = addLabel(bar, QStringLiteral("databaseLabel"), tr("Database"));
    m_user = addLabel(bar, QStringLiteral("userLabel"), tr("Database user (current_user)"));
    m_readOnly = addLabel(bar, QStringLiteral("readOnlyLabel"), QString());
    m_readOnly->setText(QStringLiteral("<b>%1</b>").arg(tr("read-only")));
    m_readOnly->hide();
    m_state = addLabel(bar, QStringLiteral("connectionStateLabel"), QString());
    m_state->setTextFormat(Qt::RichText);

    m_live = new QToolButton(bar);
    m_live->setObjectName(QStringLiteral("liveButton"));
    m_live->setCheckable(true);
    m_live->setAutoRaise(true);
    m_live->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addPermanentWidget(m_live);
    m_interval = new QDoubleSpinBox(bar);
    m_interval->setObjectName(QStringLiteral("intervalSpin"));
    m_interval->setRange(0.5, 600);
    m_interval->setDecimals(1);
    m_interval->setSingleStep(0.5);
    m_interval->setPrefix(tr("every "));
    m_interval->setSuffix(tr(" s"));
    m_interval->setToolTip(tr("Refresh tick; changes are also picked up at once through "
                              "LISTEN/NOTIFY"));
    m_interval->setKeyboardTracking(false);
    bar->addPermanentWidget(m_interval);
    m_lastRefresh = addLabel(bar, QStringLiteral("lastRefreshLabel"), tr("Last refresh"));

    connect(m_live, &QToolButton::toggled, this, [this](bool live) {
        setLive(live);
        Q_EMIT liveToggled(live);
    });
    connect(m_interval, &QDoubleSpinBox::valueChanged, this, [this](double seconds) {
        Q_EMIT intervalChanged(std::chrono::milliseconds(qint64(seconds * 1000)));
    });
    auto *ageTimer = new QTimer(this);
    ageTimer->start(1000);
    connect(ageTimer, &QTimer::timeout, this, &StatusIndicators::updateAge);
    setLive(true);
    setConnectionState(ConnectionState::Disconnected, QString());
}

void StatusIndicators::setServerInfo(const store::ServerInfo &info) {
    m_server->setText(
        tr("%1 · PostgreSQL %2").arg(info.host, info.version.section(QLatin1Char(' '), 0, 0)));
    m_database->setText(tr("db %1").arg(info.database));
    m_user->setText(tr("user %1").arg(info.user));
    m_database->setToolTip(
        tr("Database %1, outbox schema version %2").arg(info.database).arg(info.schemaVersion));
}

void StatusIndicators::setTarget(const QString &description) {
    m_server->setText(description);
    m_database->clear();
    m_user->clear();
}

void StatusIndicators::setConnectionState(ConnectionState state, const QString &message) {
    switch (state) {
    case ConnectionState::Connected:
        m_state->setText(dot("#2e9d2e") + tr("connected"));
        break;
    case ConnectionState::Connecting:
        m_state->setText(dot("#d6a019") + tr("connecting…"));
        break;
    case ConnectionState::Reconnecting:
        m_state->setText(dot("#d03030") + QStringLiteral("<b>%1</b>")
                                              .arg(tr("connection lost, "
                                                      "reconnecting…")));
        break;
    case ConnectionState::Disconnected:
        m_state->setText(dot("#808080") + tr("disconnected"));
        break;
    }
    m_state->setToolTip(message);
}

void StatusIndicators::setLive(bool live) {
    const QSignalBlocker block(m_live);
    m_live->setChecked(live);
    m_live->setText(live ? tr("Live") : tr("Paused"));
    m_live->setIcon(
        QIcon(live ? QStringLiteral(":/icons/live.svg") : QStringLiteral(":/icons/pause.svg")));
    m_live->setToolTip(live ? tr("Live: refreshing on every change and tick. Click to pause.")
                            : tr("Paused: nothing refreshes until you resume or press F5. "
                                 "Click to go live."));
    m_interval->setEnabled(live);
    updateAge();
}

bool StatusIndicators::isLive() const {
    return m_live->isChecked();
}

void StatusIndicators::setInterval(std::chrono::milliseconds interval) {
    const QSignalBlocker block(m_interval);
    m_interval->setValue(double(interval.count()) / 1000.0);
}

std::chrono::milliseconds StatusIndicators::interval() const {
    return std::chrono::milliseconds(qint64(m_interval->value() * 1000));
}

void StatusIndicators::setLastRefresh(const QDateTime &when) {
    m_lastRefreshAt = when;
    updateAge();
}

void StatusIndicators::setReadOnly(bool readOnly, const QString &reason) {
    m_readOnly->setVisible(readOnly);
    m_readOnly->setToolTip(reason);
}

void StatusIndicators::updateAge() {
    if (!m_lastRefreshAt.isValid()) {
        m_lastRefresh->setText(tr("not refreshed yet"));
        return;
    }
    const qint64 ageMs = m_lastRefreshAt.msecsTo(QDateTime::currentDateTime());
    QString text = tr("updated %1").arg(m_lastRefreshAt.toString(QStringLiteral("HH:mm:ss")));
    // Stale while live: more than three ticks (and 10 s) without a refresh.
    const bool stale = isLive() && ageMs > std::max<qint64>(10000, 3 * interval().count());
    m_lastRefresh->setStyleSheet(stale ? QStringLiteral("color:#b05a00; font-weight:bold;")
                                       : QString());
    if (stale) {
        text += tr(" (stale)");
    }
    m_lastRefresh->setText(text);
}

ConnectionBanner::ConnectionBanner(QWidget *parent)
    : QFrame(parent)
    , m_text(new QLabel(this))
    , m_retry(new QPushButton(tr("Retry now"), this))
    , m_connect(new QPushButton(tr("Connect…"), this)) {
    setObjectName(QStringLiteral("connectionBanner"));
    setStyleSheet(QStringLiteral("#connectionBanner { background:#c62828; }"
                                 "#connectionBanner QLabel { color:white; font-weight:bold; }"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_retry);
    layout->addWidget(m_connect);
    connect(m_retry, &QPushButton::clicked, this, &ConnectionBanner::retryRequested);
    connect(m_connect, &QPushButton::clicked, this, &ConnectionBanner::reconnectRequested);
    hide();
}

void ConnectionBanner::setConnectionState(ConnectionState state, const QString &message) {
    switch (state) {
    case ConnectionState::Connected:
    case ConnectionState::Connecting:
        hide();
        return;
    case ConnectionState::Reconnecting: {
        // The reason is a sentence of its own ("... Retrying in 1s.").
        QString why = message.trimmed();
        while (why.endsWith(QLatin1Char('.'))) {
            why.chop(1);
        }
        m_text->setText(tr("Connection to the database lost: %1. Reconnecting automatically; "
                           "what you see may be out of date.")
                            .arg(why.isEmpty() ? tr("no answer") : why));
        m_retry->show();
        break;
    }
    case ConnectionState::Disconnected:
        m_text->setText(tr("Not connected: %1").arg(message.isEmpty() ? tr("stopped") : message));
        m_retry->show();
        break;
    }
    show();
}

void ConnectionBanner::setProblem(const QString &message) {
    m_text->setText(tr("This database cannot be used: %1").arg(message));
    m_retry->hide();
    show();
}

QString ConnectionBanner::text() const {
    return m_text->text();
}

} // namespace outbox::console
