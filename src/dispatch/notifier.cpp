#include "dispatch/notifier.h"

#include "core/retrypolicy.h"
#include "dispatch/logging.h"
#include "store/database.h"

#include <QSqlDriver>
#include <QSqlQuery>

namespace outbox::dispatch {

Notifier::Notifier(core::ConnInfo connInfo, QObject *parent)
    : Notifier(std::move(connInfo), Options{}, parent) {}

Notifier::Notifier(core::ConnInfo connInfo, Options options, QObject *parent)
    : QObject(parent)
    , m_connInfo(std::move(connInfo))
    , m_options(std::move(options))
    , m_rng(QRandomGenerator::securelySeeded())
    // Parented so that moveToThread() takes the timers along.
    , m_debounce(this)
    , m_health(this)
    , m_reconnect(this) {
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(m_options.debounce);
    connect(&m_debounce, &QTimer::timeout, this, &Notifier::notified);
    m_health.setInterval(m_options.healthCheckInterval);
    connect(&m_health, &QTimer::timeout, this, &Notifier::checkHealth);
    m_reconnect.setSingleShot(true);
    connect(&m_reconnect, &QTimer::timeout, this, &Notifier::connectNow);
    if (m_connInfo.option(QStringLiteral("application_name")).isEmpty())
        m_connInfo.setOption(QStringLiteral("application_name"), m_options.applicationName);
    // libpq waits forever by default; a listener that hangs in connect
    // would block its whole thread.
    if (m_connInfo.option(QStringLiteral("connect_timeout")).isEmpty())
        m_connInfo.setOption(QStringLiteral("connect_timeout"), QStringLiteral("5"));
}

Notifier::~Notifier() {
    stop();
}

void Notifier::start() {
    if (m_running)
        return;
    m_running = true;
    m_failures = 0;
    m_hadConnection = false;
    connectNow();
}

void Notifier::stop() {
    m_running = false;
    m_reconnect.stop();
    m_health.stop();
    m_debounce.stop();
    closeConnection();
    if (m_listening) {
        m_listening = false;
        Q_EMIT listeningChanged(false, QStringLiteral("stopped"));
    }
}

void Notifier::connectNow() {
    if (!m_running)
        return;
    closeConnection();
    m_connectionName = store::uniqueConnectionName(QStringLiteral("outbox-listen"));
    auto db = store::openDatabase(m_connInfo, m_connectionName);
    if (!db) {
        connectionLost(db.errorMessage());
        return;
    }
    QSqlQuery pid(db.value());
    if (pid.exec(QStringLiteral("SELECT pg_backend_pid()")) && pid.next())
        m_backendPid = pid.value(0).toInt();
    pid.finish();

    QSqlDriver *driver = db->driver();
    if (!driver->subscribeToNotification(m_options.channel)) {
        connectionLost(QStringLiteral("LISTEN ") % m_options.channel % QStringLiteral(" failed: ") %
                       driver->lastError().text());
        return;
    }
    connect(driver, &QSqlDriver::notification, this, &Notifier::onNotification);

    if (m_hadConnection)
        ++m_reconnects;
    m_hadConnection = true;
    m_failures = 0;
    m_listening = true;
    m_health.start();
    qCInfo(lcDispatch).noquote() << QLatin1String("event=listen channel=") % m_options.channel %
                                        QLatin1String(" backend_pid=") %
                                        QString::number(m_backendPid);
    Q_EMIT listeningChanged(true, QStringLiteral("listening on ") % m_options.channel);
    // Hints sent while nobody listened are gone: let the owner look once.
    Q_EMIT notified();
}

void Notifier::onNotification(const QString &name) {
    if (name != m_options.channel)
        return;
    if (!m_debounce.isActive())
        m_debounce.start();
}

void Notifier::checkHealth() {
    if (!m_listening)
        return;
    QString problem;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (!db.isOpen()) {
            // QPSQL closes the connection itself when reading a notification
            // finds the server gone.
            problem = QStringLiteral("the server closed the LISTEN connection");
        } else {
            QSqlQuery query(db);
            if (!query.exec(QStringLiteral("SELECT 1")))
                problem = store::toError(query.lastError(), QStringLiteral("listener health check"))
                              .message;
        }
    }
    // Outside the scope above: no handle may outlive the connection.
    if (!problem.isEmpty())
        connectionLost(problem);
}

void Notifier::connectionLost(const QString &reason) {
    closeConnection();
    if (m_listening) {
        m_listening = false;
        qCWarning(lcDispatch).noquote()
            << QLatin1String("event=listen_lost reason=\"") % reason % u'"';
        Q_EMIT listeningChanged(false, reason);
    }
    m_health.stop();
    if (!m_running)
        return;
    const core::RetryPolicy backoff{m_options.reconnectBaseDelay, m_options.reconnectMaxDelay};
    const core::Millis delay = backoff.nextDelay(++m_failures, m_rng);
    qCDebug(lcDispatch).noquote() << QLatin1String("event=listen_retry in_ms=") %
                                         QString::number(delay.count()) %
                                         QLatin1String(" reason=\"") % reason % u'"';
    m_reconnect.start(delay);
}

void Notifier::closeConnection() {
    if (m_connectionName.isEmpty())
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
        if (db.isValid() && db.driver())
            disconnect(db.driver(), nullptr, this, nullptr);
    }
    store::closeDatabase(m_connectionName);
    m_connectionName.clear();
    m_backendPid = 0;
}

} // namespace outbox::dispatch
