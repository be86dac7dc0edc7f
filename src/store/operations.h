#pragma once

#include "core/result.h"
#include "core/status.h"
#include "store/eventfilter.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QUuid>

#include <functional>

namespace outbox::store {

class Session;

// Who acts, for outbox_audit (the database user is recorded by PostgreSQL).
struct Actor {
    QString osUser;
    QString host;
    QString application; // "outboxctl", "outbox-console"
    static Actor fromEnvironment(const QString &application);
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
};

// Operator actions. Each action only touches rows in the
// states it allows, re-checked in the WHERE clause of every batch so a row
// that moved meanwhile is skipped and counted:
//   retry:   pending                 -> pending, due now
//   requeue: dead                    -> pending, attempts 0, due now
//   cancel:  pending | dead          -> dead, last_error "cancelled by <who>"
//   purge:   delivered | dead        -> deleted (never pending/processing)
//   replay:  delivered | dead        -> a NEW pending event with replay_of
// The filter's status narrows further; a status the action does not allow
// matches nothing. Every non-dry run writes one outbox_audit row (updated
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
