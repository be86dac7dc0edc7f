#pragma once

#include "core/duration.h"

namespace outbox::dispatch {

// What a dispatcher does beside delivering (Housekeeping): its row in the
// dispatcher registry, and deleting old delivered and dead events.
struct HousekeepingOptions {
    bool registry = true;                  // register and heartbeat in outbox_dispatchers
    core::Millis heartbeatInterval{5000};  // gone after three missed heartbeats
    core::Millis retainDelivered{0};       // > 0: delete delivered events older than this
    core::Millis retainDead{0};            // > 0: delete dead events older than this
    core::Millis retentionInterval{60000}; // how often retention looks
    int retentionBatch = 1000;             // rows per delete (one short transaction)
    core::Millis gaugesInterval{10000};    // queue gauges of /metrics read this often
};

} // namespace outbox::dispatch
