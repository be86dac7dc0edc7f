#pragma once

#include "cli/commandparser.h"
#include "dispatch/housekeepingoptions.h"

namespace outbox::cli {

// `outboxctl dispatch`'s flags for the registry, retention and the queue
// gauges, bound to `options`: --retain-delivered, --retain-dead,
// --retention-batch, --heartbeat-interval, --gauges-interval.
OptionTable housekeepingFlags(dispatch::HousekeepingOptions &options);

} // namespace outbox::cli
