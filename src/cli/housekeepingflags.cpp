#include "cli/housekeepingflags.h"

namespace outbox::cli {

QList<QCommandLineOption> housekeepingFlags() {
    return {
        option("retain-delivered",
               "Delete delivered events older than this (by creation time), in small batches in "
               "the background, at least once a minute (default: keep them).",
               "duration"),
        option("retain-dead", "Delete dead events older than this (default: keep them).",
               "duration"),
        option("retention-batch", "Rows per retention delete (default 1000).", "n"),
        option("heartbeat-interval",
               "How often this dispatcher's row in the registry is refreshed (default 5s; it is "
               "shown as gone after three missed heartbeats).",
               "duration"),
        option("gauges-interval",
               "With --metrics-addr: how often the queue gauges (outbox_queue_*) are read from "
               "the database (default 10s).",
               "duration"),
    };
}

core::Result<dispatch::HousekeepingOptions> readHousekeepingFlags(const CommandParser &parser) {
    dispatch::HousekeepingOptions options;
    const auto atLeast = [&parser](const QString &name, core::Millis min,
                                   core::Millis &target) -> core::Result<void> {
        auto value = parser.duration(name);
        if (!value)
            return value.error();
        if (!value.value())
            return {};
        if (*value.value() < min)
            return usage(
                QStringLiteral("--%1 must be at least %2 (got %3)")
                    .arg(name, core::formatDuration(min), core::formatDuration(*value.value())));
        target = *value.value();
        return {};
    };
    if (auto ok = atLeast(QStringLiteral("retain-delivered"), core::Millis(60000),
                          options.retainDelivered);
        !ok)
        return ok.error();
    if (auto ok = atLeast(QStringLiteral("retain-dead"), core::Millis(60000), options.retainDead);
        !ok)
        return ok.error();
    if (auto ok = atLeast(QStringLiteral("heartbeat-interval"), core::Millis(100),
                          options.heartbeatInterval);
        !ok)
        return ok.error();
    auto batch =
        parser.integer(QStringLiteral("retention-batch"), options.retentionBatch, 1, 10000);
    if (!batch)
        return batch.error();
    options.retentionBatch = int(batch.value());
    return options;
}

} // namespace outbox::cli
