#include "devtools/inprocesspublisher.h"

#include <QMetaObject>

namespace outbox::devtools {

InProcessPublisher::InProcessPublisher(Handler handler, QObject *parent)
    : dispatch::Publisher(parent)
    , m_handler(std::move(handler)) {}

InProcessPublisher::~InProcessPublisher() = default;

core::Result<void> InProcessPublisher::configure(const core::DispatcherConfig &) {
    return {};
}

void InProcessPublisher::publish(const store::ClaimedEvent &event) {
    m_pending.insert(event.id, event);
    ++m_published;
    const quint64 generation = m_generation;
    const QUuid id = event.id;
    // Queued: finished() must never be emitted from inside publish().
    QMetaObject::invokeMethod(
        this, [this, id, generation] { complete(id, generation); }, Qt::QueuedConnection);
}

void InProcessPublisher::abortAll() {
    ++m_generation;
    m_pending.clear();
}

void InProcessPublisher::complete(const QUuid &id, quint64 generation) {
    if (generation != m_generation)
        return;
    const auto it = m_pending.constFind(id);
    if (it == m_pending.cend())
        return;
    const store::ClaimedEvent event = it.value();
    m_pending.erase(it);
    dispatch::PublishOutcome outcome =
        m_handler ? m_handler(event) : dispatch::PublishOutcome::delivered(event);
    if (outcome.id.isNull())
        outcome.id = event.id;
    if (outcome.attempts == 0)
        outcome.attempts = event.attempts;
    Q_EMIT finished(outcome);
}

} // namespace outbox::devtools
