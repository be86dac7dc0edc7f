#include "dispatch/logging.h"

namespace outbox::dispatch {

Q_LOGGING_CATEGORY(lcDispatch, "outbox.dispatch", QtInfoMsg)
Q_LOGGING_CATEGORY(lcRunner, "outbox.dispatch.runner", QtInfoMsg)

QString uuidText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

} // namespace outbox::dispatch
