#pragma once

#include <QLoggingCategory>
#include <QString>
#include <QUuid>

namespace outbox::dispatch {

// "outbox.dispatch": dispatcher, publishers, notifier, metrics. Logs from
// info up by default; enable debug with QT_LOGGING_RULES.
Q_DECLARE_LOGGING_CATEGORY(lcDispatch)

// An id as log lines write it: no braces.
QString uuidText(const QUuid &id);

} // namespace outbox::dispatch
