#include "dispatch/threadedpublisher.h"

#include <QMutexLocker>

#include <optional>

namespace outbox::dispatch {

ThreadedPublisher::ThreadedPublisher(const PublisherFactory &factory, const QString &threadName,
                                     QObject *parent)
    : Publisher(parent)
    , m_context(std::make_unique<QObject>()) {
    m_thread.setObjectName(threadName);
    m_context->moveToThread(&m_thread);
    m_thread.start();
    QMetaObject::invokeMethod(
        m_context.get(),
        [this, &factory] {
            m_inner = factory ? factory() : nullptr;
            if (m_inner) {
                connect(m_inner.get(), &Publisher::finished, m_inner.get(),
                        [this](const PublishOutcome &outcome) { collect(outcome); });
            }
        },
        Qt::BlockingQueuedConnection);
}

ThreadedPublisher::~ThreadedPublisher() {
    // The wrapped publisher (and its network objects) go in their own thread;
    // after that nothing can post an outcome to us any more.
    QMetaObject::invokeMethod(
        m_context.get(), [this] { m_inner.reset(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

PublisherFactory ThreadedPublisher::inOwnThread(PublisherFactory factory, QString threadName) {
    return [factory = std::move(factory),
            threadName = std::move(threadName)]() -> std::unique_ptr<Publisher> {
        return std::make_unique<ThreadedPublisher>(factory, threadName);
    };
}

core::Result<void> ThreadedPublisher::configure(const core::DispatcherConfig &config) {
    std::optional<core::Result<void>> result;
    QMetaObject::invokeMethod(
        m_context.get(),
        [this, &config, &result] {
            if (m_inner)
                result = m_inner->configure(config);
        },
        Qt::BlockingQueuedConnection);
    if (!result)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("no publisher could be created (internal error)")};
    return *result;
}

void ThreadedPublisher::publish(const store::ClaimedEvent &event) {
    publishBatch({event});
}

void ThreadedPublisher::publishBatch(const QList<store::ClaimedEvent> &events) {
    if (events.isEmpty())
        return;
    m_inFlight += int(events.size());
    QMetaObject::invokeMethod(
        m_context.get(),
        [this, events] {
            if (m_inner) {
                m_inner->publishBatch(events);
                return;
            }
            for (const store::ClaimedEvent &event : events)
                collect(PublishOutcome::retry(
                    event, QStringLiteral("no publisher could be created (internal error)")));
        },
        Qt::QueuedConnection);
}

void ThreadedPublisher::abortAll() {
    // Requests posted before this call reach the publisher first (calls to one
    // thread run in order), so it abandons them too.
    QMetaObject::invokeMethod(
        m_context.get(),
        [this] {
            if (m_inner)
                m_inner->abortAll();
        },
        Qt::BlockingQueuedConnection);
    {
        const QMutexLocker lock(&m_mutex);
        m_done.clear();
    }
    m_inFlight = 0;
    ++m_generation;
}

void ThreadedPublisher::collect(const PublishOutcome &outcome) {
    const QMutexLocker lock(&m_mutex);
    m_done.append(outcome);
    if (m_deliveryPosted)
        return;
    m_deliveryPosted = true;
    QMetaObject::invokeMethod(this, &ThreadedPublisher::deliver, Qt::QueuedConnection);
}

void ThreadedPublisher::deliver() {
    QList<PublishOutcome> done;
    {
        const QMutexLocker lock(&m_mutex);
        done.swap(m_done);
        m_deliveryPosted = false;
    }
    const quint64 generation = m_generation;
    for (const PublishOutcome &outcome : std::as_const(done)) {
        if (generation != m_generation)
            return; // abortAll() from a finished() handler: the rest is abandoned
        --m_inFlight;
        Q_EMIT finished(outcome);
    }
}

} // namespace outbox::dispatch
