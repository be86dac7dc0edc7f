#pragma once

#include "store/queries.h"

#include <QDateTime>
#include <QList>
#include <QLoggingCategory>
#include <QString>

#include <chrono>

namespace outbox::console {

Q_DECLARE_LOGGING_CATEGORY(lcConsole)

// Identifies one request to the store worker; results and failures carry it
// back. 0 is never a valid id.
using RequestId = quint64;

enum class ConnectionState {
    Disconnected, // not started, stopped, or a failure that retrying cannot fix
    Connecting,   // first attempt after start()
    Connected,
    Reconnecting, // the connection was lost (or never came up); retrying with backoff
};
QString connectionStateName(ConnectionState state); // "connected", ...

enum class RequestKind {
    Counts,
    Page,
    Detail,
    ErrorGroups,
    Privileges,
    ServerInfo,
    Bulk,
    History,
};
QString requestKindName(RequestKind kind); // "counts", "page", ...

// A page of events plus what is needed to show it: the request it answers and
// the database clock at query time, so relative times ("in 12s") are right
// even when this machine's clock is off.
struct PageResult {
    store::PageRequest request;
    store::Page page;
    QDateTime serverTime;
};

struct ErrorGroupsResult {
    store::EventFilter filter;
    store::ErrorGroupSet set;
    QDateTime serverTime;
};

struct StoreClientOptions {
    QString application = QStringLiteral("outbox-console");
    // NOTIFYs arriving within this window fold into one changed() signal.
    std::chrono::milliseconds changeDebounce{250};
    // An idle connection is probed this often, so a dead server is noticed
    // (and shown) without waiting for the next request.
    std::chrono::milliseconds healthCheckInterval{5000};
    // Reconnect backoff doubles from min to max.
    std::chrono::milliseconds reconnectMin{500};
    std::chrono::milliseconds reconnectMax{15000};
    // Used when the connection string has no connect_timeout, so that a
    // reconnect attempt against an unreachable host cannot stall the worker.
    int connectTimeoutSeconds = 5;
    // LISTEN for changes on this worker's connection (StoreClient's second,
    // aggregate worker does not: one changed() source is enough).
    bool listen = true;
    // Every session of the client (views, counts, bulk jobs) is read-only
    // in the database (--read-only), not only in the UI.
    bool readOnly = false;
};

// "in 12s", "3m ago", "now"; `now` is the server clock.
QString formatRelativeTime(const QDateTime &when, const QDateTime &now);
// Local time with milliseconds and the UTC offset, for tooltips.
QString formatAbsoluteTime(const QDateTime &when);
// "1 234 567"; with estimated = true prefixed by "~".
QString formatCount(qint64 count, bool estimated = false);
// The first line of a (possibly multi-line) error, trimmed to maxChars.
QString firstLine(const QString &text, int maxChars = 160);

} // namespace outbox::console
