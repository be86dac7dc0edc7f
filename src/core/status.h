#pragma once

#include <QString>

#include <optional>

namespace outbox::core {

// The row state machine of ARCHITECTURE.md §4.
enum class Status { Pending, Processing, Delivered, Dead };

QString statusName(Status status); // "pending", "processing", "delivered", "dead"
std::optional<Status> statusFromName(QStringView name); // case-insensitive
bool isTerminal(Status status);                         // delivered, dead

} // namespace outbox::core
