#include "cli/housekeepingflags.h"

namespace outbox::cli {

OptionTable housekeepingFlags(dispatch::HousekeepingOptions &options) {
    const core::Millis minute(60000);
    const core::Millis tick(100);
    return {
        durationOption("retain-delivered <duration>",
                       "Delete delivered events older than this (by creation time), in small "
                       "batches in the background, at least once a minute (default: keep them).",
                       options.retainDelivered, minute),
        durationOption("retain-dead <duration>",
                       "Delete dead events older than this (default: keep them).",
                       options.retainDead, minute),
        integerOption("retention-batch <n>", "Rows per retention delete (default 1000).",
                      options.retentionBatch, 1, 10000),
        durationOption("heartbeat-interval <duration>",
                       "How often this dispatcher's row in the registry is refreshed (default 5s; "
                       "it is shown as gone after three missed heartbeats).",
                       options.heartbeatInterval, tick),
        durationOption("gauges-interval <duration>",
                       "With --metrics-addr: how often the queue gauges (outbox_queue_*) are read "
                       "from the database (default 10s).",
                       options.gaugesInterval, tick),
    };
}

} // namespace outbox::cli
