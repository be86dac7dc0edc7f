#include "cli/globaloptions.h"
#include "devtools/cli/toolcommands.h"

// outboxctl-runner, what `outboxctl runner` runs.
int main(int argc, char *argv[]) {
    return outbox::cli::runTool(argc, argv, QStringLiteral("runner"), outbox::cli::runRunner);
}
