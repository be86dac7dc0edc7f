#pragma once

#include "core/result.h"

namespace outbox::dispatch {

// Adds `increment` to the nice value of the calling thread (Linux: nice is
// per thread, and threads started from it afterwards inherit it). The error
// says why the system refused.
core::Result<void> lowerThreadPriority(int increment);

} // namespace outbox::dispatch
