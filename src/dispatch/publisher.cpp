#include "dispatch/publisher.h"

#include "core/enumnames.h"

namespace outbox::dispatch {

namespace {

QString clip(QString text) {
    if (text.size() > PublishOutcome::MaxErrorLength) {
        text.truncate(PublishOutcome::MaxErrorLength - 3);
        text += QStringLiteral("...");
    }
    return text;
}

} // namespace

PublishOutcome PublishOutcome::delivered(const store::ClaimedEvent &event, int httpStatus) {
    PublishOutcome outcome;
    outcome.id = event.id;
    outcome.attempts = event.attempts;
    outcome.kind = Kind::Delivered;
    outcome.httpStatus = httpStatus;
    return outcome;
}

PublishOutcome PublishOutcome::retry(const store::ClaimedEvent &event, QString error,
                                     std::optional<int> httpStatus,
                                     std::optional<core::Millis> retryAfter) {
    PublishOutcome outcome;
    outcome.id = event.id;
    outcome.attempts = event.attempts;
    outcome.kind = Kind::Retry;
    outcome.httpStatus = httpStatus;
    outcome.retryAfter = retryAfter;
    outcome.error = clip(std::move(error));
    return outcome;
}

PublishOutcome PublishOutcome::permanent(const store::ClaimedEvent &event, QString error,
                                         std::optional<int> httpStatus) {
    PublishOutcome outcome;
    outcome.id = event.id;
    outcome.attempts = event.attempts;
    outcome.kind = Kind::Permanent;
    outcome.httpStatus = httpStatus;
    outcome.error = clip(std::move(error));
    return outcome;
}

PublishOutcome PublishOutcome::returned(const store::ClaimedEvent &event, QString reason) {
    PublishOutcome outcome;
    outcome.id = event.id;
    outcome.attempts = event.attempts;
    outcome.kind = Kind::Returned;
    outcome.error = clip(std::move(reason));
    return outcome;
}

void Publisher::publishBatch(const QList<store::ClaimedEvent> &events) {
    for (const store::ClaimedEvent &event : events)
        publish(event);
}

constexpr core::EnumName<PublishOutcome::Kind> kOutcomeKindNames[] = {
    {PublishOutcome::Kind::Delivered, "delivered"},
    {PublishOutcome::Kind::Retry, "retry"},
    {PublishOutcome::Kind::Permanent, "permanent"},
    {PublishOutcome::Kind::Returned, "returned"}};

QString outcomeKindName(PublishOutcome::Kind kind) {
    return core::nameOf(kOutcomeKindNames, kind, "unknown");
}

Publisher::Publisher(QObject *parent)
    : QObject(parent) {}

Publisher::~Publisher() = default;

} // namespace outbox::dispatch
