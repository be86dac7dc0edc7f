#pragma once

#include "cli/cliutil.h"

#include <QLatin1StringView>

#include <span>

// The outboxctl subcommands (the development tools are in toolcommands.h).
// Each parses its own arguments with a CommandParser, prints results to
// stdout and diagnostics to stderr, and returns an ExitCode.
namespace outbox::cli {

int runMigrate(CommandContext &context);     // cmd_migrate.cpp
int runEnqueue(CommandContext &context);     // cmd_enqueue.cpp
int runStats(CommandContext &context);       // cmd_stats.cpp
int runList(CommandContext &context);        // cmd_list.cpp
int runExport(CommandContext &context);      // cmd_export.cpp
int runShow(CommandContext &context);        // cmd_show.cpp
int runRequeue(CommandContext &context);     // cmd_actions.cpp
int runRetry(CommandContext &context);       // cmd_actions.cpp
int runCancel(CommandContext &context);      // cmd_actions.cpp
int runPurge(CommandContext &context);       // cmd_actions.cpp
int runReplay(CommandContext &context);      // cmd_actions.cpp
int runDispatch(CommandContext &context);    // cmd_dispatch.cpp
int runDispatchers(CommandContext &context); // cmd_control.cpp
int runPause(CommandContext &context);       // cmd_control.cpp
int runRoutes(CommandContext &context);      // routesfile.cpp
int runDestination(CommandContext &context); // cmd_destination.cpp
int runResume(CommandContext &context);      // cmd_control.cpp
int runFleet(CommandContext &context);       // cmd_fleet.cpp

struct CommandInfo {
    QLatin1StringView name;
    QLatin1StringView summary; // one line for `outboxctl help`
    CommandFunction function;
};

// Every command, in the order `outboxctl help` lists them.
std::span<const CommandInfo> commandTable();

} // namespace outbox::cli
