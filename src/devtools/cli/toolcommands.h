#pragma once

#include "cli/commandparser.h"

// The development tools, each a program of its own beside outboxctl so that
// outboxctl, the binary a server runs, holds none of their code (the
// development runner, the benchmark and the embedded cluster under them).
// `outboxctl runner ...` runs outboxctl-runner in its place (cli.cpp).
namespace outbox::cli {

int runRunner(CommandContext &context); // cmd_runner.cpp, the program outboxctl-runner
int runBench(CommandContext &context);  // cmd_bench.cpp, the program outboxctl-bench

} // namespace outbox::cli
