#include "dispatch/logging.h"

namespace outbox::dispatch {

Q_LOGGING_CATEGORY(lcDispatch, "outbox.dispatch", QtInfoMsg)

QString uuidText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

} // namespace outbox::dispatch
