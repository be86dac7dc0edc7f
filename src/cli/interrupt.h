#pragma once

#include <QtGlobal>

#include <csignal>

namespace outbox::cli {

// While alive, the first SIGINT or SIGTERM only raises a flag that a bulk
// action polls between batches (so it stops cleanly after the current one);
// a second signal terminates the process at once. The previous handlers are
// restored on destruction.
class InterruptGuard final {
public:
    InterruptGuard();
    ~InterruptGuard();
    Q_DISABLE_COPY_MOVE(InterruptGuard)

    bool interrupted() const;

private:
    struct sigaction m_previousInt = {};
    struct sigaction m_previousTerm = {};
};

} // namespace outbox::cli
