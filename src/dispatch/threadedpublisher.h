#pragma once

#include "dispatch/publisher.h"

#include <QList>
#include <QMutex>
#include <QThread>

#include <memory>

namespace outbox::dispatch {

// Runs another publisher in a thread of its own, so that the dispatcher's
// database round trips (claims, acks) never hold up sending requests and
// handling replies, and the other way round. The rows of a claim cross to the
// publisher's thread together; outcomes cross back in batches (everything
// that finished while the previous batch was on its way). Seen from the
// caller's thread it keeps the Publisher contract: finished() is emitted
// there, once per publish(), never after abortAll() for what was in flight.
class ThreadedPublisher final : public Publisher {
    Q_OBJECT
public:
    // `factory` runs in the new thread; `threadName` names it in top and ps.
    ThreadedPublisher(const PublisherFactory &factory, const QString &threadName,
                      QObject *parent = nullptr);
    ~ThreadedPublisher() override;
    Q_DISABLE_COPY_MOVE(ThreadedPublisher)

    // Wraps a factory so that each publisher it makes runs in its own thread.
    static PublisherFactory inOwnThread(PublisherFactory factory, QString threadName);

    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void publishBatch(const QList<store::ClaimedEvent> &events) override;
    void abortAll() override;
    int inFlight() const override { return m_inFlight; }

    // The thread the wrapped publisher lives in (tests check it is not ours).
    QThread *publisherThread() { return &m_thread; }

private:
    void collect(const PublishOutcome &outcome); // in the publisher's thread
    void deliver();                              // in the caller's thread

    QThread m_thread;
    std::unique_ptr<QObject> m_context; // lives in m_thread; runs the calls there
    std::unique_ptr<Publisher> m_inner; // created, used and destroyed in m_thread
    int m_inFlight = 0;
    quint64 m_generation = 0; // bumped by abortAll(): stops a delivery loop under way

    QMutex m_mutex;
    QList<PublishOutcome> m_done;  // finished, not yet delivered (guarded)
    bool m_deliveryPosted = false; // a deliver() call is queued (guarded)
};

} // namespace outbox::dispatch
