#pragma once

#include <QByteArray>
#include <QString>

namespace outbox::core {

// Re-indents JSON text without parsing its values, so numbers keep their
// exact digits (QJsonDocument would turn a large integer into a double).
// indent < 0: compact, one line. The text is not validated; callers that
// may hold invalid JSON check it first.
QString reformatJson(const QByteArray &text, int indent = 2);

} // namespace outbox::core
