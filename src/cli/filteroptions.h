#pragma once

#include "cli/commandparser.h"
#include "store/eventfilter.h"

namespace outbox::cli {

// The filter flags shared by `list` and the bulk actions: --id (repeatable),
// --status, --namespace, --topic, --tenant, --dedupe-key, --error-contains,
// --text, --created-after, --created-before, --older-than, --payload.
void addFilterOptions(CommandParser &parser);

// Builds the filter; errors are usage errors that name the flag.
core::Result<store::EventFilter> filterFromOptions(const CommandParser &parser);

} // namespace outbox::cli
