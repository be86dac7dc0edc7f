#pragma once

#include <QStringList>

namespace outbox::cli {

// The whole of outboxctl: `arguments` as from QCoreApplication::arguments()
// (the first is the program). Returns the process exit code (exitcodes.h).
// Needs a QCoreApplication.
int run(const QStringList &arguments);

} // namespace outbox::cli
