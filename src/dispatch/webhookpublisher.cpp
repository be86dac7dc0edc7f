#include "dispatch/webhookpublisher.h"

namespace outbox::dispatch {

WebhookPublisher::WebhookPublisher(QObject *parent)
    : Publisher(parent)
    , m_pool(this, [this] { abortExpired(); }) {}

core::Result<void> WebhookPublisher::configure(const core::DispatcherConfig &config) {
    auto target = webhookTarget(config);
    if (!target)
        return core::Result<void>(target.error());
    m_target = std::move(target).value();
    m_permanentStatuses = config.permanentStatuses;
    configureDelivery(config);
    m_pool.resize(config.concurrency);
    m_configured = true;
    return {};
}

PublishOutcome::Kind WebhookPublisher::classifyStatus(int httpStatus,
                                                      const QList<int> &permanentStatuses) {
    if (httpStatus >= 200 && httpStatus < 300)
        return PublishOutcome::Kind::Delivered;
    if (permanentStatuses.contains(httpStatus))
        return PublishOutcome::Kind::Permanent;
    return PublishOutcome::Kind::Retry;
}

QString WebhookPublisher::excerpt(const QByteArray &answer) const {
    QString text = QString::fromUtf8(answer.left(ExcerptBytes)).simplified();
    if (text.size() > PublishOutcome::MaxErrorLength)
        text.truncate(PublishOutcome::MaxErrorLength);
    return scrub(text);
}

} // namespace outbox::dispatch
