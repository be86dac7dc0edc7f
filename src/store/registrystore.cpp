#include "store/registrystore.h"

#include "core/uuidtext.h"
#include "store/database.h"
#include "store/session.h"
#include "store/sqlvalues.h"

#include <QRandomGenerator>
#include <QVariant>

#include <algorithm>

namespace outbox::store {

using namespace sqlvalues;

int DispatcherList::aliveCount() const {
    return int(std::count_if(entries.cbegin(), entries.cend(),
                             [](const DispatcherEntry &entry) { return entry.alive; }));
}

RegistryStore::RegistryStore(Session &session)
    : m_db(session.database()) {}

RegistryStore::RegistryStore(QSqlDatabase db)
    : m_db(std::move(db)) {}

QString RegistryStore::newToken() {
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()),
                                          bytes.size() / int(sizeof(quint32)));
    return QString::fromLatin1(bytes.toHex());
}

core::Result<void> RegistryStore::registerDispatcher(const DispatcherRegistration &r) {
    auto registered =
        exec(m_db,
             QStringLiteral("SELECT outbox_dispatcher_register(?::uuid, ?::text, ?::text,"
                            " ?::bigint, ?::text, ?::text, ?::text, ?::text, ?::integer,"
                            " ?::bigint, to_timestamp(?::bigint / 1000.0))"),
             {core::uuidText(r.workerId), r.token, r.host, r.pid, r.version, r.application,
              nullableText(r.nameSpace), r.runnerUrl, r.concurrency,
              qint64(r.heartbeatInterval.count()), r.startedAt.toMSecsSinceEpoch()},
             QStringLiteral("registering the dispatcher"));
    if (!registered)
        return registered.error();
    return {};
}

core::Result<bool> RegistryStore::heartbeat(const QUuid &workerId, const QString &token,
                                            const DispatcherHeartbeat &beat) {
    auto beaten = exec(m_db,
                       QStringLiteral("SELECT outbox_dispatcher_heartbeat(?::uuid, ?::text,"
                                      " ?::text, ?::integer, ?::float8, ?::float8, ?::bigint)"),
                       {core::uuidText(workerId), token, beat.state, beat.inFlight,
                        beat.deliveredPerSecond, beat.failedPerSecond, beat.deliveredTotal},
                       QStringLiteral("dispatcher heartbeat"));
    if (!beaten)
        return beaten.error();
    return beaten->next() && beaten->value(0).toBool();
}

core::Result<bool> RegistryStore::unregister(const QUuid &workerId, const QString &token) {
    auto removed =
        exec(m_db, QStringLiteral("SELECT outbox_dispatcher_unregister(?::uuid, ?::text)"),
             {core::uuidText(workerId), token}, QStringLiteral("unregistering the dispatcher"));
    if (!removed)
        return removed.error();
    return removed->next() && removed->value(0).toBool();
}

core::Result<DispatcherList> RegistryStore::list() {
    auto rows = exec(
        m_db,
        QLatin1String("SELECT worker_id::text, host, pid, version, application, db_user,"
                      " coalesce(namespace, ''), runner_url, concurrency,"
                      " (extract(epoch FROM heartbeat_interval) * 1000)::bigint, ") +
            msOf(QStringLiteral("started_at")) + QLatin1String(", ") +
            msOf(QStringLiteral("heartbeat_at")) +
            QLatin1String(", state, in_flight, delivered_per_s, failed_per_s, delivered_total,"
                          " outbox_dispatcher_alive(heartbeat_at, heartbeat_interval) AS alive, ") +
            msOf(QStringLiteral("now()")) +
            QLatin1String(" FROM outbox_dispatchers ORDER BY alive DESC, heartbeat_at DESC"),
        {}, QStringLiteral("listing dispatchers"));
    if (!rows)
        return rows.error();
    DispatcherList list;
    while (rows->next()) {
        DispatcherEntry e;
        e.workerId = QUuid::fromString(rows->value(0).toString());
        e.host = rows->value(1).toString();
        e.pid = rows->value(2).toLongLong();
        e.version = rows->value(3).toString();
        e.application = rows->value(4).toString();
        e.dbUser = rows->value(5).toString();
        e.nameSpace = rows->value(6).toString();
        e.runnerUrl = rows->value(7).toString();
        e.concurrency = rows->value(8).toInt();
        e.heartbeatInterval = core::Millis(rows->value(9).toLongLong());
        e.startedAt = timeFrom(rows->value(10));
        e.heartbeatAt = timeFrom(rows->value(11));
        e.state = rows->value(12).toString();
        e.inFlight = rows->value(13).toInt();
        e.deliveredPerSecond = rows->value(14).toDouble();
        e.failedPerSecond = rows->value(15).toDouble();
        e.deliveredTotal = rows->value(16).toLongLong();
        e.alive = rows->value(17).toBool();
        list.serverTime = timeFrom(rows->value(18));
        list.entries.append(e);
    }
    if (!list.serverTime.isValid()) {
        auto now = exec(m_db, QLatin1String("SELECT ") + msOf(QStringLiteral("now()")), {},
                        QStringLiteral("reading the server time"));
        if (!now)
            return now.error();
        if (now->next())
            list.serverTime = timeFrom(now->value(0));
    }
    return list;
}

} // namespace outbox::store
