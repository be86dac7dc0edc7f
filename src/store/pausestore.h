#pragma once

#include "core/result.h"
#include "core/status.h"
#include "store/operations.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>

#include <optional>

namespace outbox::store {

class Session;

// A pause of one namespace (topic empty) or one topic of it: dispatchers do
// not claim the matching events, which stay pending until it is resumed.
struct Pause {
    QString nameSpace;
    std::optional<QString> topic; // nullopt: the whole namespace
    QString reason;
    QString pausedBy; // the database user (session_user)
    QString osUser;
    QString host;
    QDateTime pausedAt;
};

// " AND (...)": the claim's and the due time's condition that an event of
// `table` (a table name or alias of outbox_events) is not paused. Paused
// events are held (the column `held`, sql/010) and outside the indexes the
// claim and the due time read; this catches the few a pause has not held yet.
QString notPausedCondition(const QString &table);

// Held events are pending but outside outbox_events_claim_idx; they are in
// outbox_events_held_idx, in the same (created_at, id) order. A read in
// creation order of the events of `status` (all statuses when none; pending
// when `retrying`) takes one branch per such index and merges them: these are
// the branches' conditions, each to be ANDed with the read's own, with the
// columns prefixed by `prefix` ("e.").
QStringList createdOrderBranches(std::optional<core::Status> status, bool retrying,
                                 const QString &prefix);

// Pause and resume through outbox_pause()/outbox_resume() (sql/003, sql/010),
// which check the caller's role and write the audit row; listing reads
// outbox_pauses. Pausing holds the scope's pending events and resuming
// releases them, in batches of their own transaction each
// (outbox_pause_continue), before the call returns; dispatchers finish
// what an interrupted call left (OutboxStore::continuePauseWork). Uses the
// caller's connection, in the caller's thread.
class PauseStore final {
public:
    explicit PauseStore(Session &session);
    explicit PauseStore(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(PauseStore)

    // Events held or released per transaction.
    static constexpr int kBatch = 5000;

    // Pausing what is paused already replaces its reason.
    core::Result<void> pause(const QString &nameSpace, const std::optional<QString> &topic,
                             const QString &reason, const Actor &actor);
    // With no topic: the namespace and every topic paused in it. Returns how
    // many pauses ended (0: nothing was paused there).
    core::Result<qint64> resume(const QString &nameSpace, const std::optional<QString> &topic,
                                const Actor &actor);
    // Namespace first, the namespace-wide pause before its topics.
    core::Result<QList<Pause>> list();
    // The pause that holds an event of this namespace and topic, if any (the
    // namespace-wide one first).
    core::Result<std::optional<Pause>> pauseOf(const QString &nameSpace, const QString &topic);

private:
    // Works off the queued holding or releasing of the scope.
    core::Result<void> settle(const QString &nameSpace, const std::optional<QString> &topic);

    QSqlDatabase m_db;
};

} // namespace outbox::store
