#pragma once

#include <QLoggingCategory>

namespace outbox::cli {

// "outbox.cli": the long-running commands (dispatch, runner).
Q_DECLARE_LOGGING_CATEGORY(lcCli)

} // namespace outbox::cli
