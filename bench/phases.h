#pragma once

#include "bench/benchdatabase.h"
#include "core/conninfo.h"
#include "core/duration.h"
#include "core/result.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTimer>

namespace outbox::bench {

// The database ceiling: on one connection, claim `batchSize` rows and ack
// them in one statement, in a plain loop until the outbox is empty; no
// dispatcher, no event loop. Returns rows per second.
core::Result<double> measureDatabaseCeiling(BenchDatabase &database, int expected, int batchSize);

// Enqueues one event every `interval` with outbox_enqueue() on its own
// connection (each call its own transaction), as a service would. Lives in
// the calling thread; the timer runs in its event loop.
class Producer final {
public:
    Producer();
    ~Producer();
    Q_DISABLE_COPY_MOVE(Producer)

    core::Result<void> open(const core::ConnInfo &info);
    void start(int count, core::Millis interval, const QString &topic, int payloadBytes);
    int sent() const { return m_sent; }
    const QList<ProducedEvent> &produced() const { return m_produced; }
    QString lastError() const { return m_lastError; }

private:
    void produce();

    QString m_connectionName;
    QSqlDatabase m_db;
    std::unique_ptr<QSqlQuery> m_query;
    QTimer m_timer;
    QString m_topic;
    QByteArray m_padding;
    int m_count = 0;
    int m_sent = 0;
    QList<ProducedEvent> m_produced;
    QString m_lastError;
};

} // namespace outbox::bench
