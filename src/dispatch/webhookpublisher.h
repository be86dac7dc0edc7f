#pragma once

#include "dispatch/publisher.h"
#include "dispatch/requestpool.h"
#include "dispatch/webhookrequest.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace outbox::dispatch {

// What HttpPublisher and BatchPublisher share: the target and the permanent
// statuses a configuration names, the pool of managers sized by its
// concurrency (whose request deadline calls abortExpired()), and how a
// runner's answer is quoted in an error.
class WebhookPublisher : public Publisher {
    Q_OBJECT
public:
    explicit WebhookPublisher(QObject *parent = nullptr);

    // Refuses a configuration whose target cannot be used (a CA file
    // without a certificate) and keeps the previous one then.
    core::Result<void> configure(const core::DispatcherConfig &config) final;

    int managerCount() const { return m_pool.activeManagers(); }

    // The classification of §6: 2xx delivered; permanent statuses dead;
    // everything else a retry (3xx is a failure: redirects are not followed).
    static PublishOutcome::Kind classifyStatus(int httpStatus, const QList<int> &permanentStatuses);

protected:
    // The publisher's own settings, once the shared ones are taken.
    virtual void configureDelivery(const core::DispatcherConfig &config) = 0;
    // Each tick of the pool's deadline timer: abort the requests past it.
    virtual void abortExpired() = 0;

    // How much of an answer excerpt() reads.
    static constexpr qsizetype ExcerptBytes = 2048;

    // The start of a runner's answer as one line of at most
    // PublishOutcome::MaxErrorLength characters, secrets masked.
    QString excerpt(const QByteArray &answer) const;
    QString scrub(QString text) const { return scrubSecrets(m_target, std::move(text)); }

    RequestPool m_pool;
    WebhookTarget m_target;
    QList<int> m_permanentStatuses{410};
    bool m_configured = false;
};

} // namespace outbox::dispatch
