#include "store/retentionstore.h"

#include "store/database.h"
#include "store/session.h"

#include <QVariant>

namespace outbox::store {

namespace {

// The advisory lock's key, an arbitrary constant ("outbox" in ASCII, +1):
// the same for every dispatcher on the database.
constexpr qint64 kRetentionLockKey = 0x6f7574626f7801;

} // namespace

RetentionStore::RetentionStore(Session &session)
    : m_db(session.database()) {}

core::Result<bool> RetentionStore::tryLock() {
    auto locked = exec(m_db, QStringLiteral("SELECT pg_try_advisory_lock(?::bigint)"),
                       {kRetentionLockKey}, QStringLiteral("retention lock"));
    if (!locked)
        return locked.error();
    return locked->next() && locked->value(0).toBool();
}

core::Result<void> RetentionStore::unlock() {
    auto unlocked = exec(m_db, QStringLiteral("SELECT pg_advisory_unlock(?::bigint)"),
                         {kRetentionLockKey}, QStringLiteral("retention unlock"));
    if (!unlocked)
        return unlocked.error();
    return {};
}

core::Result<qint64> RetentionStore::deleteBatch(core::Status status, core::Millis olderThan,
                                                 int batch, const QString &host) {
    auto deleted =
        exec(m_db,
             QStringLiteral("SELECT outbox_retention_delete(?::text, ?::bigint, ?::integer,"
                            " ?::text)"),
             {core::statusName(status), qint64(olderThan.count()), batch, host},
             QStringLiteral("retention of %1 events").arg(core::statusName(status)));
    if (!deleted)
        return deleted.error();
    if (!deleted->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("retention: no result")};
    return deleted->value(0).toLongLong();
}

} // namespace outbox::store
