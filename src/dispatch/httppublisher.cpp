#include "dispatch/httppublisher.h"

#include "core/retrypolicy.h"
#include "dispatch/logging.h"

#include <QDateTime>
#include <QElapsedTimer>

namespace outbox::dispatch {

namespace {

QString byteSize(qint64 bytes) {
    if (bytes % (1024 * 1024) == 0)
        return QString::number(bytes / (1024 * 1024)) % QStringLiteral(" MiB");
    if (bytes % 1024 == 0)
        return QString::number(bytes / 1024) % QStringLiteral(" KiB");
    return QString::number(bytes) % QStringLiteral(" bytes");
}

} // namespace

HttpPublisher::~HttpPublisher() {
    abortAll();
}

void HttpPublisher::configureDelivery(const core::DispatcherConfig &config) {
    m_maxResponseBytes = config.maxResponseBytes;
}

void HttpPublisher::publish(const store::ClaimedEvent &event) {
    if (!m_configured) {
        const PublishOutcome outcome = PublishOutcome::retry(
            event, QStringLiteral("the HTTP publisher has no configuration (internal error)"));
        QMetaObject::invokeMethod(
            this, [this, outcome] { Q_EMIT finished(outcome); }, Qt::QueuedConnection);
        return;
    }
    QElapsedTimer timer;
    timer.start();
    post(httpRequest(m_target, webhookHeaders(m_target, event), event.payload), m_maxResponseBytes,
         1, [this, event, timer](HttpAnswer &answer) {
             PublishOutcome outcome = outcomeFor(answer, event);
             outcome.duration = std::chrono::microseconds(timer.nsecsElapsed() / 1000);
             Q_EMIT finished(outcome);
         });
}

PublishOutcome HttpPublisher::outcomeFor(const HttpAnswer &answer,
                                         const store::ClaimedEvent &event) const {
    const int status = answer.status;
    if (answer.failure == HttpAnswer::Failure::TooLong) {
        // A 2xx whose body was cut is retried like any incomplete response:
        // the dispatcher cannot tell that the runner finished.
        QString text = QStringLiteral("HTTP ") % QString::number(status) %
                       QStringLiteral(": the reply is longer than --max-response-bytes (") %
                       byteSize(m_maxResponseBytes) % QStringLiteral("); it was cut");
        const QString head = excerpt(answer.body);
        if (!head.isEmpty())
            text += QStringLiteral(": ") % head;
        if (classifyStatus(status, m_permanentStatuses) == PublishOutcome::Kind::Permanent)
            return PublishOutcome::permanent(event, text.left(PublishOutcome::MaxErrorLength),
                                             status);
        return PublishOutcome::retry(event, text.left(PublishOutcome::MaxErrorLength), status);
    }
    if (const QString error = transportError(answer); !error.isEmpty())
        return PublishOutcome::retry(event, error,
                                     status == 0 ? std::nullopt : std::optional<int>(status));

    if (status >= 200 && status < 300)
        return PublishOutcome::delivered(event, status);

    std::optional<core::Millis> retryAfter;
    const QByteArray retryAfterHeader = answer.header("retry-after");
    if (!retryAfterHeader.isEmpty())
        retryAfter = core::parseRetryAfter(retryAfterHeader, QDateTime::currentDateTimeUtc());

    QString text = QStringLiteral("HTTP ") % QString::number(status);
    if (!answer.reason.isEmpty())
        text += QLatin1Char(' ') % QString::fromLatin1(answer.reason);
    if (status >= 300 && status < 400) {
        const QString location = QString::fromLatin1(answer.header("location"));
        text += QStringLiteral(": redirect not followed") %
                (location.isEmpty() ? QString() : QStringLiteral(" (to ") % scrub(location) % u')');
    }
    const QString bodyText = excerpt(answer.body);
    if (!bodyText.isEmpty())
        text += QStringLiteral(": ") % bodyText;

    switch (classifyStatus(status, m_permanentStatuses)) {
    case PublishOutcome::Kind::Permanent:
        return PublishOutcome::permanent(event, text, status);
    case PublishOutcome::Kind::Delivered: // handled above
    case PublishOutcome::Kind::Retry:
    case PublishOutcome::Kind::Returned: // never a status's
        break;
    }
    return PublishOutcome::retry(event, text, status, retryAfter);
}

} // namespace outbox::dispatch
