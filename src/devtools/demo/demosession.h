#pragma once

#include "console/widgets/democontroller.h"

namespace outbox::console {

class DemoEnvironment;

// The main window's demo (DemoController) in outbox-console-demo: a
// DemoEnvironment, and a DemoPanel for its controls.
class DemoSession final : public DemoController {
    Q_OBJECT
public:
    explicit DemoSession(QObject *parent = nullptr);
    ~DemoSession() override;
    Q_DISABLE_COPY_MOVE(DemoSession)

    void start() override;
    void stop() override;
    bool hasStopped() const override;
    core::DispatcherConfig dispatcherConfig() const override;
    dispatch::PublisherFactory publisherFactory() const override;
    QWidget *createPanel() override;

private:
    DemoEnvironment *m_environment; // child
};

// What outbox-console-demo gives its main window (MainWindowOptions::demo).
DemoFactory demoFactory();

} // namespace outbox::console
