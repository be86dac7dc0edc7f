#include "dispatch/httppublisher.h"

#include "core/retrypolicy.h"
#include "dispatch/logging.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>

#include <algorithm>

namespace outbox::dispatch {

namespace {

constexpr qint64 ReadBufferBytes = 64 * 1024;

QString byteSize(qint64 bytes) {
    if (bytes % (1024 * 1024) == 0)
        return QString::number(bytes / (1024 * 1024)) % QStringLiteral(" MiB");
    if (bytes % 1024 == 0)
        return QString::number(bytes / 1024) % QStringLiteral(" KiB");
    return QString::number(bytes) % QStringLiteral(" bytes");
}

QString reasonPhrase(QNetworkReply *reply) {
    return QString::fromLatin1(
        reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray());
}

} // namespace

HttpPublisher::~HttpPublisher() {
    abortAll();
}

void HttpPublisher::configureDelivery(const core::DispatcherConfig &config) {
    m_maxResponseBytes = config.maxResponseBytes;
}

void HttpPublisher::abortExpired() {
    m_pool.abortExpired(m_replies, m_target.timeout, [](const InFlight &) { return false; });
}

void HttpPublisher::publish(const store::ClaimedEvent &event) {
    if (!m_configured || m_pool.isEmpty()) {
        const PublishOutcome outcome = PublishOutcome::retry(
            event, QStringLiteral("the HTTP publisher has no configuration (internal error)"));
        QMetaObject::invokeMethod(
            this, [this, outcome] { Q_EMIT finished(outcome); }, Qt::QueuedConnection);
        return;
    }
    InFlight flight{event, {}, false, 0, {}, 0, false};
    flight.timer.start();
    QNetworkReply *reply =
        m_pool.post(webhookRequest(m_target, event), event.payload, &flight.manager);
    // Qt stops reading the socket while this much is unread, and drainBody()
    // reads it as it arrives: what is held per request stays near the cap.
    reply->setReadBufferSize(std::min<qint64>(m_maxResponseBytes + 1, ReadBufferBytes));
    m_replies.insert(reply, std::move(flight));
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] { drainBody(reply); });
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onReplyFinished(reply); });
}

void HttpPublisher::abortAll() {
    const auto replies = m_replies.keys();
    m_replies.clear();
    m_pool.abortAll(replies);
}

void HttpPublisher::abortOversized(QNetworkReply *reply, InFlight &flight) {
    if (flight.oversized)
        return;
    flight.oversized = true;
    reply->abort(); // emits finished() synchronously: `flight` is gone afterwards
}

void HttpPublisher::drainBody(QNetworkReply *reply) {
    const auto it = m_replies.find(reply);
    if (it == m_replies.end() || it->oversized)
        return;
    InFlight &flight = it.value();
    while (reply->bytesAvailable() > 0) {
        const QByteArray chunk = reply->read(ReadBufferBytes);
        if (chunk.isEmpty())
            break;
        flight.received += chunk.size();
        if (flight.head.size() < ExcerptBytes)
            flight.head += chunk.left(ExcerptBytes - flight.head.size());
        if (flight.received > m_maxResponseBytes) {
            abortOversized(reply, flight);
            return;
        }
    }
}

void HttpPublisher::onReplyFinished(QNetworkReply *reply) {
    drainBody(reply);
    const auto it = m_replies.find(reply);
    if (it == m_replies.end())
        return;
    const InFlight flight = std::move(it.value());
    m_replies.erase(it);
    m_pool.release(flight.manager);
    reply->deleteLater();
    PublishOutcome outcome = outcomeFor(reply, flight);
    outcome.duration = std::chrono::microseconds(flight.timer.nsecsElapsed() / 1000);
    Q_EMIT finished(outcome);
}

PublishOutcome HttpPublisher::outcomeFor(QNetworkReply *reply, const InFlight &flight) const {
    const store::ClaimedEvent &event = flight.event;
    const QVariant statusAttribute = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    const int status = statusAttribute.isValid() ? statusAttribute.toInt() : 0;
    const QNetworkReply::NetworkError error = reply->error();

    if (flight.oversized) {
        // A 2xx whose body was cut is retried like any incomplete response:
        // the dispatcher cannot tell that the runner finished.
        QString text = QStringLiteral("the reply is longer than --max-response-bytes (") %
                       byteSize(m_maxResponseBytes) % QStringLiteral("); it was cut");
        if (status != 0)
            text = QStringLiteral("HTTP ") % QString::number(status) % QStringLiteral(": ") % text;
        const QString head = excerpt(flight.head);
        if (!head.isEmpty())
            text += QStringLiteral(": ") % head;
        if (status != 0 &&
            classifyStatus(status, m_permanentStatuses) == PublishOutcome::Kind::Permanent)
            return PublishOutcome::permanent(event, text.left(PublishOutcome::MaxErrorLength),
                                             status);
        return PublishOutcome::retry(event, text.left(PublishOutcome::MaxErrorLength),
                                     status == 0 ? std::optional<int>()
                                                 : std::optional<int>(status));
    }
    if (flight.timedOut || error == QNetworkReply::TimeoutError ||
        (error == QNetworkReply::OperationCanceledError && status == 0)) {
        // The transfer timeout aborts the reply with OperationCanceledError;
        // abortAll() never gets here because it disconnects first.
        return PublishOutcome::retry(event,
                                     QStringLiteral("timeout: no complete response within ") %
                                         core::formatDuration(m_target.timeout));
    }

    if (status >= 200 && status < 300) {
        if (error == QNetworkReply::NoError)
            return PublishOutcome::delivered(event, status);
        // The status line arrived but the response did not complete (e.g. the
        // connection was reset mid-body): we cannot know the runner finished.
        return PublishOutcome::retry(event,
                                     QStringLiteral("incomplete response (HTTP ") %
                                         QString::number(status) % QStringLiteral("): ") %
                                         scrub(reply->errorString()),
                                     status);
    }

    if (status == 0) {
        const QString kind = error == QNetworkReply::SslHandshakeFailedError
                                 ? QStringLiteral("TLS error (check --ca-file): ")
                                 : QStringLiteral("connection error: ");
        return PublishOutcome::retry(event, kind % scrub(reply->errorString()));
    }

    const QByteArray &body = flight.head;
    std::optional<core::Millis> retryAfter;
    const QByteArray retryAfterHeader = reply->rawHeader(QByteArrayLiteral("Retry-After"));
    if (!retryAfterHeader.isEmpty())
        retryAfter = core::parseRetryAfter(retryAfterHeader, QDateTime::currentDateTimeUtc());

    QString text = QStringLiteral("HTTP ") % QString::number(status);
    const QString reason = reasonPhrase(reply);
    if (!reason.isEmpty())
        text += QLatin1Char(' ') % reason;
    if (status >= 300 && status < 400) {
        const QString location = reply->attribute(QNetworkRequest::RedirectionTargetAttribute)
                                     .toUrl()
                                     .toString(QUrl::RemoveUserInfo);
        text += QStringLiteral(": redirect not followed") %
                (location.isEmpty() ? QString() : QStringLiteral(" (to ") % location % u')');
    }
    const QString bodyText = excerpt(body);
    if (!bodyText.isEmpty())
        text += QStringLiteral(": ") % bodyText;

    switch (classifyStatus(status, m_permanentStatuses)) {
    case PublishOutcome::Kind::Permanent:
        return PublishOutcome::permanent(event, text, status);
    case PublishOutcome::Kind::Delivered: // handled above
    case PublishOutcome::Kind::Retry:
        break;
    }
    return PublishOutcome::retry(event, text, status, retryAfter);
}

} // namespace outbox::dispatch
