#include "core/status.h"

namespace outbox::core {

QString statusName(Status status) {
    switch (status) {
    case Status::Pending:
        return QStringLiteral("pending");
    case Status::Processing:
        return QStringLiteral("processing");
    case Status::Delivered:
        return QStringLiteral("delivered");
    case Status::Dead:
        return QStringLiteral("dead");
    }
    return QString();
}

std::optional<Status> statusFromName(QStringView name) {
    const QStringView trimmed = name.trimmed();
    for (Status s : {Status::Pending, Status::Processing, Status::Delivered, Status::Dead}) {
        if (trimmed.compare(statusName(s), Qt::CaseInsensitive) == 0)
            return s;
    }
    return std::nullopt;
}

bool isTerminal(Status status) {
    return status == Status::Delivered || status == Status::Dead;
}

} // namespace outbox::core
