#pragma once

#include "cli/commandparser.h"
#include "dispatch/housekeepingoptions.h"

namespace outbox::cli {

// `outboxctl dispatch`'s flags for the registry and retention:
// --retain-delivered, --retain-dead, --retention-batch, --heartbeat-interval.
QList<QCommandLineOption> housekeepingFlags();
core::Result<dispatch::HousekeepingOptions> readHousekeepingFlags(const CommandParser &parser);

} // namespace outbox::cli
