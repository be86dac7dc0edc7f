#include "dispatch/publisher.h"

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

void Publisher::publishBatch(const QList<store::ClaimedEvent> &events) {
    for (const store::ClaimedEvent &event : events)
        publish(event);
}

QString outcomeKindName(PublishOutcome::Kind kind) {
    switch (kind) {
    case PublishOutcome::Kind::Delivered:
        return QStringLiteral("delivered");
    case PublishOutcome::Kind::Retry:
        return QStringLiteral("retry");
    case PublishOutcome::Kind::Permanent:
        return QStringLiteral("permanent");
    }
    return QStringLiteral("unknown");
}

Publisher::Publisher(QObject *parent)
    : QObject(parent) {}

Publisher::~Publisher() = default;

} // namespace outbox::dispatch
