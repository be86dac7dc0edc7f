#include "devtools/logging.h"

namespace outbox::devtools {

Q_LOGGING_CATEGORY(lcDevtools, "outbox.devtools", QtInfoMsg)

} // namespace outbox::devtools
