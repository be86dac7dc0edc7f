#include "devtools/demo/demosession.h"

#include "devtools/demo/demoenvironment.h"
#include "devtools/demo/demopanel.h"

namespace outbox::console {

DemoSession::DemoSession(QObject *parent)
    : DemoController(parent)
    , m_environment(new DemoEnvironment(this)) {
    connect(m_environment, &DemoEnvironment::progress, this, &DemoController::progress);
    connect(m_environment, &DemoEnvironment::ready, this, &DemoController::ready);
    connect(m_environment, &DemoEnvironment::failed, this, &DemoController::failed);
    connect(m_environment, &DemoEnvironment::stopped, this, &DemoController::stopped);
}

DemoSession::~DemoSession() = default;

void DemoSession::start() {
    m_environment->start();
}

void DemoSession::stop() {
    m_environment->stop();
}

bool DemoSession::hasStopped() const {
    const DemoEnvironment::State state = m_environment->state();
    return state == DemoEnvironment::State::Idle || state == DemoEnvironment::State::Stopped;
}

core::DispatcherConfig DemoSession::dispatcherConfig() const {
    return m_environment->dispatcherConfig();
}

dispatch::PublisherFactory DemoSession::publisherFactory() const {
    return m_environment->publisherFactory();
}

QWidget *DemoSession::createPanel() {
    return new DemoPanel(m_environment);
}

DemoFactory demoFactory() {
    return [](QObject *parent) -> DemoController * { return new DemoSession(parent); };
}

} // namespace outbox::console
