#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QString>
#include <QStringList>

#include <chrono>
#include <optional>

namespace outbox::console {

// What outbox-console was asked to do on its command line.
struct CommandLine {
    std::optional<core::ConnInfo> connInfo; // --db
    QString profile;                        // --profile
    QString fleetFile;                      // --fleet
    bool demo = false;                      // --demo
    bool readOnly = false;                  // --read-only
    bool help = false;                      // --help
    bool version = false;                   // --version
    // --screenshot FILE [--screenshot-delay SECONDS]: grab the main window
    // to a PNG after the delay and quit (for the documentation).
    QString screenshotFile;
    QString screenshotFleetFile; // --screenshot-fleet FILE: the fleet window instead
    std::chrono::milliseconds screenshotDelay{4000};
};

// Parses `arguments` (argv, program name first). Errors name the option and
// the fix; they are meant for stderr and exit code 2.
core::Result<CommandLine> parseCommandLine(const QStringList &arguments);
QString commandLineHelp();

} // namespace outbox::console
