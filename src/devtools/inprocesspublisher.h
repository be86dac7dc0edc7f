#pragma once

#include "dispatch/publisher.h"

#include <QHash>
#include <QUuid>

namespace outbox::devtools {

// Completes every publish() in-process on the next event-loop pass (a queued
// call), with the outcome chosen by a handler (default: delivered). For tests
// that script failures and for the database-only benchmark ceiling. The
// handler runs in the publisher's thread.
class InProcessPublisher final : public dispatch::Publisher {
    Q_OBJECT
public:
    using Handler = std::function<dispatch::PublishOutcome(const store::ClaimedEvent &event)>;

    explicit InProcessPublisher(Handler handler = {}, QObject *parent = nullptr);
    ~InProcessPublisher() override;
    Q_DISABLE_COPY_MOVE(InProcessPublisher)

    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void abortAll() override;
    int inFlight() const override { return int(m_pending.size()); }

    qint64 publishedCount() const { return m_published; }

private:
    void complete(const QUuid &id, quint64 generation);

    Handler m_handler;
    QHash<QUuid, store::ClaimedEvent> m_pending;
    quint64 m_generation = 0; // bumped by abortAll() so queued completions are dropped
    qint64 m_published = 0;
};

} // namespace outbox::devtools
