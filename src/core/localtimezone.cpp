#include "core/localtimezone.h"

#include <QFileInfo>
#include <QtGlobal>

namespace outbox::core {

bool pinLocalTimeZone() {
    if (qEnvironmentVariableIsSet("TZ"))
        return false;
    if (!QFileInfo::exists(QStringLiteral("/etc/localtime")))
        return false;
    // The leading colon: "read this zone file" (the same one glibc reads
    // when TZ is unset).
    return qputenv("TZ", ":/etc/localtime");
}

} // namespace outbox::core
