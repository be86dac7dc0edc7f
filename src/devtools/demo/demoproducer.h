#pragma once

#include "core/conninfo.h"
#include "store/outboxstore.h"
#include "store/session.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QRandomGenerator>
#include <QString>
#include <QTimer>
#include <QUuid>

#include <memory>
#include <optional>

namespace outbox::console {

// Demo mode's producer: enqueues a steady, realistic mix of events (three
// namespaces, tenants, dedupe keys, the occasional duplicate) through
// store::OutboxStore::enqueue, like an application would inside its own
// transactions. One transaction per tick.
//
// Threading: create it in (or move it to) a worker thread and call every
// slot there (queued); it opens its own database session in start().
class DemoProducer final : public QObject {
    Q_OBJECT
public:
    // Share of the mix (in percent) that goes to the poison topic.
    static constexpr int PoisonPercent = 3;

    DemoProducer(core::ConnInfo connInfo, QString poisonNamespace, QString poisonTopic,
                 QObject *parent = nullptr);
    ~DemoProducer() override;
    Q_DISABLE_COPY_MOVE(DemoProducer)

    // One enqueue request of the mix; public for tests of the payloads.
    store::EnqueueRequest nextEvent();

public Q_SLOTS:
    void start(double eventsPerSecond, bool paused);
    void stop();
    void setRate(double eventsPerSecond); // clamped 0..1000
    void setPaused(bool paused);

Q_SIGNALS:
    void produced(qint64 total); // after each tick that inserted rows
    // A failed tick (connection lost, ...); repeated messages are not re-sent.
    void error(const QString &message);

private:
    void tick();
    bool ensureConnection();
    void dropConnection();
    void reportError(const QString &message);

    QString m_poisonNamespace;
    QString m_poisonTopic;
    store::Session m_session;
    std::unique_ptr<store::OutboxStore> m_store; // on m_session while it is open
    QTimer m_timer;
    QElapsedTimer m_clock;
    QRandomGenerator m_rng;
    QList<QUuid> m_tenants;
    QString m_lastError;
    double m_rate = 20.0;
    double m_carry = 0.0; // fractional events owed from previous ticks
    bool m_paused = false;
    qint64 m_total = 0;
    qint64 m_sequence = 0;
    // The latest event with a dedupe key, re-sent now and then the way a
    // retrying producer would (the database answers "already enqueued").
    std::optional<store::EnqueueRequest> m_lastDeduped;
};

} // namespace outbox::console
