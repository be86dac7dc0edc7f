#pragma once

#include <QLoggingCategory>

namespace outbox::devtools {

// "outbox.devtools": the embedded cluster and the development runner (per-request
// lines are debug; enable them with QT_LOGGING_RULES).
Q_DECLARE_LOGGING_CATEGORY(lcDevtools)

} // namespace outbox::devtools
