#pragma once

#include <QLoggingCategory>

namespace outbox::store {

// "outbox.store": connections, migrations, the outbox store and operator actions.
Q_DECLARE_LOGGING_CATEGORY(lcStore)

} // namespace outbox::store
