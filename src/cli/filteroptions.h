#pragma once

#include "cli/commandparser.h"
#include "store/eventfilter.h"

namespace outbox::cli {

// The filter flags shared by `list`, `export` and the bulk actions, bound to
// `filter` (CommandParser::readOptions() fills it; errors are usage errors
// that name the flag): --id (repeatable), --status, --namespace, --topic,
// --tenant, --dedupe-key, --error-contains, --text, --created-after,
// --created-before, --older-than, --payload, --trace-id. `filter` must outlive the parser's
// reading.
OptionTable filterOptions(store::EventFilter &filter);

} // namespace outbox::cli
