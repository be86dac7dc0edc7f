#pragma once

#include "console/model/consoletypes.h"
#include "store/queries.h"

#include <QDateTime>
#include <QFrame>
#include <QObject>

#include <chrono>

class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QStatusBar;
class QToolButton;

namespace outbox::console {

// The status bar pieces: server, database, user, connection state, the
// live indicator (a toggle plus the refresh tick) and the last refresh time.
class StatusIndicators final : public QObject {
    Q_OBJECT

public:
    explicit StatusIndicators(QStatusBar *bar);
    Q_DISABLE_COPY_MOVE(StatusIndicators)

    void setServerInfo(const store::ServerInfo &info);
    void setTarget(const QString &description); // before the server answers
    void setConnectionState(ConnectionState state, const QString &message);
    void setLive(bool live);
    bool isLive() const;
    void setInterval(std::chrono::milliseconds interval);
    std::chrono::milliseconds interval() const;
    void setLastRefresh(const QDateTime &when);
    void setReadOnly(bool readOnly, const QString &reason);

Q_SIGNALS:
    void liveToggled(bool live);
    void intervalChanged(std::chrono::milliseconds interval);

private:
    void updateAge();

    QLabel *m_server;
    QLabel *m_database;
    QLabel *m_user;
    QLabel *m_readOnly;
    QLabel *m_state;
    QToolButton *m_live;
    QDoubleSpinBox *m_interval;
    QLabel *m_lastRefresh;
    QDateTime m_lastRefreshAt;
};

// A band across the top of the window while the connection is down: what
// happened, that the console keeps retrying, and a "Retry now" button.
class ConnectionBanner final : public QFrame {
    Q_OBJECT

public:
    explicit ConnectionBanner(QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(ConnectionBanner)

    void setConnectionState(ConnectionState state, const QString &message);
    // A problem the connection itself cannot fix (e.g. no outbox schema in
    // this database); stays until the next connection.
    void setProblem(const QString &message);
    QString text() const;

Q_SIGNALS:
    void retryRequested();
    void reconnectRequested(); // "Connect…": choose another database

private:
    QLabel *m_text;
    QPushButton *m_retry;
    QPushButton *m_connect;
};

} // namespace outbox::console
