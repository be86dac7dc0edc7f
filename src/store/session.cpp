#include "store/session.h"

#include "store/boundstatement.h"
#include "store/outboxstore.h"

#include <QSocketNotifier>
#include <QSqlDriver>
#include <QSqlQuery>
#include <QVariant>

namespace outbox::store {

namespace {

core::ConnInfo withDefaults(core::ConnInfo info, const Session::Options &options) {
    if (info.option(QStringLiteral("connect_timeout")).isEmpty()) {
        info.setOption(QStringLiteral("connect_timeout"),
                       QString::number(options.connectTimeoutSeconds));
    }
    const auto setUnlessGiven = [&info](const QString &key, qint64 value) {
        if (value > 0 && info.option(key).isEmpty()) {
            info.setOption(key, QString::number(value));
        }
    };
    if (options.keepalivesIdleSeconds > 0) {
        setUnlessGiven(QStringLiteral("keepalives"), 1);
        setUnlessGiven(QStringLiteral("keepalives_idle"), options.keepalivesIdleSeconds);
        setUnlessGiven(QStringLiteral("keepalives_interval"), options.keepalivesIntervalSeconds);
        setUnlessGiven(QStringLiteral("keepalives_count"), options.keepalivesCount);
    }
    setUnlessGiven(QStringLiteral("tcp_user_timeout"), options.tcpUserTimeout.count());
    if (info.option(QStringLiteral("application_name")).isEmpty() &&
        info.option(QStringLiteral("fallback_application_name")).isEmpty()) {
        info.setOption(QStringLiteral("fallback_application_name"), options.applicationName);
    }
    return info;
}

} // namespace

Session::Session(core::ConnInfo info, Options options)
    : m_info(withDefaults(std::move(info), options))
    , m_options(std::move(options)) {}

Session::~Session() {
    close();
}

core::Result<void> Session::open() {
    close();
    const QString name = uniqueConnectionName(m_options.applicationName);
    auto db = openDatabase(m_info, name);
    if (!db.ok()) {
        return db.error();
    }
    m_connectionName = name;
    m_db = db.value();
    auto applied = applySettings();
    if (!applied.ok()) {
        close();
    }
    return applied;
}

core::Result<void> Session::applySettings() {
    if (m_options.statementTimeout.count() > 0) {
        const auto set = exec(
            m_db,
            QStringLiteral("SET statement_timeout = %1").arg(m_options.statementTimeout.count()),
            {}, QStringLiteral("setting statement_timeout"));
        if (!set.ok()) {
            return set.error();
        }
    }
    if (m_options.genericPlans) {
        // OutboxStore prepares its statements once and runs them thousands
        // of times; PostgreSQL would otherwise re-plan the claim on every run
        // (a custom plan beats the generic one's LIMIT guess), which costs
        // more than executing it when few rows are due. The statements are
        // written to be safe as generic plans (see claimSql()), and the
        // planner settings keep them off plans whose cost grows with the
        // backlog when the statistics are stale (OutboxStore::sessionSettings).
        const auto set = exec(m_db, OutboxStore::sessionSettings(), {},
                              QStringLiteral("setting the planner settings of the dispatcher"));
        if (!set.ok()) {
            return set.error();
        }
    }
    return {};
}

void Session::close() {
    if (m_connectionName.isEmpty()) {
        return;
    }
    if (m_watch) {
        // Maybe from within its own signal: deleted when that has returned.
        m_watch->setEnabled(false);
        m_watch->deleteLater();
        m_watch = nullptr;
    }
    if (QSqlDriver *driver = m_db.driver()) {
        QObject::disconnect(driver, &QSqlDriver::notification, nullptr, nullptr);
    }
    m_db = QSqlDatabase(); // no handle may outlive the connection
    closeDatabase(m_connectionName);
    m_connectionName.clear();
    m_backendPid = 0;
}

bool Session::isOpen() const {
    return m_db.isOpen();
}

core::Result<void> Session::probe() const {
    if (!isOpen()) {
        return core::Error{core::ErrorKind::Unavailable,
                           QStringLiteral("the server closed the connection")};
    }
    const auto answered =
        exec(m_db, QStringLiteral("SELECT 1"), {}, QStringLiteral("checking the connection"));
    if (!answered.ok()) {
        return answered.error();
    }
    return {};
}

core::Result<void> Session::listen(std::function<void()> onNotify, std::function<void()> onLost) {
    const QString context = QStringLiteral("LISTEN ") + kNotifyChannel;
    if (!isOpen()) {
        return core::Error{core::ErrorKind::Unavailable,
                           context + QStringLiteral(": not connected")};
    }
    QSqlDriver *driver = m_db.driver();
    if (!driver->subscribeToNotification(kNotifyChannel)) {
        return toError(driver->lastError(), context);
    }
    QObject::connect(driver, &QSqlDriver::notification, driver,
                     [onNotify = std::move(onNotify)](const QString &channel) {
                         if (channel == kNotifyChannel) {
                             onNotify();
                         }
                     });
    // QPSQL watches the socket for notifications; when the server goes away
    // and libpq closes the socket, that watch warns ("QSocketNotifier:
    // Invalid socket") on every turn of the event loop until the session is
    // closed. A watch of our own on the same socket reads first or right
    // after it and, when the connection is gone, reports it at once, so the
    // session is closed (QPSQL's watch with it) before the loop turns again.
    const int socket = connectionSocket(driver);
    if (socket < 0) {
        return {};
    }
    m_watch = new QSocketNotifier(socket, QSocketNotifier::Read);
    QObject::connect(m_watch, &QSocketNotifier::activated, m_watch,
                     [this, driver, onLost = std::move(onLost)] {
                         if (!readPendingInput(driver)) {
                             m_watch->setEnabled(false);
                             if (onLost) {
                                 onLost();
                             }
                         }
                     });
    return {};
}

core::ConnInfo readOnlySession(core::ConnInfo info) {
    const QString setting = QStringLiteral("-c default_transaction_read_only=on");
    const QString existing = info.option(QStringLiteral("options")).trimmed();
    info.setOption(QStringLiteral("options"),
                   existing.isEmpty() ? setting : existing + QLatin1Char(' ') + setting);
    return info;
}

core::Result<void> createDatabaseIfMissing(Session &session, const QString &name) {
    const QString context = QStringLiteral("creating database %1").arg(name);
    auto found =
        exec(session.database(),
             QStringLiteral("SELECT 1 FROM pg_database WHERE datname = ?::text"), {name}, context);
    if (!found.ok()) {
        return found.error();
    }
    if (found->next()) {
        return {};
    }
    QString quoted = name;
    quoted.replace(QLatin1Char('"'), QLatin1String("\"\""));
    const auto created =
        exec(session.database(), QStringLiteral("CREATE DATABASE \"%1\"").arg(quoted), {}, context);
    if (!created.ok()) {
        return created.error();
    }
    return {};
}

int Session::backendPid() {
    if (m_backendPid == 0 && isOpen()) {
        auto pid = exec(m_db, QStringLiteral("SELECT pg_backend_pid()"));
        if (pid.ok() && pid->next()) {
            m_backendPid = pid->value(0).toInt();
        }
    }
    return m_backendPid;
}

} // namespace outbox::store
