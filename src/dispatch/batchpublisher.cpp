#include "dispatch/batchpublisher.h"

#include "core/logline.h"
#include "core/retrypolicy.h"
#include "core/uuidtext.h"
#include "core/uuidv7.h"
#include "dispatch/logging.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>

#include <algorithm>

namespace outbox::dispatch {

namespace {

QList<PublishOutcome> eachRetried(const QList<store::ClaimedEvent> &events, const QString &error,
                                  std::optional<int> status = std::nullopt,
                                  std::optional<core::Millis> retryAfter = std::nullopt) {
    QList<PublishOutcome> outcomes;
    outcomes.reserve(events.size());
    for (const store::ClaimedEvent &event : events)
        outcomes.append(PublishOutcome::retry(event, error, status, retryAfter));
    return outcomes;
}

} // namespace

BatchPublisher::~BatchPublisher() {
    abortAll();
}

// The pool is sized by the concurrency as for single events: a request per
// event at worst (claims of one row).
void BatchPublisher::configureDelivery(const core::DispatcherConfig &config) {
    m_maxEvents = std::max(config.batchMaxEvents, 1);
    m_maxBytes = std::max<qint64>(config.batchMaxBytes, 1);
}

void BatchPublisher::abortExpired() {
    m_pool.abortExpired(m_replies, m_target.timeout,
                        [](const InFlight &flight) { return flight.tooLarge; });
}

void BatchPublisher::publish(const store::ClaimedEvent &event) {
    publishBatch({event});
}

void BatchPublisher::publishBatch(const QList<store::ClaimedEvent> &events) {
    if (events.isEmpty())
        return;
    if (!m_configured) {
        const QList<PublishOutcome> outcomes = eachRetried(
            events, QStringLiteral("the batch publisher has no configuration (internal error)"));
        QMetaObject::invokeMethod(
            this,
            [this, outcomes] {
                for (const PublishOutcome &outcome : outcomes)
                    Q_EMIT finished(outcome);
            },
            Qt::QueuedConnection);
        return;
    }
    for (Batch &batch : packBatches(events, m_maxEvents, m_maxBytes))
        send(std::move(batch));
}

void BatchPublisher::send(Batch batch) {
    const QByteArray webhookId = core::uuidText(core::createUuidV7()).toLatin1();
    QNetworkRequest request = signedRequest(m_target, webhookId, batch.body);
    request.setRawHeader(kBatchHeader, QByteArray::number(batch.events.size()));

    InFlight flight;
    flight.replyLimit = ReplyBaseBytes + ReplyBytesPerEvent * batch.events.size();
    flight.timer.start();
    QNetworkReply *reply = m_pool.post(request, batch.body, &flight.manager);
    m_events += int(batch.events.size());
    flight.events = std::move(batch.events);
    m_replies.insert(reply, std::move(flight));
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] {
        const auto it = m_replies.find(reply);
        if (it != m_replies.end() && readAnswer(reply, *it))
            reply->abort(); // emits finished() at once
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply] { onReplyFinished(reply); });
}

bool BatchPublisher::readAnswer(QNetworkReply *reply, InFlight &flight) {
    if (flight.tooLarge)
        return false;
    flight.answer += reply->read(flight.replyLimit + 1 - flight.answer.size());
    flight.tooLarge = flight.answer.size() > flight.replyLimit;
    return flight.tooLarge;
}

void BatchPublisher::abortAll() {
    const auto replies = m_replies.keys();
    m_replies.clear();
    m_events = 0;
    m_pool.abortAll(replies);
}

void BatchPublisher::onReplyFinished(QNetworkReply *reply) {
    const auto it = m_replies.find(reply);
    if (it == m_replies.end())
        return;
    if (!it->timedOut)
        readAnswer(reply, *it); // what arrived with the end of the reply
    const InFlight flight = std::move(it.value());
    m_replies.erase(it);
    m_pool.release(flight.manager);
    m_events -= int(flight.events.size());
    reply->deleteLater();
    const auto duration = std::chrono::microseconds(flight.timer.nsecsElapsed() / 1000);
    for (PublishOutcome &outcome : outcomesFor(reply, flight)) {
        outcome.duration = duration;
        Q_EMIT finished(outcome);
    }
}

QList<PublishOutcome> BatchPublisher::outcomesFor(QNetworkReply *reply,
                                                  const InFlight &flight) const {
    const QVariant statusAttribute = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
    const int status = statusAttribute.isValid() ? statusAttribute.toInt() : 0;
    const QNetworkReply::NetworkError error = reply->error();
    const QString batch = QStringLiteral("batch of ") % QString::number(flight.events.size()) %
                          QStringLiteral(" events: ");

    if (flight.tooLarge)
        return eachRetried(flight.events,
                           batch % QStringLiteral("the answer is longer than ") %
                               QString::number(flight.replyLimit) %
                               QStringLiteral(" bytes and was cut off; list only the failed "
                                              "events, with short errors"),
                           status == 0 ? std::nullopt : std::optional(status));
    if (flight.timedOut || error == QNetworkReply::TimeoutError ||
        (error == QNetworkReply::OperationCanceledError && status == 0))
        return eachRetried(flight.events, batch %
                                              QStringLiteral("timeout: no complete response "
                                                             "within ") %
                                              core::formatDuration(m_target.timeout));
    if (status == 0)
        return eachRetried(flight.events, batch %
                                              (error == QNetworkReply::SslHandshakeFailedError
                                                   ? QStringLiteral("TLS error (check --ca-file): ")
                                                   : QStringLiteral("connection error: ")) %
                                              scrub(reply->errorString()));
    if (status >= 200 && status < 300) {
        if (error != QNetworkReply::NoError)
            // Without the whole answer the failed events are unknown.
            return eachRetried(flight.events,
                               batch % QStringLiteral("incomplete response (HTTP ") %
                                   QString::number(status) % QStringLiteral("): ") %
                                   scrub(reply->errorString()),
                               status);
        return outcomesOf2xx(status, flight);
    }

    // Any other answer means for each event what it means for one.
    QString text = batch % QStringLiteral("HTTP ") % QString::number(status);
    const QString reason = QString::fromLatin1(
        reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toByteArray());
    if (!reason.isEmpty())
        text += QLatin1Char(' ') % reason;
    if (status >= 300 && status < 400)
        text += QStringLiteral(": redirect not followed");
    if (const QString body = excerpt(flight.answer); !body.isEmpty())
        text += QStringLiteral(": ") % body;
    if (classifyStatus(status, m_permanentStatuses) == PublishOutcome::Kind::Permanent) {
        QList<PublishOutcome> outcomes;
        for (const store::ClaimedEvent &event : flight.events)
            outcomes.append(PublishOutcome::permanent(event, text, status));
        return outcomes;
    }
    std::optional<core::Millis> retryAfter;
    if (const QByteArray header = reply->rawHeader(QByteArrayLiteral("Retry-After"));
        !header.isEmpty())
        retryAfter = core::parseRetryAfter(header, QDateTime::currentDateTimeUtc());
    return eachRetried(flight.events, text, status, retryAfter);
}

QList<PublishOutcome> BatchPublisher::outcomesOf2xx(int status, const InFlight &flight) const {
    const auto failures = parseBatchReply(flight.answer);
    if (!failures)
        return eachRetried(flight.events,
                           QStringLiteral("batch of ") % QString::number(flight.events.size()) %
                               QStringLiteral(" events: HTTP ") % QString::number(status) %
                               QStringLiteral(": ") % failures.errorMessage(),
                           status);
    QHash<QUuid, const BatchFailure *> failed;
    for (const BatchFailure &failure : failures.value())
        failed.insert(failure.id, &failure);

    QList<PublishOutcome> outcomes;
    outcomes.reserve(flight.events.size());
    for (const store::ClaimedEvent &event : flight.events) {
        const BatchFailure *failure = failed.take(event.id);
        if (!failure) {
            outcomes.append(PublishOutcome::delivered(event, status));
            continue;
        }
        const QString error =
            QStringLiteral("failed in a batch (HTTP ") % QString::number(status) %
            QStringLiteral("): ") %
            (failure->error.isEmpty() ? QStringLiteral("no reason given") : scrub(failure->error));
        outcomes.append(failure->permanent
                            ? PublishOutcome::permanent(event, error, status)
                            : PublishOutcome::retry(event, error, status, failure->retryAfter));
    }
    if (!failed.isEmpty())
        qCWarning(lcDispatch) << core::LogLine("batch_answer_unknown_ids")
                                     .add("count", failed.size())
                                     .add("first", core::uuidText(failed.cbegin().key()));
    return outcomes;
}

} // namespace outbox::dispatch
