#pragma once

#include <QLoggingCategory>

namespace outbox::cli {

// "outbox.cli": the long-running commands (dispatch, runner).
Q_DECLARE_LOGGING_CATEGORY(lcCli)

// `outboxctl --verbose <command>`: set before the command runs, so that a
// long-running command's own logging setup keeps the debug lines whether
// --verbose came before the command or after it.
void setVerbose(bool verbose);
bool isVerbose();

} // namespace outbox::cli
