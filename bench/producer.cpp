#include "bench/producer.h"

#include "store/database.h"

#include <QTimer>

namespace outbox::bench {

Producer::Producer(core::ConnInfo info, store::ProduceBatch batch, core::Millis interval,
                   qint64 limit)
    : m_info(std::move(info))
    , m_batch(std::move(batch))
    , m_interval(interval)
    , m_limit(limit)
    , m_context(new QObject) {
    m_thread.setObjectName(QStringLiteral("bench-producer"));
    m_context->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_context, &QObject::deleteLater);
}

Producer::~Producer() {
    stop();
}

void Producer::start() {
    if (m_thread.isRunning())
        return;
    m_thread.start();
    QMetaObject::invokeMethod(
        m_context, [this] { open(); }, Qt::QueuedConnection);
}

void Producer::stop() {
    if (!m_thread.isRunning())
        return;
    // The timer and the connection belong to the producer's thread: end them there.
    QMetaObject::invokeMethod(
        m_context, [this] { close(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

void Producer::open() {
    m_connectionName = store::uniqueConnectionName(QStringLiteral("bench-producer"));
    auto db = store::openDatabase(m_info, m_connectionName);
    if (!db) {
        m_lastError = db.errorMessage();
        return;
    }
    m_sql = store::BenchQueries(db.value());
    m_timer = new QTimer(m_context);
    m_timer->setTimerType(Qt::PreciseTimer);
    QObject::connect(m_timer, &QTimer::timeout, m_context, [this] { tick(); });
    m_timer->start(m_interval);
}

void Producer::tick() {
    if (m_limit >= 0 && m_produced.load() >= m_limit) {
        m_timer->stop();
        return;
    }
    auto events = m_sql.produce(m_batch);
    ++m_batch.tick;
    if (!events) {
        // The first error is the one to report; later ticks may recover.
        if (m_lastError.isEmpty())
            m_lastError = events.errorMessage();
        return;
    }
    m_events.append(events.value());
    m_produced.fetch_add(events->size());
}

void Producer::close() {
    delete m_timer;
    m_timer = nullptr;
    m_sql = store::BenchQueries();
    if (!m_connectionName.isEmpty())
        store::closeDatabase(m_connectionName);
    m_connectionName.clear();
}

} // namespace outbox::bench
