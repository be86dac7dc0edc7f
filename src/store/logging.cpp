#include "store/logging.h"

namespace outbox::store {

Q_LOGGING_CATEGORY(lcStore, "outbox.store")

} // namespace outbox::store
