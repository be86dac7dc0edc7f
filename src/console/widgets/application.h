#pragma once

#include "console/widgets/democontroller.h"

namespace outbox::console {

// The whole of outbox-console's main(): parses the command line (a bad one
// is reported on stderr, and in a message box when there is a display, and
// exits with 2), chooses the database (--db, --profile, --demo, or the
// connection dialog) and runs the main window. `demo` is demo mode
// (outbox-console-demo gives it); without it, --demo runs that program in
// place of this one.
int runApplication(int argc, char **argv, const DemoFactory &demo = {});

// Registers the console's icons (a static library's resources are not
// registered on their own). Safe to call more than once.
void initResources();

} // namespace outbox::console
