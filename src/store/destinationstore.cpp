#include "store/destinationstore.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QVariant>

namespace outbox::store {

using namespace sqlvalues;

DestinationStore::DestinationStore(Session &session)
    : m_db(session.database()) {}

DestinationStore::DestinationStore(QSqlDatabase db)
    : m_db(std::move(db)) {}

core::Result<void> DestinationStore::pause(const QString &destination, const QString &reason,
                                           const Actor &actor) {
    auto paused =
        exec(m_db,
             QStringLiteral("SELECT outbox_destination_pause(?::text, ?::text, ?::text, ?::text,"
                            " ?::text)"),
             {destination, reason, nullableText(actor.osUser), nullableText(actor.host),
              nullableText(actor.application)},
             QStringLiteral("pausing destination %1").arg(destination));
    if (!paused)
        return paused.error();
    return {};
}

core::Result<bool> DestinationStore::resume(const QString &destination, const Actor &actor) {
    auto resumed = execOneRow(
        m_db,
        QStringLiteral("SELECT outbox_destination_resume(?::text, ?::text, ?::text, ?::text)"),
        {destination, nullableText(actor.osUser), nullableText(actor.host),
         nullableText(actor.application)},
        QStringLiteral("resuming destination %1").arg(destination));
    if (!resumed)
        return resumed.error();
    const bool was = resumed->value(0).toBool();
    resumed->finish();
    return was;
}

core::Result<QList<DestinationPause>> DestinationStore::pauses() {
    auto rows = exec(m_db,
                     QLatin1String("SELECT destination, reason, paused_by, ") +
                         msOf(QStringLiteral("paused_at")) +
                         QLatin1String(" FROM outbox_destination_pauses ORDER BY destination"),
                     {}, QStringLiteral("listing paused destinations"));
    return readRows(std::move(rows), [](const QSqlQuery &query) {
        return DestinationPause{query.value(0).toString(), query.value(1).toString(),
                                query.value(2).toString(), timeFrom(query.value(3))};
    });
}

core::Result<bool> DestinationStore::report(const QUuid &workerId, const QString &token,
                                            const QString &json) {
    auto reported = execOneRow(
        m_db, QStringLiteral("SELECT outbox_dispatcher_destinations(?::uuid, ?::text, ?::jsonb)"),
        {core::uuidText(workerId), token, json},
        QStringLiteral("reporting the dispatcher's destinations"));
    if (!reported)
        return reported.error();
    const bool found = reported->value(0).toBool();
    reported->finish();
    return found;
}

core::Result<QHash<QUuid, QString>> DestinationStore::reports() {
    auto rows = exec(m_db,
                     QStringLiteral("SELECT worker_id::text, destinations::text FROM"
                                    " outbox_dispatchers WHERE destinations IS NOT NULL"),
                     {}, QStringLiteral("reading the dispatchers' destinations"));
    if (!rows)
        return rows.error();
    QHash<QUuid, QString> all;
    while (rows->next())
        all.insert(QUuid::fromString(rows->value(0).toString()), rows->value(1).toString());
    rows->finish();
    return all;
}

} // namespace outbox::store
