#pragma once

#include "dispatch/dispatcher.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace outbox::dispatch {

class Housekeeping;

// Owns a worker QThread and a Dispatcher living in it; the console's
// dispatcher panel and `outboxctl dispatch` use this. Lives in the caller's
// thread; every call is forwarded queued and returns at once, every signal is
// forwarded back into the caller's thread. The caller never waits on the
// dispatcher's threads or its database.
//
// Shutting down: shutDown() stops gracefully and then ends the host's
// threads in the background (the dispatcher's, and housekeeping's once its
// registry row is deleted); finished() says they have ended, after which
// deleting the host waits for nothing. Destruction before that aborts the
// dispatcher (in-flight requests are abandoned, buffered acks written,
// leases released) and waits for its threads: blocking for as long as that
// takes.
class DispatcherHost final : public DispatcherSignals {
    Q_OBJECT
public:
    DispatcherHost(const core::ConnInfo &connInfo, const core::DispatcherConfig &config,
                   PublisherFactory publisherFactory = {}, DispatcherOptions options = {},
                   QObject *parent = nullptr);
    ~DispatcherHost() override;
    Q_DISABLE_COPY_MOVE(DispatcherHost)

    void start();
    // Graceful stop (see Dispatcher); stopped() follows. start() may follow.
    void stop();
    // stop(), then the threads end; stopped(), then finished() follow. The
    // host cannot be started again.
    void shutDown();
    void setConfig(const core::DispatcherConfig &config);

    // The latest snapshot (updated in this thread); its state is the
    // dispatcher's as of that snapshot.
    const DispatcherStats &lastStats() const { return m_lastStats; }

Q_SIGNALS:
    // After shutDown(): every thread of the host has ended.
    void finished();

private:
    void windDown();

    QThread m_thread;
    Dispatcher *m_dispatcher = nullptr; // lives in m_thread, deleted there
    DispatcherStats m_lastStats;
    std::unique_ptr<Housekeeping> m_housekeeping; // registry row, retention
    core::DispatcherConfig m_requestedConfig;     // for the registry once applied
    bool m_shuttingDown = false;
    bool m_windingDown = false;
};

} // namespace outbox::dispatch
