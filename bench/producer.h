#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "store/benchqueries.h"

#include <QList>
#include <QThread>

#include <atomic>

class QTimer;

namespace outbox::bench {

// Enqueues events through outbox_enqueue() as an application would: every
// `interval` one transaction with `batch.events` events, from a thread and
// connection of its own (never the GUI thread's, never the dispatcher's).
// Its commits are what make the dispatcher's and the console's LISTEN fire.
class Producer final {
public:
    Producer(core::ConnInfo info, store::ProduceBatch batch, core::Millis interval,
             qint64 limit = -1);
    ~Producer();
    Q_DISABLE_COPY_MOVE(Producer)

    void start();
    void stop();
    qint64 produced() const { return m_produced.load(); }
    // The events committed and the first error; read after stop().
    const QList<store::ProducedEvent> &events() const { return m_events; }
    const QString &lastError() const { return m_lastError; }

private:
    void open();
    void tick();
    void close();

    core::ConnInfo m_info;
    store::ProduceBatch m_batch;
    core::Millis m_interval;
    qint64 m_limit; // events in all; -1 = until stopped
    QThread m_thread;
    QObject *m_context; // lives in m_thread
    QTimer *m_timer = nullptr;
    QString m_connectionName;
    store::BenchQueries m_sql;
    std::atomic<qint64> m_produced{0};
    QList<store::ProducedEvent> m_events;
    QString m_lastError;
};

} // namespace outbox::bench
