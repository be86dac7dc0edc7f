#pragma once

#include <QString>
#include <QUuid>

namespace outbox::core {

// An id as every text the project writes shows it: logs, headers, metrics
// labels, SQL parameters, command output. No braces, lower case.
inline QString uuidText(const QUuid &id) {
    return id.toString(QUuid::WithoutBraces);
}

} // namespace outbox::core
