#include "store/registrystore.h"

#include "core/uuidtext.h"
#include "store/boundstatement.h"
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
    // The token is a secret: bound, never part of the statement's text (see
    // execBound()), here and in heartbeat() and unregister().
    auto registered =
        execBound(m_db,
                  QStringLiteral("SELECT outbox_dispatcher_register($1::uuid, $2::text, $3::text,"
                                 " $4::bigint, $5::text, $6::text, $7::text, $8::text, $9::integer,"
                                 " $10::bigint, to_timestamp($11::bigint / 1000.0))"),
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
    auto beaten =
        execBound(m_db,
                  QStringLiteral("SELECT outbox_dispatcher_heartbeat($1::uuid, $2::text,"
                                 " $3::text, $4::integer, $5::float8, $6::float8, $7::bigint)"),
                  {core::uuidText(workerId), token, beat.state, beat.inFlight,
                   beat.deliveredPerSecond, beat.failedPerSecond, beat.deliveredTotal},
                  QStringLiteral("dispatcher heartbeat"));
    if (!beaten)
        return beaten.error();
    return beaten->isTrue(0, 0);
}

core::Result<bool> RegistryStore::unregister(const QUuid &workerId, const QString &token) {
    auto removed = execBound(
        m_db, QStringLiteral("SELECT outbox_dispatcher_unregister($1::uuid, $2::text)"),
        {core::uuidText(workerId), token}, QStringLiteral("unregistering the dispatcher"));
    if (!removed)
        return removed.error();
    return removed->isTrue(0, 0);
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
    DispatcherList list;
    // Every row carries the server's clock; read it from the last one.
    auto entries = readRows(std::move(rows), [&list](const QSqlQuery &row) {
        const auto at = [&row](int column) { return row.value(column); };
        list.serverTime = timeFrom(at(18));
        return DispatcherEntry{.workerId = QUuid::fromString(at(0).toString()),
                               .host = at(1).toString(),
                               .pid = at(2).toLongLong(),
                               .version = at(3).toString(),
                               .application = at(4).toString(),
                               .dbUser = at(5).toString(),
                               .nameSpace = at(6).toString(),
                               .runnerUrl = at(7).toString(),
                               .concurrency = at(8).toInt(),
                               .heartbeatInterval = core::Millis(at(9).toLongLong()),
                               .startedAt = timeFrom(at(10)),
                               .heartbeatAt = timeFrom(at(11)),
                               .state = at(12).toString(),
                               .inFlight = at(13).toInt(),
                               .deliveredPerSecond = at(14).toDouble(),
                               .failedPerSecond = at(15).toDouble(),
                               .deliveredTotal = at(16).toLongLong(),
                               .alive = at(17).toBool()};
    });
    if (!entries)
        return entries.error();
    list.entries = std::move(entries).value();
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
