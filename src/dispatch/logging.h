#pragma once

#include <QLoggingCategory>
#include <QString>
#include <QUuid>

namespace outbox::dispatch {

// "outbox.dispatch": dispatcher, publishers, notifier, metrics.
Q_DECLARE_LOGGING_CATEGORY(lcDispatch)
// "outbox.dispatch.runner": the development runner (per-request lines are debug).
// Both log from info up by default; enable debug with QT_LOGGING_RULES.
Q_DECLARE_LOGGING_CATEGORY(lcRunner)

// An id as log lines write it: no braces.
QString uuidText(const QUuid &id);

} // namespace outbox::dispatch
