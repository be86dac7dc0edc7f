#pragma once

#include <QString>

#include <optional>

namespace outbox::core {

// The row state machine: pending -> processing -> delivered, or back to
// pending for a retry, or dead.
enum class Status { Pending, Processing, Delivered, Dead };

QString statusName(Status status); // "pending", "processing", "delivered", "dead"
std::optional<Status> statusFromName(QStringView name); // case-insensitive
bool isTerminal(Status status);                         // delivered, dead

} // namespace outbox::core
