#include "cli/globaloptions.h"
#include "devtools/cli/toolcommands.h"

// outboxctl-bench, what `outboxctl bench` runs.
int main(int argc, char *argv[]) {
    return outbox::cli::runTool(argc, argv, QStringLiteral("bench"), outbox::cli::runBench);
}
