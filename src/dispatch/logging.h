#pragma once

#include <QLoggingCategory>

namespace outbox::dispatch {

// "outbox.dispatch": dispatcher, publishers, notifier, metrics. Logs from
// info up by default; enable debug with QT_LOGGING_RULES.
Q_DECLARE_LOGGING_CATEGORY(lcDispatch)
// "outbox.dispatch.events": a line per event (one that died, a nack whose
// lease was lost). On by default for `outboxctl dispatch` (the journal is
// where an operator looks); the console turns it off on its stderr, where
// its dispatcher panel and Log pane say the same per interval.
Q_DECLARE_LOGGING_CATEGORY(lcDispatchEvents)

} // namespace outbox::dispatch
