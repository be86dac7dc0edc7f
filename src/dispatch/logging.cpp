#include "dispatch/logging.h"

namespace outbox::dispatch {

Q_LOGGING_CATEGORY(lcDispatch, "outbox.dispatch", QtInfoMsg)
Q_LOGGING_CATEGORY(lcDispatchEvents, "outbox.dispatch.events", QtInfoMsg)

} // namespace outbox::dispatch
