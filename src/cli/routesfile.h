#pragma once

#include "core/dispatcherconfig.h"
#include "core/result.h"

#include <QString>

namespace outbox::cli {

// Reads and checks a routes file (core/routes.h) and makes `config` deliver
// by it; the error lists every problem with its line and the fix.
core::Result<void> loadDispatchRoutes(core::DispatcherConfig &config, const QString &path);

} // namespace outbox::cli
