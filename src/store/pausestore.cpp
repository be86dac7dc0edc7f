#include "store/pausestore.h"

#include "store/database.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QVariant>

namespace outbox::store {

using namespace sqlvalues;

namespace {

const QString kPauseColumns =
    QLatin1String("namespace, topic, reason, paused_by, os_user, host, ") +
    msOf(QStringLiteral("paused_at"));

// The columns of kPauseColumns are Pause's members, in order.
Pause pauseFrom(const QSqlQuery &query) {
    return {query.value(0).toString(), optionalText(query.value(1)), query.value(2).toString(),
            query.value(3).toString(), query.value(4).toString(),    query.value(5).toString(),
            timeFrom(query.value(6))};
}

} // namespace

// The first test runs once per statement (an InitPlan reading one page of an
// empty index); only while something is paused does each candidate row probe
// outbox_pauses. Without it the claim probed the pause index for every row it
// picked, 0.06 ms a claim of 100 (docs/PERFORMANCE.md, "The unordered claim
// before and after the claim-path change").
QString notPausedCondition(const QString &table) {
    return QLatin1String(" AND (NOT EXISTS (SELECT FROM outbox_pauses)"
                         " OR NOT EXISTS (SELECT 1 FROM outbox_pauses p WHERE p.namespace = ") +
           table + QLatin1String(".namespace AND (p.topic IS NULL OR p.topic = ") + table +
           QLatin1String(".topic)))");
}

QStringList createdOrderBranches(std::optional<core::Status> status, bool retrying,
                                 const QString &prefix) {
    // A held event that died keeps its flag (sql/010): the held branch is of
    // pending ones, those that died come with the dead.
    const QString column = prefix + QLatin1String("status");
    const QString notHeld = QLatin1String("NOT ") + prefix + QLatin1String("held");
    const QString held =
        prefix + QLatin1String("held AND ") + column + QLatin1String(" = 'pending'");
    if (retrying || status == core::Status::Pending)
        return {notHeld, held};
    if (status == core::Status::Processing)
        return {notHeld};
    if (status)
        return {QStringLiteral("TRUE")};
    return {column + QLatin1String(" IN ('pending', 'processing') AND ") + notHeld, held,
            column + QLatin1String(" = 'delivered'"), column + QLatin1String(" = 'dead'")};
}

PauseStore::PauseStore(Session &session)
    : m_db(session.database()) {}

PauseStore::PauseStore(QSqlDatabase db)
    : m_db(std::move(db)) {}

core::Result<void> PauseStore::pause(const QString &nameSpace, const std::optional<QString> &topic,
                                     const QString &reason, const Actor &actor) {
    auto paused = exec(m_db,
                       QStringLiteral("SELECT outbox_pause(?::text, ?::text, ?::text, ?::text,"
                                      " ?::text, ?::text)"),
                       {nameSpace, nullableText(topic), reason, nullableText(actor.osUser),
                        nullableText(actor.host), nullableText(actor.application)},
                       QStringLiteral("pausing %1").arg(nameSpace));
    if (!paused)
        return paused.error();
    return settle(nameSpace, topic);
}

core::Result<qint64> PauseStore::resume(const QString &nameSpace,
                                        const std::optional<QString> &topic, const Actor &actor) {
    auto resumed = exec(
        m_db, QStringLiteral("SELECT outbox_resume(?::text, ?::text, ?::text, ?::text, ?::text)"),
        {nameSpace, nullableText(topic), nullableText(actor.osUser), nullableText(actor.host),
         nullableText(actor.application)},
        QStringLiteral("resuming %1").arg(nameSpace));
    if (!resumed)
        return resumed.error();
    if (!resumed->next())
        return core::Error{core::ErrorKind::Failed, QStringLiteral("resume: no result")};
    const qint64 ended = resumed->value(0).toLongLong();
    resumed->finish();
    if (auto settled = settle(nameSpace, topic); !settled)
        return settled.error();
    return ended;
}

core::Result<void> PauseStore::settle(const QString &nameSpace,
                                      const std::optional<QString> &topic) {
    // One batch per statement, each committed on its own: released events
    // are delivered while the rest is still being released.
    for (;;) {
        auto step =
            execOneRow(m_db,
                       QStringLiteral("SELECT more FROM outbox_pause_continue(?::text,"
                                      " ?::text, ?::integer)"),
                       {nameSpace, nullableText(topic), kBatch},
                       QStringLiteral("holding or releasing the events of %1").arg(nameSpace));
        if (!step)
            return step.error();
        if (!step->value(0).toBool())
            return {};
    }
}

core::Result<QList<Pause>> PauseStore::list() {
    auto rows = exec(m_db,
                     QLatin1String("SELECT ") + kPauseColumns +
                         QLatin1String(" FROM outbox_pauses ORDER BY namespace, topic NULLS FIRST"),
                     {}, QStringLiteral("listing pauses"));
    return readRows(std::move(rows), pauseFrom);
}

core::Result<std::optional<Pause>> PauseStore::pauseOf(const QString &nameSpace,
                                                       const QString &topic) {
    auto rows = exec(m_db,
                     QLatin1String("SELECT ") + kPauseColumns +
                         QLatin1String(" FROM outbox_pauses WHERE namespace = ?::text"
                                       " AND (topic IS NULL OR topic = ?::text)"
                                       " ORDER BY topic NULLS FIRST LIMIT 1"),
                     {nameSpace, topic}, QStringLiteral("reading the pause of %1").arg(nameSpace));
    if (!rows)
        return rows.error();
    if (!rows->next())
        return std::optional<Pause>();
    return std::optional<Pause>(pauseFrom(rows.value()));
}

} // namespace outbox::store
