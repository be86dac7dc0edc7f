#pragma once

#include "dispatch/httppublisher.h"

#include <QUrl>

namespace outbox::console {

// Demo mode's publisher: HTTP to the configured runner for everything except
// one topic, which goes to a second development runner that always answers
// 422, so the demo shows rows retried and then dead-lettered within a
// minute. Both legs are real HTTP (dispatch::HttpPublisher), signed alike.
class DemoPublisher final : public dispatch::Publisher {
    Q_OBJECT
public:
    DemoPublisher(QUrl rejectUrl, QString poisonNamespace, QString poisonTopic,
                  QObject *parent = nullptr);
    ~DemoPublisher() override;
    Q_DISABLE_COPY_MOVE(DemoPublisher)

    core::Result<void> configure(const core::DispatcherConfig &config) override;
    void publish(const store::ClaimedEvent &event) override;
    void abortAll() override;
    int inFlight() const override;

private:
    QUrl m_rejectUrl;
    QString m_poisonNamespace;
    QString m_poisonTopic;
    dispatch::HttpPublisher m_main;
    dispatch::HttpPublisher m_reject;
};

} // namespace outbox::console
