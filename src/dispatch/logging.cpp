#include "dispatch/logging.h"

namespace outbox::dispatch {

Q_LOGGING_CATEGORY(lcDispatch, "outbox.dispatch", QtInfoMsg)

} // namespace outbox::dispatch
