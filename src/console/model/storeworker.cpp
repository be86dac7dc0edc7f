#include "console/model/storeworker.h"

#include "store/database.h"

#include <QSqlDriver>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QThread>
#include <QTimer>

#include <algorithm>

namespace outbox::console {

namespace {

QString seconds(std::chrono::milliseconds delay) {
    const double s = static_cast<double>(delay.count()) / 1000.0;
    return QString::number(s, 'g', 3) + QLatin1Char('s');
}

} // namespace

StoreWorker::StoreWorker(core::ConnInfo info, StoreClientOptions options)
    : m_info(std::move(info))
    , m_options(std::move(options))
    , m_backoff(m_options.reconnectMin)
    , m_reconnectTimer(new QTimer(this))
    , m_debounceTimer(new QTimer(this))
    , m_healthTimer(new QTimer(this)) {
    // A reconnect attempt against an unreachable host must not stall the
    // worker (and with it every queued request) for libpq's default of forever.
    if (m_info.option(QStringLiteral("connect_timeout")).isEmpty()) {
        m_info.setOption(QStringLiteral("connect_timeout"),
                         QString::number(m_options.connectTimeoutSeconds));
    }
    if (m_info.option(QStringLiteral("application_name")).isEmpty()) {
        m_info.setOption(QStringLiteral("application_name"), m_options.application);
    }

    m_reconnectTimer->setSingleShot(true);
    connect(m_reconnectTimer, &QTimer::timeout, this, &StoreWorker::tryConnect);

    m_debounceTimer->setSingleShot(true);
    m_debounceTimer->setInterval(m_options.changeDebounce);
    connect(m_debounceTimer, &QTimer::timeout, this, &StoreWorker::changed);

    m_healthTimer->setInterval(m_options.healthCheckInterval);
    connect(m_healthTimer, &QTimer::timeout, this, &StoreWorker::healthCheck);
}

StoreWorker::~StoreWorker() {
    closeConnection();
}

void StoreWorker::open() {
    Q_ASSERT(QThread::currentThread() == thread());
    setState(ConnectionState::Connecting,
             QStringLiteral("Connecting to %1").arg(m_info.redacted()));
    tryConnect();
}

void StoreWorker::reconnectNow() {
    Q_ASSERT(QThread::currentThread() == thread());
    m_reconnectTimer->stop();
    m_backoff = m_options.reconnectMin;
    tryConnect();
}

void StoreWorker::connectIfDown() {
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_state != ConnectionState::Connected) {
        reconnectNow();
    }
}

void StoreWorker::tryConnect() {
    closeConnection();
    // A fresh name per attempt: the previous connection may still be known to
    // Qt's registry while its socket is already gone.
    m_connectionName = store::uniqueConnectionName(QStringLiteral("console-store"));
    auto opened = store::openDatabase(m_info, m_connectionName);
    if (!opened.ok()) {
        const auto kind = opened.errorKind();
        if (kind == core::ErrorKind::Invalid || kind == core::ErrorKind::PermissionDenied) {
            // Retrying cannot fix a wrong password or a missing database.
            closeConnection();
            setState(ConnectionState::Disconnected, opened.errorMessage());
            return;
        }
        scheduleReconnect(opened.errorMessage());
        return;
    }
    m_db = opened.value();

    QSqlDriver *driver = m_db.driver();
    connect(driver, &QSqlDriver::notification, this,
            [this](const QString &name, QSqlDriver::NotificationSource, const QVariant &) {
                onNotification(name);
            });
    if (m_options.listen && !driver->subscribeToNotification(QLatin1String(kChannel))) {
        // Not fatal: the console's refresh tick still shows changes.
        qCWarning(lcConsole) << "LISTEN" << kChannel
                             << "failed; live updates fall back to the refresh tick:"
                             << driver->lastError().text();
    }

    const bool reconnected = m_everConnected;
    m_everConnected = true;
    m_backoff = m_options.reconnectMin;
    m_healthTimer->start();
    setState(ConnectionState::Connected, QStringLiteral("Connected to %1").arg(m_info.redacted()));
    if (reconnected) {
        // Anything may have happened while we were away.
        Q_EMIT changed();
    }
}

void StoreWorker::closeConnection() {
    m_healthTimer->stop();
    if (m_db.isValid()) {
        if (QSqlDriver *driver = m_db.driver()) {
            disconnect(driver, nullptr, this, nullptr);
        }
        m_db.close();
    }
    m_db = QSqlDatabase();
    if (!m_connectionName.isEmpty()) {
        store::closeDatabase(m_connectionName);
        m_connectionName.clear();
    }
}

void StoreWorker::scheduleReconnect(const QString &reason) {
    closeConnection();
    const auto delay = m_backoff;
    m_backoff = std::min(m_backoff * 2, m_options.reconnectMax);
    m_reconnectTimer->start(delay);
    setState(ConnectionState::Reconnecting,
             QStringLiteral("%1 Retrying in %2.").arg(reason, seconds(delay)));
}

void StoreWorker::connectionLost(const QString &reason) {
    qCWarning(lcConsole) << "database connection lost:" << reason;
    scheduleReconnect(reason);
}

void StoreWorker::setState(ConnectionState state, const QString &message) {
    if (state == m_state && message == m_stateMessage) {
        return;
    }
    m_state = state;
    m_stateMessage = message;
    Q_EMIT connectionStateChanged(state, message);
}

void StoreWorker::onNotification(const QString &name) {
    if (name != QLatin1String(kChannel)) {
        return;
    }
    // Leading-edge debounce: the first notification arms the timer, the rest
    // of the burst folds into the same changed().
    if (!m_debounceTimer->isActive()) {
        m_debounceTimer->start();
    }
}

bool StoreWorker::probe() {
    if (!m_db.isOpen()) {
        return false;
    }
    QSqlQuery query(m_db);
    return query.exec(QStringLiteral("SELECT 1"));
}

void StoreWorker::healthCheck() {
    if (m_state != ConnectionState::Connected) {
        return;
    }
    if (!probe()) {
        connectionLost(QStringLiteral("The database connection was lost."));
    }
}

bool StoreWorker::ensureConnected(RequestId id, RequestKind kind) {
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_state == ConnectionState::Connected) {
        return true;
    }
    const QString why =
        m_stateMessage.isEmpty() ? QStringLiteral("Not connected.") : m_stateMessage;
    Q_EMIT requestFailed(id, kind,
                         core::Error{core::ErrorKind::Unavailable,
                                     QStringLiteral("Cannot load %1: the database is not "
                                                    "connected (%2)")
                                         .arg(requestKindName(kind), why)});
    return false;
}

void StoreWorker::fail(RequestId id, RequestKind kind, const core::Error &error) {
    // Any failure may be the first sign of a dead connection; a cheap probe
    // tells a broken connection apart from a bad statement.
    if (!probe()) {
        connectionLost(QStringLiteral("The database connection was lost."));
        Q_EMIT requestFailed(id, kind,
                             core::Error{core::ErrorKind::Unavailable,
                                         QStringLiteral("Lost the database connection while "
                                                        "loading %1; reconnecting.")
                                             .arg(requestKindName(kind))});
        return;
    }
    Q_EMIT requestFailed(id, kind, error);
}

core::Result<QDateTime> StoreWorker::serverNow() {
    auto query = store::exec(m_db, QStringLiteral("SELECT clock_timestamp()"), {},
                             QStringLiteral("reading the server clock"));
    if (!query.ok()) {
        return query.error();
    }
    if (!query->next()) {
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("The server returned no time for clock_timestamp().")};
    }
    return query->value(0).toDateTime();
}

void StoreWorker::counts(RequestId id, qint64 exactDeliveredCap) {
    if (!ensureConnected(id, RequestKind::Counts)) {
        return;
    }
    store::EventQueries queries(m_db);
    auto result = queries.counts(exactDeliveredCap);
    if (!result.ok()) {
        return fail(id, RequestKind::Counts, result.error());
    }
    Q_EMIT countsReady(id, result.value());
}

void StoreWorker::page(RequestId id, const store::PageRequest &request) {
    if (!ensureConnected(id, RequestKind::Page)) {
        return;
    }
    auto now = serverNow();
    if (!now.ok()) {
        return fail(id, RequestKind::Page, now.error());
    }
    store::EventQueries queries(m_db);
    auto result = queries.page(request);
    if (!result.ok()) {
        return fail(id, RequestKind::Page, result.error());
    }
    Q_EMIT pageReady(id, PageResult{request, std::move(result).value(), now.value()});
}

void StoreWorker::detail(RequestId id, const QUuid &eventId) {
    if (!ensureConnected(id, RequestKind::Detail)) {
        return;
    }
    store::EventQueries queries(m_db);
    auto result = queries.detail(eventId);
    if (!result.ok()) {
        return fail(id, RequestKind::Detail, result.error());
    }
    if (!result->has_value()) {
        Q_EMIT requestFailed(id, RequestKind::Detail,
                             core::Error{core::ErrorKind::NotFound,
                                         QStringLiteral("Event %1 does not exist (any more); it "
                                                        "may have been purged.")
                                             .arg(eventId.toString(QUuid::WithoutBraces))});
        return;
    }
    Q_EMIT detailReady(id, result.value().value());
}

void StoreWorker::errorGroups(RequestId id, const store::EventFilter &filter, int limit) {
    if (!ensureConnected(id, RequestKind::ErrorGroups)) {
        return;
    }
    auto now = serverNow();
    if (!now.ok()) {
        return fail(id, RequestKind::ErrorGroups, now.error());
    }
    store::EventQueries queries(m_db);
    auto result = queries.errorGroups(filter, limit);
    if (!result.ok()) {
        return fail(id, RequestKind::ErrorGroups, result.error());
    }
    Q_EMIT errorGroupsReady(id, ErrorGroupsResult{filter, std::move(result).value(), now.value()});
}

void StoreWorker::privileges(RequestId id) {
    if (!ensureConnected(id, RequestKind::Privileges)) {
        return;
    }
    store::EventQueries queries(m_db);
    auto result = queries.privileges();
    if (!result.ok()) {
        return fail(id, RequestKind::Privileges, result.error());
    }
    Q_EMIT privilegesReady(id, result.value());
}

void StoreWorker::serverInfo(RequestId id) {
    if (!ensureConnected(id, RequestKind::ServerInfo)) {
        return;
    }
    store::EventQueries queries(m_db);
    auto result = queries.serverInfo();
    if (!result.ok()) {
        return fail(id, RequestKind::ServerInfo, result.error());
    }
    Q_EMIT serverInfoReady(id, result.value());
}

void StoreWorker::execute(RequestId id, const QString &sql, const QVariantList &values) {
    if (!ensureConnected(id, RequestKind::Execute)) {
        return;
    }
    auto query = store::exec(m_db, sql, values, QStringLiteral("running a statement"));
    if (!query.ok()) {
        return fail(id, RequestKind::Execute, query.error());
    }
    SqlResult result;
    result.rowsAffected = query->numRowsAffected();
    if (query->isSelect()) {
        const QSqlRecord record = query->record();
        for (int i = 0; i < record.count(); ++i) {
            result.columns.append(record.fieldName(i));
        }
        while (query->next()) {
            if (result.rows.size() >= m_options.maxSqlRows) {
                result.truncated = true;
                break;
            }
            QVariantList row;
            row.reserve(record.count());
            for (int i = 0; i < record.count(); ++i) {
                row.append(query->value(i));
            }
            result.rows.append(std::move(row));
        }
    }
    Q_EMIT executeReady(id, result);
}

} // namespace outbox::console
