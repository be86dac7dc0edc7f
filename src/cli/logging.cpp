#include "cli/logging.h"

namespace outbox::cli {

Q_LOGGING_CATEGORY(lcCli, "outbox.cli")

} // namespace outbox::cli
