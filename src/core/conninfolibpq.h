#pragma once

#include "core/result.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

// The bridge to libpq's own connection-string parser.
namespace outbox::core::detail {

class Disclosure;

// The connection keywords of the libpq this program runs with, in libpq's
// order.
const QStringList &libpqKeywords();
// Keywords whose values libpq itself treats as secret (password, sslpassword).
bool isSecretKeyword(QStringView key);

// The key=value pairs libpq's PQconninfoParse() reads from `text` (a key=value
// string or a URI), in libpq's keyword order; or why it cannot, as a sentence
// that names the problem and the fix and quotes only what `disclosure` allows
// (libpq's own messages quote the text, password included).
Result<QList<QPair<QString, QString>>> parseWithLibpq(const QString &text,
                                                      const Disclosure &disclosure);

} // namespace outbox::core::detail
