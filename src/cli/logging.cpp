#include "cli/logging.h"

namespace outbox::cli {

Q_LOGGING_CATEGORY(lcCli, "outbox.cli")

namespace {
bool g_verbose = false;
} // namespace

void setVerbose(bool verbose) {
    g_verbose = verbose;
}

bool isVerbose() {
    return g_verbose;
}

} // namespace outbox::cli
