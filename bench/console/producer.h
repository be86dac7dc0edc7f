#pragma once

#include "core/conninfo.h"

#include <QObject>
#include <QThread>

#include <atomic>

class QTimer;

namespace outbox::consolebench {

// Enqueues events at a steady rate through outbox_enqueue(), like an
// application would, from its own thread and connection (never the GUI
// thread's). Its inserts are what make the console's LISTEN fire.
class Producer final : public QObject {
    Q_OBJECT

public:
    Producer(core::ConnInfo info, int perSecond);
    ~Producer() override;
    Q_DISABLE_COPY_MOVE(Producer)

    void start(); // in the producer's thread
    void stop();  // in the producer's thread
    qint64 produced() const { return m_produced.load(); }
    qint64 failures() const { return m_failures.load(); }

private:
    void produce();

    core::ConnInfo m_info;
    int m_perSecond;
    QString m_connectionName;
    QTimer *m_timer = nullptr;
    qint64 m_batch = 0;
    std::atomic<qint64> m_produced{0};
    std::atomic<qint64> m_failures{0};
};

// Owns the producer's thread; stops and joins it on destruction.
class ProducerThread final {
public:
    ProducerThread(core::ConnInfo info, int perSecond);
    ~ProducerThread();
    Q_DISABLE_COPY_MOVE(ProducerThread)

    void start();
    void stop();
    qint64 produced() const { return m_producer->produced(); }
    qint64 failures() const { return m_producer->failures(); }

private:
    QThread m_thread;
    Producer *m_producer; // lives in m_thread
    bool m_running = false;
};

} // namespace outbox::consolebench
