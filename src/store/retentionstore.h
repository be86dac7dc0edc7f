#pragma once

#include "core/duration.h"
#include "core/result.h"
#include "core/status.h"

#include <QSqlDatabase>
#include <QString>

namespace outbox::store {

class Session;

// Retention's statements: a session-level advisory lock so that of many
// dispatchers with the same setting one deletes at a time, and batched
// deletes through outbox_retention_delete() (sql/003), which audits them.
class RetentionStore final {
public:
    explicit RetentionStore(Session &session);
    Q_DISABLE_COPY_MOVE(RetentionStore)

    // pg_try_advisory_lock on the retention key: true when this session holds it.
    core::Result<bool> tryLock();
    core::Result<void> unlock();
    // Deletes at most `batch` events in `status` (Delivered or Dead) created
    // more than `olderThan` ago, oldest first; returns how many.
    core::Result<qint64> deleteBatch(core::Status status, core::Millis olderThan, int batch,
                                     const QString &host);

private:
    QSqlDatabase m_db;
};

} // namespace outbox::store
