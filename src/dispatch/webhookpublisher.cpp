#include "dispatch/webhookpublisher.h"

namespace outbox::dispatch {

WebhookPublisher::WebhookPublisher(QObject *parent)
    : Publisher(parent)
    , m_client(this) {}

core::Result<void> WebhookPublisher::configure(const core::DispatcherConfig &config) {
    auto target = webhookTarget(config);
    if (!target)
        return core::Result<void>(target.error());
    m_target = std::move(target).value();
    m_permanentStatuses = config.permanentStatuses;
    configureDelivery(config);
    m_client.configure(httpEndpoint(m_target), m_target.timeout, config.concurrency);
    m_configured = true;
    return {};
}

void WebhookPublisher::post(const QByteArray &request, qint64 bodyLimit, int events,
                            std::function<void(HttpAnswer &)> done) {
    m_inFlight += events;
    m_client.post(request, bodyLimit, [this, events, done = std::move(done)](HttpAnswer &answer) {
        m_inFlight -= events;
        done(answer);
    });
}

void WebhookPublisher::abortAll() {
    m_client.abortAll();
    m_inFlight = 0;
}

QString WebhookPublisher::transportError(const HttpAnswer &answer) const {
    switch (answer.failure) {
    case HttpAnswer::Failure::None:
    case HttpAnswer::Failure::TooLong:
        break;
    case HttpAnswer::Failure::Timeout:
        return QStringLiteral("timeout: no complete response within ") %
               core::formatDuration(m_target.timeout);
    case HttpAnswer::Failure::Connection:
        return QStringLiteral("connection error: ") % scrub(answer.error);
    case HttpAnswer::Failure::Tls:
        return QStringLiteral("TLS error (check --ca-file): ") % scrub(answer.error);
    case HttpAnswer::Failure::Incomplete:
        // The status line arrived but the response did not complete (e.g. the
        // connection was reset mid-body): we cannot know the runner finished.
        return QStringLiteral("incomplete response (HTTP ") % QString::number(answer.status) %
               QStringLiteral("): ") % scrub(answer.error);
    }
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
