#include "console/model/storeworker.h"

#include "core/uuidtext.h"

#include <QThread>

namespace outbox::console {

namespace {

QString seconds(std::chrono::milliseconds delay) {
    const double s = static_cast<double>(delay.count()) / 1000.0;
    return QString::number(s, 'g', 3) + QLatin1Char('s');
}

store::SessionKeeper::Options keeperOptions(const StoreClientOptions &options) {
    store::SessionKeeper::Options keeper;
    keeper.session.applicationName = options.application;
    // A reconnect attempt against an unreachable host must not stall the
    // worker (and with it every queued request) for libpq's default of forever.
    keeper.session.connectTimeoutSeconds = options.connectTimeoutSeconds;
    // Not fatal: the console's refresh tick still shows changes.
    keeper.listen = options.listen ? store::SessionKeeper::Listen::IfPossible
                                   : store::SessionKeeper::Listen::Off;
    keeper.debounce = options.changeDebounce;
    keeper.healthCheckInterval = options.healthCheckInterval;
    keeper.reconnectMin = options.reconnectMin;
    keeper.reconnectMax = options.reconnectMax;
    keeper.jitter = false;
    // Retrying cannot fix a wrong password or a missing database.
    keeper.giveUpOnInvalid = true;
    return keeper;
}

} // namespace

StoreWorker::StoreWorker(core::ConnInfo info, StoreClientOptions options)
    : m_info(info)
    , m_logConnection(options.listen)
    , m_keeper(std::move(info), keeperOptions(options), this) {
    connect(&m_keeper, &store::SessionKeeper::connected, this, [this](bool reconnected) {
        if (reconnected && m_logConnection) {
            qCInfo(lcConsole).noquote() << "database connection restored";
        }
        setState(ConnectionState::Connected,
                 QStringLiteral("Connected to %1").arg(m_info.redacted()));
    });
    connect(&m_keeper, &store::SessionKeeper::retrying, this, &StoreWorker::onRetrying);
    connect(&m_keeper, &store::SessionKeeper::gaveUp, this,
            [this](const QString &reason, core::ErrorKind kind) {
                Q_EMIT gaveUp(kind);
                setState(ConnectionState::Disconnected, reason);
            });
    // Debounced notifications, and once after every reconnect: anything may
    // have happened while we were away.
    connect(&m_keeper, &store::SessionKeeper::notified, this, &StoreWorker::changed);
}

StoreWorker::~StoreWorker() = default;

void StoreWorker::open() {
    Q_ASSERT(QThread::currentThread() == thread());
    setState(ConnectionState::Connecting,
             QStringLiteral("Connecting to %1").arg(m_info.redacted()));
    m_keeper.start();
}

void StoreWorker::reconnectNow() {
    Q_ASSERT(QThread::currentThread() == thread());
    m_keeper.reconnectNow();
}

void StoreWorker::connectIfDown() {
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_keeper.isConnected()) {
        m_keeper.reconnectNow();
    }
}

void StoreWorker::onRetrying(const QString &reason, core::Millis delay) {
    QString why = reason;
    if (m_state == ConnectionState::Connected) {
        // One line per change of state (not per attempt), and from one of
        // the console's connections only.
        if (m_logConnection) {
            qCWarning(lcConsole).noquote() << "database connection lost:" << reason;
        }
        why = QStringLiteral("The database connection was lost.");
    }
    setState(ConnectionState::Reconnecting,
             QStringLiteral("%1 Retrying in %2.").arg(why, seconds(delay)));
}

void StoreWorker::setState(ConnectionState state, const QString &message) {
    if (state == m_state && message == m_stateMessage) {
        return;
    }
    m_state = state;
    m_stateMessage = message;
    Q_EMIT connectionStateChanged(state, message);
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
    if (!m_keeper.check()) {
        Q_EMIT requestFailed(id, kind,
                             core::Error{core::ErrorKind::Unavailable,
                                         QStringLiteral("Lost the database connection while "
                                                        "loading %1; reconnecting.")
                                             .arg(requestKindName(kind))});
        return;
    }
    Q_EMIT requestFailed(id, kind, error);
}

template <typename T, typename Ask>
void StoreWorker::answer(RequestId id, RequestKind kind, Ask &&ask,
                         void (StoreWorker::*ready)(RequestId, const T &)) {
    if (!ensureConnected(id, kind)) {
        return;
    }
    const auto run = [&] {
        store::EventQueries queries(m_keeper.session());
        return ask(queries);
    };
    core::Result<T> result = run();
    // The queries are gone by now: check() and fail() may close the session.
    // Every request here only reads: one that met a connection the server
    // closed (a restart while this worker was idle) runs once more on a new
    // one, so the first request after a restart does not fail.
    if (!result.ok() && m_keeper.isConnected() && !m_keeper.check()) {
        m_keeper.reconnectNow();
        if (m_keeper.isConnected())
            result = run();
    }
    if (!result.ok()) {
        return fail(id, kind, result.error());
    }
    Q_EMIT(this->*ready)(id, result.value());
}

void StoreWorker::counts(RequestId id, qint64 exactCap) {
    answer(
        id, RequestKind::Counts,
        [&](store::EventQueries &) {
            if (!m_liveCounts || m_liveCounts->options().exactCap != exactCap) {
                m_liveCounts.emplace(store::LiveCounts::Options{exactCap});
            }
            return m_liveCounts->refresh(m_keeper.session().database());
        },
        &StoreWorker::countsReady);
}

void StoreWorker::page(RequestId id, const store::PageRequest &request) {
    answer(
        id, RequestKind::Page,
        [&](store::EventQueries &queries) -> core::Result<PageResult> {
            auto now = queries.serverNow();
            if (!now.ok()) {
                return now.error();
            }
            auto page = queries.page(request);
            if (!page.ok()) {
                return page.error();
            }
            return PageResult{request, std::move(page).value(), now.value()};
        },
        &StoreWorker::pageReady);
}

void StoreWorker::detail(RequestId id, const QUuid &eventId) {
    answer(
        id, RequestKind::Detail,
        [&](store::EventQueries &queries) -> core::Result<store::EventDetail> {
            auto detail = queries.detail(eventId);
            if (!detail.ok()) {
                return detail.error();
            }
            if (!detail->has_value()) {
                return core::Error{core::ErrorKind::NotFound,
                                   QStringLiteral("Event %1 does not exist (any more); it may "
                                                  "have been purged.")
                                       .arg(core::uuidText(eventId))};
            }
            return std::move(detail.value()).value();
        },
        &StoreWorker::detailReady);
}

void StoreWorker::errorGroups(RequestId id, const store::EventFilter &filter, int limit) {
    answer(
        id, RequestKind::ErrorGroups,
        [&](store::EventQueries &) -> core::Result<ErrorGroupsResult> {
            if (!m_errorGroups) {
                m_errorGroups.emplace();
            }
            ErrorGroupsResult result{filter, {}, {}};
            auto set = m_errorGroups->refresh(m_keeper.session().database(), filter, limit,
                                              result.serverTime);
            if (!set.ok()) {
                return set.error();
            }
            result.set = std::move(set).value();
            return result;
        },
        &StoreWorker::errorGroupsReady);
}

void StoreWorker::privileges(RequestId id) {
    answer(
        id, RequestKind::Privileges,
        [](store::EventQueries &queries) { return queries.privileges(); },
        &StoreWorker::privilegesReady);
}

void StoreWorker::serverInfo(RequestId id) {
    answer(
        id, RequestKind::ServerInfo,
        [](store::EventQueries &queries) { return queries.serverInfo(); },
        &StoreWorker::serverInfoReady);
}

void StoreWorker::history(RequestId id, int minutes) {
    answer(
        id, RequestKind::History,
        [&](store::EventQueries &) {
            return store::HistoryStore(m_keeper.session()).read(minutes);
        },
        &StoreWorker::historyReady);
}

} // namespace outbox::console
