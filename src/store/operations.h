#pragma once

#include "core/result.h"
#include "core/status.h"
#include "store/eventfilter.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

#include <functional>
#include <optional>

namespace outbox::store {

class Session;

// Who acts, for outbox_audit (the database user is recorded by PostgreSQL).
struct Actor {
    QString osUser;
    QString host;
    QString application; // "outboxctl", "outbox-console"
    // os_user from $USER, else $LOGNAME, else the account the process runs
    // as (systemd units, cron and containers often set neither variable).
    static Actor fromEnvironment(const QString &application);
};

// The set of events an operator confirmed, as the preview (dry run) saw it:
// the rows matching then, up to the last one in (created_at, id) order, that
// have not changed since. A run given a seal never changes more than
// `count` rows, and none outside it; rows that match only later are left
// for the next run (BulkResult::newer). Times are PostgreSQL text, so that
// they keep their microseconds.
struct BulkSeal {
    QString at;            // the preview's moment; rows changed after it are left alone
    QString lastCreatedAt; // the key of the last row of the set
    QString lastId;
    qint64 count = 0; // the events confirmed
    bool isValid() const { return !at.isEmpty() && !lastId.isEmpty() && count > 0; }
};

enum class Action { RetryNow, Requeue, Cancel, Purge, Replay };
QString actionName(Action action); // "retry", "requeue", "cancel", "purge", "replay"
// The states an action may touch (the table at OperatorStore): the one list
// behind the guards in the SQL and what the console offers for a selection.
QList<core::Status> allowedStates(Action action);
// Whether the action makes events due for delivery (requeue, retry, replay):
// dispatchers are woken, and the console offers a rate limit.
bool wakesDispatchers(Action action);

struct BulkOptions {
    bool dryRun = false;      // count and sample, change nothing, no audit row
    int batchSize = 500;      // rows per transaction
    qint64 limit = -1;        // at most this many rows in total (-1 = all matching)
    double ratePerSecond = 0; // > 0: throttle (requeue redrive), batches of at most one
                              // second's worth; 0 = as fast as possible
    int sampleSize = 10;      // ids returned as a sample
    QString reason;           // free text for the audit row / cancel message
    // The preview the operator confirmed (BulkResult::seal of a dry run):
    // the run works through that set only. Without one, the run's own
    // snapshot at its start is the most it changes.
    std::optional<BulkSeal> seal;
    // Replay: also replay events that already have a copy (replay_of).
    // Without it the database refuses such an event.
    bool again = false;
    // Called after every batch with rows done so far (changed + skipped) and
    // the rows this run works through (matched at start, capped by limit);
    // return false to stop after the current batch.
    std::function<bool(qint64 done, qint64 total)> progress;
};

struct BulkResult {
    Action action = Action::Requeue;
    bool dryRun = false;
    qint64 matched = 0; // rows matching filter + the action's allowed states at start
    qint64 changed = 0; // rows changed (purged, requeued, new events for replay)
    // Rows matched at start (within the limit) that were left alone because
    // they were changed, deleted or locked by someone else meanwhile. Rows
    // that only started to match during the run are never touched.
    qint64 skipped = 0;
    bool cancelled = false;
    QList<QUuid> sample;  // up to sampleSize ids that match (dry run) or changed
    QList<QUuid> created; // replay: ids of the new events (up to sampleSize)
    qint64 auditId = 0;   // 0 for dry runs
    // The set this run worked through: a dry run's seal is what to confirm
    // (pass it back in BulkOptions::seal); `confirmed` is its count.
    BulkSeal seal;
    qint64 confirmed = 0;
    // Rows that match the filter now but lie outside the sealed set (they
    // started to match after the preview): left for the next run.
    qint64 newer = 0;
    // Replay: matched events that already have a copy (refused without again).
    qint64 alreadyReplayed = 0;
};

// Operator actions, carried out by the database functions outbox_op_*
// (sql/002_operator_rules.sql), which enforce the states, the sealed set and
// the audit whatever the client does. Each action only touches rows in the
// states it allows, re-checked by every batch so a row that moved meanwhile
// is skipped and counted:
//   retry:   pending                 -> pending, due now
//   requeue: dead                    -> pending, attempts 0, due now
//   cancel:  pending | dead          -> dead, last_error "cancelled by <who>"
//   purge:   delivered | dead        -> deleted (never pending/processing)
//   replay:  delivered | dead        -> a NEW pending event with replay_of
// The filter's status narrows further; a status the action does not allow
// matches nothing. Every non-dry run writes one outbox_audit row (counted
// per batch, also when nothing matched) and outbox_audit_events rows (replay:
// the original and the copy), and requeue/retry/replay send NOTIFY so
// dispatchers wake up. Cancel writes "cancelled by <db user>/<os user>@<host>:
// <reason>" into last_error; requeue keeps last_error. Uses the caller's
// connection in the caller's thread, outside a transaction (every batch
// commits); a throttled run sleeps in that thread between batches.
class OperatorStore final {
public:
    OperatorStore(Session &session, Actor actor);
    OperatorStore(QSqlDatabase db, Actor actor);
    Q_DISABLE_COPY_MOVE(OperatorStore)

    core::Result<BulkResult> run(Action action, const EventFilter &filter,
                                 const BulkOptions &options = {});

    core::Result<BulkResult> retryNow(const EventFilter &f, const BulkOptions &o = {}) {
        return run(Action::RetryNow, f, o);
    }
    core::Result<BulkResult> requeue(const EventFilter &f, const BulkOptions &o = {}) {
        return run(Action::Requeue, f, o);
    }
    core::Result<BulkResult> cancel(const EventFilter &f, const BulkOptions &o = {}) {
        return run(Action::Cancel, f, o);
    }
    core::Result<BulkResult> purge(const EventFilter &f, const BulkOptions &o = {}) {
        return run(Action::Purge, f, o);
    }
    core::Result<BulkResult> replay(const EventFilter &f, const BulkOptions &o = {}) {
        return run(Action::Replay, f, o);
    }

private:
    QSqlDatabase m_db;
    Actor m_actor;
};

} // namespace outbox::store
