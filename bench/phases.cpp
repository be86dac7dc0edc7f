#include "bench/phases.h"

#include "core/uuidv7.h"
#include "store/database.h"
#include "store/outboxstore.h"

#include <QElapsedTimer>
#include <QSqlError>
#include <QVariant>

namespace outbox::bench {

core::Result<double> measureDatabaseCeiling(BenchDatabase &database, int expected, int batchSize) {
    // The same session setting as the dispatcher's connection (StoreConnection).
    if (auto set =
            store::exec(database.db(), QStringLiteral("SET plan_cache_mode = force_generic_plan"),
                        {}, QStringLiteral("database ceiling"));
        !set)
        return set.error();
    struct Reset {
        QSqlDatabase db;
        ~Reset() {
            static_cast<void>(store::exec(db, QStringLiteral("RESET plan_cache_mode"), {},
                                          QStringLiteral("database ceiling")));
        }
    } reset{database.db()};
    store::OutboxStore store(database.db());
    const QUuid worker = core::createUuidV7();
    store::ClaimOptions options;
    options.batchSize = batchSize;
    options.lease = core::Millis(30000);
    options.maxAttempts = 10;
    qint64 acknowledged = 0;
    QList<store::Ack> acks;
    acks.reserve(batchSize);
    QElapsedTimer clock;
    clock.start();
    for (;;) {
        auto claimed = store.claimBatch(worker, options);
        if (!claimed)
            return claimed.error();
        if (claimed->isEmpty())
            break;
        acks.clear();
        for (const store::ClaimedEvent &event : claimed.value())
            acks.append(store::Ack{event.id, event.attempts});
        auto acked = store.ack(worker, acks);
        if (!acked)
            return acked.error();
        acknowledged += acked->applied;
    }
    const qint64 elapsed = clock.nsecsElapsed();
    if (acknowledged != expected)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("database ceiling: acknowledged %1 of %2 events")
                               .arg(acknowledged)
                               .arg(expected)};
    return double(acknowledged) * 1e9 / double(elapsed);
}

Producer::Producer() {
    m_timer.setTimerType(Qt::PreciseTimer);
    QObject::connect(&m_timer, &QTimer::timeout, [this] { produce(); });
}

Producer::~Producer() {
    m_timer.stop();
    m_query.reset();
    m_db = QSqlDatabase();
    if (!m_connectionName.isEmpty())
        store::closeDatabase(m_connectionName);
}

core::Result<void> Producer::open(const core::ConnInfo &info) {
    m_connectionName = store::uniqueConnectionName(QStringLiteral("bench-producer"));
    auto db = store::openDatabase(info, m_connectionName);
    if (!db)
        return core::Result<void>(db.error());
    m_db = db.value();
    m_query = std::make_unique<QSqlQuery>(m_db);
    // One statement, so one transaction: the xid is the one that commits.
    if (!m_query->prepare(QStringLiteral("SELECT e.id::text, pg_current_xact_id()::text"
                                         "  FROM outbox_enqueue(?, ?, ?::jsonb) AS e")))
        return core::Result<void>(store::toError(m_query->lastError(), QStringLiteral("producer")));
    return {};
}

void Producer::start(int count, core::Millis interval, const QString &topic, int payloadBytes) {
    m_count = count;
    m_sent = 0;
    m_produced.clear();
    m_produced.reserve(count);
    m_topic = topic;
    m_padding = QByteArray(std::max(payloadBytes - 40, 0), 'x');
    m_timer.start(interval);
}

void Producer::produce() {
    if (m_sent >= m_count) {
        m_timer.stop();
        return;
    }
    m_query->bindValue(0, QStringLiteral("bench"));
    m_query->bindValue(1, m_topic);
    m_query->bindValue(2, QString::fromLatin1("{\"n\": " + QByteArray::number(m_sent) +
                                              ", \"pad\": \"" + m_padding + "\"}"));
    if (!m_query->exec()) {
        m_lastError = m_query->lastError().text();
        m_timer.stop();
        return;
    }
    if (m_query->next())
        m_produced.append(
            ProducedEvent{m_query->value(0).toString(), m_query->value(1).toString()});
    m_query->finish();
    ++m_sent;
}

} // namespace outbox::bench
