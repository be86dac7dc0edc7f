#pragma once

#include "core/dispatcherconfig.h"
#include "core/duration.h"
#include "core/event.h"
#include "core/result.h"
#include "store/claimstatement.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>
#include <QUuid>

#include <memory>
#include <optional>

namespace outbox::store {

class Session;

struct EnqueueRequest {
    QString nameSpace;
    QString topic;
    QByteArray payload; // JSON text; validated by the database (jsonb)
    std::optional<QString> dedupeKey;
    std::optional<QUuid> tenantId;
    std::optional<QString> aggregateType;
    std::optional<QString> aggregateId;
    // The event's own limit of delivery attempts (1..1000); none: the
    // dispatcher's --max-attempts.
    std::optional<int> maxAttempts;
    // W3C trace context; none: the transaction's outbox.traceparent and
    // outbox.tracestate settings, if set (sql/014).
    std::optional<QString> traceparent;
    std::optional<QString> tracestate;
};

struct EnqueueResult {
    QUuid id;
    bool inserted = false; // false: an event with this dedupe key already exists
};

struct ClaimOptions {
    int batchSize = 100;
    core::Millis lease{30000};
    int maxAttempts = 10;
    QString nameSpace; // empty = every namespace
    // Aggregate: an event with an aggregate waits until every earlier event
    // of its (aggregate_type, aggregate_id) is delivered or purged.
    core::Ordering ordering = core::Ordering::None;
    // Only rows created at or after this timestamptz (text from claimFloor()),
    // so the claim does not walk the index entries of rows delivered since the
    // last vacuum; empty = no lower bound.
    QString createdFrom;
    // A routing dispatcher's routes (store/claimstatement.h): only events
    // whose first matching route may be claimed; empty = every event.
    QList<ClaimRoute> routes;
};

// A claimed row: everything the publisher needs, plus the fencing token.
struct ClaimedEvent {
    QUuid id;
    QString nameSpace;
    QString topic;
    std::optional<QUuid> tenantId;
    std::optional<QString> dedupeKey;
    std::optional<QString> aggregateType;
    std::optional<QString> aggregateId;
    QByteArray payload;
    int attempts = 0; // after the claim's increment: the fencing token
    QDateTime createdAt;
    QDateTime lockedUntil;
    // W3C trace context the producer attached, sent as the traceparent and
    // tracestate headers (or fields of a batch element).
    std::optional<QString> traceparent;
    std::optional<QString> tracestate;
};

struct Ack {
    QUuid id;
    int attempts = 0; // as seen at claim
};

struct Nack {
    QUuid id;
    int attempts = 0;       // as seen at claim
    QString error;          // stored as last_error and in outbox_attempts
    core::Millis delay{0};  // backoff chosen by the caller (RetryPolicy)
    bool permanent = false; // dead at once (e.g. HTTP 410)
    std::optional<int> httpStatus;
    core::Millis duration{0}; // how long the attempt took
};

// Unfinished work handed back on shutdown.
struct Release {
    QUuid id;
    int attempts = 0;         // as seen at claim
    bool attemptMade = false; // a request was sent: keep the attempt counted
};

struct FencedResult {
    int applied = 0;
    QList<QUuid> fencedOut; // rows no longer leased by this worker at this attempt
    QList<QUuid> madeDead;  // nack and release: applied rows that are dead now
};

// What a dead sweep looks at.
enum class SweepScope {
    // Processing rows at max attempts whose lease expired (a crash during the
    // last attempt): a look at the lease index, cheap enough to run often.
    ExpiredLeases,
    // Also pending rows at or over max attempts, which only a lower
    // max_attempts than before can leave behind: reads every pending row.
    All,
};

// The producer and dispatcher side of the outbox. Uses
// the caller's connection, in the caller's thread; statements are prepared
// once and reused. Not thread-safe: one OutboxStore per connection. A
// dispatcher's session runs it with Session::Options::genericPlans.
class OutboxStore final {
public:
    explicit OutboxStore(Session &session);
    explicit OutboxStore(QSqlDatabase db);
    ~OutboxStore();
    Q_DISABLE_COPY_MOVE(OutboxStore)

    // Runs in the caller's current transaction if one is open.
    core::Result<EnqueueResult> enqueue(const EnqueueRequest &request);

    // One statement: CTE ... ORDER BY created_at, id LIMIT n FOR UPDATE SKIP
    // LOCKED, then UPDATE ... FROM that CTE. Eligible: pending and due, or
    // processing with an expired lease; attempts < maxAttempts.
    core::Result<QList<ClaimedEvent>> claimBatch(const QUuid &workerId,
                                                 const ClaimOptions &options);

    // Batched and fenced by (locked_by = worker, attempts = claimed value).
    core::Result<FencedResult> ack(const QUuid &workerId, const QList<Ack> &acks);
    // Back to pending after `delay`, or dead when attempts reach the event's
    // own limit (else maxAttempts) or permanent, listed in
    // FencedResult::madeDead; one outbox_attempts row per applied nack, same
    // statement.
    core::Result<FencedResult> nack(const QUuid &workerId, const QList<Nack> &nacks,
                                    int maxAttempts);
    // Shutdown: leased rows back to pending, due now, lease cleared; a row whose
    // request was sent at its last attempt (attempts >= maxAttempts) becomes
    // dead instead, listed in FencedResult::madeDead.
    core::Result<FencedResult> release(const QUuid &workerId, const QList<Release> &releases,
                                       int maxAttempts);

    // Rows with attempts >= maxAttempts that are processing with an expired
    // lease (and, with SweepScope::All, pending ones) become dead. Returns how
    // many.
    core::Result<qint64> deadSweep(int maxAttempts, const QString &nameSpace = {},
                                   SweepScope scope = SweepScope::All);
    // The settings of a session that runs these statements (one SELECT of
    // set_config() calls; Session::Options::genericPlans applies it).
    static QString sessionSettings();
    // A statement as prepared ('?' placeholders in binding order), for
    // looking at its plan.
    enum class Statement { Claim, Ack, Nack, Release, Floor, NextDue };
    static QString statement(Statement which, bool byNamespace = false,
                             core::Ordering ordering = core::Ordering::None);
    // The statement deadSweep() prepares ('?' placeholders: max attempts
    // twice, then the namespace), for looking at its plan.
    static QString deadSweepStatement(bool byNamespace, SweepScope scope);

    // Holding or releasing that a pause or a resume queued and its client
    // left unfinished (sql/010, outbox_pause_continue): one step over at most
    // `batch` events of the oldest queued scope nobody is working on. Returns
    // how many events it held or released.
    core::Result<qint64> continuePauseWork(int batch = 2000);

    // Time until the earliest pending row (in `nameSpace`) that a claim in
    // `ordering` can take is due, for scheduling the next claim; nullopt when
    // there is none (paused events, and in aggregate order events blocked
    // behind a dead event, do not count).
    core::Result<std::optional<core::Millis>>
    timeUntilNextDue(const QString &nameSpace = {}, core::Ordering ordering = core::Ordering::None);
    // A lower bound for ClaimOptions::createdFrom: the oldest created_at of the
    // pending (not held) and processing rows, less `margin` (for transactions that
    // commit late with an older created_at); empty when there are none. With
    // `routes`, of the rows they may claim now, at or after `from` (a floor
    // found before with the same routes), and now less `margin` when there
    // is none: a destination's backlog behind an open circuit is then below
    // the floor, walked neither by every claim nor by every floor.
    core::Result<QString> claimFloor(const QString &nameSpace = {},
                                     core::Millis margin = core::Millis(1000),
                                     const QList<ClaimRoute> &routes = {},
                                     const QString &from = {});

private:
    QSqlDatabase m_db;
    struct Prepared;
    std::unique_ptr<Prepared> m_prepared;
};

} // namespace outbox::store
