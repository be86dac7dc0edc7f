#pragma once

#include <QLoggingCategory>

namespace outbox::dispatch {

// "outbox.dispatch": dispatcher, publishers, notifier, metrics. Logs from
// info up by default; enable debug with QT_LOGGING_RULES.
Q_DECLARE_LOGGING_CATEGORY(lcDispatch)

} // namespace outbox::dispatch
