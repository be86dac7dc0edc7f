#pragma once

#include "dispatch/dispatcher.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace outbox::dispatch {

class Housekeeping;

// Owns a worker QThread and a Dispatcher living in it; the console's
// dispatcher panel and `outboxctl dispatch` use this. Lives in the caller's
// thread; every call is forwarded queued, every signal is forwarded back into
// the caller's thread.
//
// Destruction while running aborts the dispatcher (in-flight requests are
// abandoned, buffered acks written, leases released — blocking for as long as
// that takes), then quits and waits for the thread. For a graceful shutdown
// call stop() and wait for stopped() first.
class DispatcherHost final : public DispatcherSignals {
    Q_OBJECT
public:
    DispatcherHost(const core::ConnInfo &connInfo, const core::DispatcherConfig &config,
                   PublisherFactory publisherFactory = {}, DispatcherOptions options = {},
                   QObject *parent = nullptr);
    ~DispatcherHost() override;
    Q_DISABLE_COPY_MOVE(DispatcherHost)

    void start();
    void stop();
    void setConfig(const core::DispatcherConfig &config);

    // The latest snapshot (updated in this thread); its state is the
    // dispatcher's as of that snapshot.
    const DispatcherStats &lastStats() const { return m_lastStats; }

private:
    QThread m_thread;
    Dispatcher *m_dispatcher = nullptr; // lives in m_thread, deleted there
    DispatcherStats m_lastStats;
    std::unique_ptr<Housekeeping> m_housekeeping; // registry row, retention
    core::DispatcherConfig m_requestedConfig;     // for the registry once applied
};

} // namespace outbox::dispatch
