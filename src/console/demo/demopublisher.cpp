#include "console/demo/demopublisher.h"

namespace outbox::console {

DemoPublisher::DemoPublisher(QUrl rejectUrl, QString poisonNamespace, QString poisonTopic,
                             QObject *parent)
    : dispatch::Publisher(parent)
    , m_rejectUrl(std::move(rejectUrl))
    , m_poisonNamespace(std::move(poisonNamespace))
    , m_poisonTopic(std::move(poisonTopic)) {
    connect(&m_main, &dispatch::Publisher::finished, this, &dispatch::Publisher::finished);
    connect(&m_reject, &dispatch::Publisher::finished, this, &dispatch::Publisher::finished);
}

DemoPublisher::~DemoPublisher() = default;

core::Result<void> DemoPublisher::configure(const core::DispatcherConfig &config) {
    if (const auto main = m_main.configure(config); !main)
        return main;
    core::DispatcherConfig reject = config;
    reject.runnerUrl = m_rejectUrl;
    return m_reject.configure(reject);
}

void DemoPublisher::publish(const store::ClaimedEvent &event) {
    if (event.topic == m_poisonTopic && event.nameSpace == m_poisonNamespace)
        m_reject.publish(event);
    else
        m_main.publish(event);
}

void DemoPublisher::abortAll() {
    m_main.abortAll();
    m_reject.abortAll();
}

int DemoPublisher::inFlight() const {
    return m_main.inFlight() + m_reject.inFlight();
}

} // namespace outbox::console
