#include "dispatch/queuegaugereader.h"

#include "core/logline.h"
#include "dispatch/logging.h"
#include "store/session.h"

#include <QTimer>

namespace outbox::dispatch {

class QueueGaugeWorker final : public QObject {
    Q_OBJECT
public:
    QueueGaugeWorker(core::ConnInfo connInfo, core::Millis interval)
        : m_session(std::move(connInfo), options())
        , m_interval(interval)
        , m_timer(this) {
        connect(&m_timer, &QTimer::timeout, this, &QueueGaugeWorker::read);
    }
    ~QueueGaugeWorker() override { m_session.close(); }
    Q_DISABLE_COPY_MOVE(QueueGaugeWorker)

    void start() {
        read();
        m_timer.start(m_interval);
    }

Q_SIGNALS:
    void gaugesRead(const outbox::store::QueueGauges &gauges);

private:
    static store::Session::Options options() {
        store::Session::Options options;
        options.applicationName = QStringLiteral("outbox-metrics");
        return options;
    }

    void read() {
        if (!m_session.isOpen()) {
            if (auto opened = m_session.open(); !opened) {
                qCWarning(lcDispatch)
                    << core::LogLine("queue_gauges_failed").add("error", opened.errorMessage());
                return;
            }
        }
        auto gauges = store::readQueueGauges(m_session);
        if (!gauges) {
            qCWarning(lcDispatch)
                << core::LogLine("queue_gauges_failed").add("error", gauges.errorMessage());
            m_session.close();
            return;
        }
        Q_EMIT gaugesRead(gauges.value());
    }

    store::Session m_session;
    core::Millis m_interval;
    QTimer m_timer;
};

QueueGaugeReader::QueueGaugeReader(core::ConnInfo connInfo, core::Millis interval, QObject *parent)
    : QObject(parent)
    , m_worker(new QueueGaugeWorker(std::move(connInfo), interval)) {
    qRegisterMetaType<outbox::store::QueueGauges>();
    m_thread.setObjectName(QStringLiteral("outbox-metrics"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &QueueGaugeWorker::gaugesRead, this, &QueueGaugeReader::gaugesRead);
    m_thread.start();
    QMetaObject::invokeMethod(m_worker, &QueueGaugeWorker::start, Qt::QueuedConnection);
}

QueueGaugeReader::~QueueGaugeReader() {
    m_thread.quit();
    m_thread.wait();
}

} // namespace outbox::dispatch

#include "queuegaugereader.moc"
