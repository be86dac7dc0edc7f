#pragma once

#include "core/duration.h"
#include "core/event.h"
#include "core/result.h"
#include "store/aggregateorder.h"
#include "store/eventfilter.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::store {

class Session;

struct TopicCount {
    QString nameSpace;
    QString topic;
    qint64 pending = 0;
    qint64 processing = 0;
    qint64 dead = 0;
};

struct StatusCounts {
    qint64 pending = 0;  // due or waiting, attempts = 0
    qint64 retrying = 0; // pending with attempts > 0 (not included in pending)
    qint64 processing = 0;
    qint64 expiredLeases = 0; // processing rows whose lease has run out
    qint64 delivered = 0;
    bool deliveredEstimated = false; // true when delivered is a planner estimate
    qint64 dead = 0;
    bool deadEstimated = false; // true when dead is from an older count (see LiveCounts)
    QDateTime oldestPendingAt;  // created_at of the oldest pending row (lag)
    // next_attempt_at of the oldest due event: pending, next_attempt_at <=
    // now, not paused; invalid when none is due.
    QDateTime oldestDueAt;
    // Pending events held back by an earlier unfinished event of their
    // aggregate (aggregate ordering, see AggregateBlocker); 0 while aggregate
    // order is off. Counted with `topics`, so in LiveCounts estimated when
    // topicsEstimated is.
    qint64 blocked = 0;
    QDateTime serverTime;
    QList<TopicCount> topics; // live sets per namespace/topic
    // True when `topics` were counted at topicsAt and the table has changed
    // since (LiveCounts reruns that aggregate only now and then).
    bool topicsEstimated = false;
    QDateTime topicsAt;
};

enum class SortOrder { OldestFirst, NewestFirst };

// Keyset position: the (created_at, id) of the last row of the previous page.
struct PageCursor {
    QDateTime createdAt;
    QUuid id;
    friend bool operator==(const PageCursor &, const PageCursor &) = default;
};

struct PageRequest {
    EventFilter filter;
    SortOrder order = SortOrder::NewestFirst;
    int limit = 200;
    std::optional<PageCursor> after;
    // Bounds a search the indexes cannot answer (EventFilter::needsScan()):
    // the statement stops after this long and the page says so.
    std::optional<core::Millis> timeout;
};

struct Page {
    QList<core::OutboxEvent> rows;
    std::optional<PageCursor> next; // set when more rows may follow
    // Set (to the request's timeout) when the statement ran out of time: no
    // rows, and the filter should be narrowed.
    std::optional<core::Millis> stoppedAfter;
};

struct ErrorGroup {
    QString signature; // normalised (see errorSignature)
    QString example;   // one full last_error of the group
    qint64 count = 0;
    QDateTime latest; // most recent updated_at in the group
};

// How many of the newest matching events error grouping reads at most: the
// normalising regular expressions cost about as much per row as the rest of
// the statement, so a grouping of a large dead set is bounded by this.
constexpr int kErrorGroupSample = 10000;
// How many of the newest events of the status a grouping under a search the
// indexes cannot answer (EventFilter::needsScan()) reads at most: the
// planner would otherwise read every event of the status that might match
// and sort them (3.0 s at 1,000,000 dead, on every new search).
constexpr int kErrorGroupSearchScan = 50000;

// One grouping of errors: the largest groups and what they were counted from.
struct ErrorGroupSet {
    QList<ErrorGroup> groups; // largest first, at most the request's limit
    qint64 kinds = 0;         // distinct signatures among the grouped events
    qint64 grouped = 0;       // events grouped (those with an error)
    // True when more events match than were grouped: the groups are those of
    // the newest `grouped` events only.
    bool sampled = false;
    // Under a search: how many of the newest events of the status were read
    // for it, when that stopped at kErrorGroupSearchScan (0: all were).
    qint64 searchedNewest = 0;
    QDateTime groupedAt; // database clock when the grouping ran
    // True when the table has changed since groupedAt (see ErrorGroupWatch).
    bool stale = false;
};

struct EventDetail {
    core::OutboxEvent event;
    QList<core::AttemptRecord> attempts; // oldest first
    QList<core::AuditRecord> audit;      // oldest first
    QList<QUuid> replays;                // events replayed from this one
    QDateTime serverTime;                // to explain "due in 12 s" correctly
    // What holds it back under --ordering aggregate; nullopt = nothing.
    std::optional<AggregateBlocker> blockedBy;
};

struct Privileges {
    bool canRead = false;
    bool canOperate = false;  // may run the outbox_op_* functions
    bool canDispatch = false; // update events + insert attempts
    bool canEnqueue = false;
};

struct ServerInfo {
    QString version; // server_version
    QString database;
    QString user; // current_user
    QString host; // inet_server_addr or socket
    int schemaVersion = 0;
};

// Read side for the console and outboxctl: counts, keyset pages, detail.
// Uses the caller's connection in the caller's thread.
class EventQueries final {
public:
    explicit EventQueries(Session &session);
    explicit EventQueries(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(EventQueries)

    // The database clock (clock_timestamp()), to show times relative to it.
    core::Result<QDateTime> serverNow();

    // Exact counts for the live sets (partial indexes); delivered is exact
    // up to `exactDeliveredCap` rows and estimated beyond.
    core::Result<StatusCounts> counts(qint64 exactDeliveredCap = 100000);
    core::Result<Page> page(const PageRequest &request);
    // The plan PostgreSQL chooses for page(request) (EXPLAIN, no costs): for
    // diagnostics and for the tests that pin the use of the partial indexes.
    core::Result<QString> explainPage(const PageRequest &request);
    core::Result<std::optional<EventDetail>> detail(const QUuid &id);
    // Groups by errorSignature(last_error), largest first; rows without an
    // error are left out. Without a status (or retrying) in the filter, only
    // dead rows are grouped. Reads the newest `sample` matching events at
    // most (see groupErrors in errorgroups.h).
    core::Result<ErrorGroupSet> errorGroups(const EventFilter &filter, int limit = 50,
                                            int sample = kErrorGroupSample);
    core::Result<Privileges> privileges();
    core::Result<ServerInfo> serverInfo();

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store
