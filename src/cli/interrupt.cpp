#include "cli/interrupt.h"

#include <atomic>
#include <csignal>

namespace outbox::cli {

namespace {

// The one piece of file-scope mutable state in outboxctl: a signal handler
// cannot reach any object, and the commands run synchronously in the main
// thread without an event loop (so a self-pipe with QSocketNotifier would
// never be read). A lock-free atomic is async-signal-safe.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void onInterrupt(int) {
    g_interrupted.store(true);
}

} // namespace

InterruptGuard::InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    // SA_RESETHAND: the handler runs once; a second Ctrl-C gets the default
    // action and ends the process immediately.
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &m_previousInt);
    sigaction(SIGTERM, &action, &m_previousTerm);
}

InterruptGuard::~InterruptGuard() {
    sigaction(SIGINT, &m_previousInt, nullptr);
    sigaction(SIGTERM, &m_previousTerm, nullptr);
}

bool InterruptGuard::interrupted() const {
    return g_interrupted.load();
}

} // namespace outbox::cli
