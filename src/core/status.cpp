#include "core/status.h"

#include "core/enumnames.h"

namespace outbox::core {

constexpr EnumName<Status> kStatusNames[] = {{Status::Pending, "pending"},
                                             {Status::Processing, "processing"},
                                             {Status::Delivered, "delivered"},
                                             {Status::Dead, "dead"}};

QString statusName(Status status) {
    return nameOf(kStatusNames, status);
}

std::optional<Status> statusFromName(QStringView name) {
    return valueNamed(kStatusNames, name);
}

bool isTerminal(Status status) {
    return status == Status::Delivered || status == Status::Dead;
}

} // namespace outbox::core
