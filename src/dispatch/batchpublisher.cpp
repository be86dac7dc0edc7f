#include "dispatch/batchpublisher.h"

#include "core/logline.h"
#include "core/retrypolicy.h"
#include "core/uuidtext.h"
#include "core/uuidv7.h"
#include "dispatch/logging.h"

#include <QDateTime>
#include <QElapsedTimer>

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

void BatchPublisher::configureDelivery(const core::DispatcherConfig &config) {
    m_maxEvents = std::max(config.batchMaxEvents, 1);
    m_maxBytes = std::max<qint64>(config.batchMaxBytes, 1);
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
    HttpHeaders headers = signedHeaders(m_target, webhookId, batch.body);
    headers.append({kBatchHeader, QByteArray::number(batch.events.size())});
    const int count = int(batch.events.size());
    const qint64 replyLimit = ReplyBaseBytes + ReplyBytesPerEvent * count;
    QElapsedTimer timer;
    timer.start();
    post(httpRequest(m_target, headers, batch.body), replyLimit, count,
         [this, events = std::move(batch.events), replyLimit, timer](HttpAnswer &answer) {
             const auto duration = std::chrono::microseconds(timer.nsecsElapsed() / 1000);
             for (PublishOutcome &outcome : outcomesFor(answer, events, replyLimit)) {
                 outcome.duration = duration;
                 Q_EMIT finished(outcome);
             }
         });
}

QList<PublishOutcome> BatchPublisher::outcomesFor(const HttpAnswer &answer,
                                                  const QList<store::ClaimedEvent> &events,
                                                  qint64 replyLimit) const {
    const int status = answer.status;
    const QString batch =
        QStringLiteral("batch of ") % QString::number(events.size()) % QStringLiteral(" events: ");
    if (answer.failure == HttpAnswer::Failure::TooLong)
        return eachRetried(events,
                           batch % QStringLiteral("the answer is longer than ") %
                               QString::number(replyLimit) %
                               QStringLiteral(" bytes and was cut off; list only the failed "
                                              "events, with short errors"),
                           status);
    if (const QString error = transportError(answer); !error.isEmpty())
        // Without the whole answer the failed events are unknown.
        return eachRetried(events, batch % error,
                           status == 0 ? std::nullopt : std::optional<int>(status));
    if (status >= 200 && status < 300)
        return outcomesOf2xx(answer, events);

    // Any other answer means for each event what it means for one.
    QString text = batch % QStringLiteral("HTTP ") % QString::number(status);
    if (!answer.reason.isEmpty())
        text += QLatin1Char(' ') % QString::fromLatin1(answer.reason);
    if (status >= 300 && status < 400)
        text += QStringLiteral(": redirect not followed");
    if (const QString body = excerpt(answer.body); !body.isEmpty())
        text += QStringLiteral(": ") % body;
    if (classifyStatus(status, m_permanentStatuses) == PublishOutcome::Kind::Permanent) {
        QList<PublishOutcome> outcomes;
        for (const store::ClaimedEvent &event : events)
            outcomes.append(PublishOutcome::permanent(event, text, status));
        return outcomes;
    }
    std::optional<core::Millis> retryAfter;
    if (const QByteArray header = answer.header("retry-after"); !header.isEmpty())
        retryAfter = core::parseRetryAfter(header, QDateTime::currentDateTimeUtc());
    return eachRetried(events, text, status, retryAfter);
}

QList<PublishOutcome>
BatchPublisher::outcomesOf2xx(const HttpAnswer &answer,
                              const QList<store::ClaimedEvent> &events) const {
    const int status = answer.status;
    const auto failures = parseBatchReply(answer.body);
    if (!failures)
        return eachRetried(events,
                           QStringLiteral("batch of ") % QString::number(events.size()) %
                               QStringLiteral(" events: HTTP ") % QString::number(status) %
                               QStringLiteral(": ") % failures.errorMessage(),
                           status);
    QHash<QUuid, const BatchFailure *> failed;
    for (const BatchFailure &failure : failures.value())
        failed.insert(failure.id, &failure);

    QList<PublishOutcome> outcomes;
    outcomes.reserve(events.size());
    for (const store::ClaimedEvent &event : events) {
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
