#pragma once

#include "core/result.h"

namespace outbox::cli {

// Exit codes of every outboxctl command; scripts rely on them.
enum ExitCode : int {
    ExitOk = 0,
    ExitFailure = 1,     // anything else (including "no such event")
    ExitUsage = 2,       // bad command line or configuration (a wrong password too); nothing done
    ExitUnavailable = 3, // the database could not be reached
    ExitInterrupted = 130,
};

int exitCodeFor(core::ErrorKind kind);

} // namespace outbox::cli
