#pragma once

#include "cli/commandparser.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace outbox::cli {

// The options every outboxctl program takes before a command's own:
// `outboxctl --db X --verbose list`, `outboxctl-runner --verbose --listen ...`.
struct GlobalOptions {
    std::optional<QString> db; // --db CONNINFO, --db=CONNINFO
    bool verbose = false;      // -v, --verbose
};

// Takes the global options off the front of `rest`, stopping at the first
// argument that is not one. Returns an exit code when one is wrong (already
// printed on the console), else nullopt.
std::optional<int> takeGlobalOptions(QStringList &rest, GlobalOptions &global, Console &console);

// The global options as arguments again, for a development tool outboxctl
// runs in its place.
QStringList globalArguments(const GlobalOptions &global);

// Sets how much the libraries log before a command runs: their debug and info
// lines only with --verbose (QT_LOGGING_RULES still wins).
void applyVerbosity(bool verbose);

// The whole of a development tool beside outboxctl (outboxctl-runner,
// outboxctl-bench): one command, `name`, given the arguments after the global
// options. Its help and errors read "outboxctl <name>", how it is usually run.
int runTool(int argc, char *argv[], const QString &name, CommandFunction command);

} // namespace outbox::cli
