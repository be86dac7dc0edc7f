#pragma once

#include "core/dispatcherconfig.h"

#include <QString>

namespace outbox::store {

// The claim as OutboxStore prepares it ('?' placeholders: max attempts, the
// created_at floor, the namespace when `byNamespace`, the batch size, then in
// aggregate order the same four again; then the worker and the lease in ms).
QString claimStatement(bool byNamespace, core::Ordering ordering);

} // namespace outbox::store
