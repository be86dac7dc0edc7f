#pragma once

#include "core/result.h"
#include "store/operations.h"

#include <QDateTime>
#include <QList>
#include <QSqlDatabase>
#include <QString>

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
// `table` (a table name or alias of outbox_events) is not paused.
QString notPausedCondition(const QString &table);

// Pause and resume through outbox_pause()/outbox_resume() (sql/003), which
// check the caller's role and write the audit row; listing reads
// outbox_pauses. Uses the caller's connection, in the caller's thread.
class PauseStore final {
public:
    explicit PauseStore(Session &session);
    explicit PauseStore(QSqlDatabase db);
    Q_DISABLE_COPY_MOVE(PauseStore)

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
    QSqlDatabase m_db;
};

} // namespace outbox::store
