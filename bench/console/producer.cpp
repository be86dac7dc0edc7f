#include "producer.h"

#include "store/database.h"

#include <QLoggingCategory>
#include <QTimer>

namespace outbox::consolebench {

Q_LOGGING_CATEGORY(lcProducer, "outbox.bench.console.producer")

namespace {
constexpr int kPeriodMs = 100;
}

Producer::Producer(core::ConnInfo info, int perSecond)
    : m_info(std::move(info))
    , m_perSecond(perSecond) {}

Producer::~Producer() = default;

void Producer::start() {
    m_connectionName = store::uniqueConnectionName(QStringLiteral("bench-producer"));
    if (auto db = store::openDatabase(m_info, m_connectionName); !db) {
        qCWarning(lcProducer) << "producer cannot connect:" << db.errorMessage();
        m_failures.fetch_add(1);
        return;
    }
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &Producer::produce);
    m_timer->start(kPeriodMs);
}

void Producer::stop() {
    // The timer and the connection belong to this thread: end them here.
    delete m_timer;
    m_timer = nullptr;
    if (!m_connectionName.isEmpty()) {
        store::closeDatabase(m_connectionName);
        m_connectionName.clear();
    }
}

void Producer::produce() {
    const qint64 n = std::max<qint64>(1, qint64(m_perSecond) * kPeriodMs / 1000);
    auto db = QSqlDatabase::database(m_connectionName, false);
    // One transaction per tick, one outbox_enqueue() call per event: the
    // producer pattern of ARCHITECTURE.md (the NOTIFYs fold into one).
    auto done = store::exec(
        db,
        QStringLiteral("SELECT count(*) FROM (SELECT outbox_enqueue("
                       " (ARRAY['billing','files','identity'])[1 + g % 3],"
                       " (ARRAY['invoice.paid','file.stored','user.created'])[1 + g % 3],"
                       " jsonb_build_object('batch', %1, 'n', g, 'trace', md5(%1 || '-' || g)))"
                       " FROM generate_series(1, %2) AS g) AS e")
            .arg(m_batch)
            .arg(n),
        {}, QStringLiteral("producing events"));
    ++m_batch;
    if (done) {
        m_produced.fetch_add(n);
    } else {
        m_failures.fetch_add(1);
        qCWarning(lcProducer) << done.errorMessage();
    }
}

ProducerThread::ProducerThread(core::ConnInfo info, int perSecond)
    : m_producer(new Producer(std::move(info), perSecond)) {
    m_thread.setObjectName(QStringLiteral("bench-producer"));
    m_producer->moveToThread(&m_thread);
}

ProducerThread::~ProducerThread() {
    stop();
    // The thread has finished and stop() released everything the producer
    // held in it.
    delete m_producer;
}

void ProducerThread::start() {
    if (m_running) {
        return;
    }
    m_running = true;
    m_thread.start();
    QMetaObject::invokeMethod(m_producer, &Producer::start, Qt::QueuedConnection);
}

void ProducerThread::stop() {
    if (!m_running) {
        return;
    }
    m_running = false;
    QMetaObject::invokeMethod(m_producer, &Producer::stop, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

} // namespace outbox::consolebench
