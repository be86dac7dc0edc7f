#pragma once

#include "dispatch/publisher.h"
#include "dispatch/webhookclient.h"
#include "dispatch/webhookrequest.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace outbox::dispatch {

// What HttpPublisher and BatchPublisher share: the target and the permanent
// statuses a configuration names, the client with one connection per
// request in flight up to the configuration's concurrency, and how a
// runner's answer is quoted in an error.
class WebhookPublisher : public Publisher {
    Q_OBJECT
public:
    explicit WebhookPublisher(QObject *parent = nullptr);

    // Refuses a configuration whose target cannot be used (a CA file
    // without a certificate) and keeps the previous one then.
    core::Result<void> configure(const core::DispatcherConfig &config) final;

    int inFlight() const override { return m_inFlight; } // events, not requests
    void abortAll() override;
    // Connections open or opening (tests).
    int connections() const { return m_client.connections(); }

    // The classification of §6: 2xx delivered; permanent statuses dead;
    // everything else a retry (3xx is a failure: redirects are not followed).
    static PublishOutcome::Kind classifyStatus(int httpStatus, const QList<int> &permanentStatuses);

protected:
    // The publisher's own settings, once the shared ones are taken.
    virtual void configureDelivery(const core::DispatcherConfig &config) = 0;

    // How much of an answer excerpt() reads.
    static constexpr qsizetype ExcerptBytes = 2048;

    // The start of a runner's answer as one line of at most
    // PublishOutcome::MaxErrorLength characters, secrets masked.
    QString excerpt(const QByteArray &answer) const;
    QString scrub(QString text) const { return scrubSecrets(m_target, std::move(text)); }
    // "connection error: ...", "TLS error (check --ca-file): ...", "timeout: ...",
    // "incomplete response (HTTP n): ..." for an answer that failed in
    // transport; empty for a complete one or one cut for its length.
    QString transportError(const HttpAnswer &answer) const;

    // Posts `request` for `events` events; `done` gets the answer.
    void post(const QByteArray &request, qint64 bodyLimit, int events,
              std::function<void(HttpAnswer &)> done);

    WebhookClient m_client;
    WebhookTarget m_target;
    QList<int> m_permanentStatuses{410};
    bool m_configured = false;
    int m_inFlight = 0;
};

} // namespace outbox::dispatch
