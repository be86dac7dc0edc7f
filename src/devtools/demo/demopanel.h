#pragma once

#include <QPointer>
#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;

namespace outbox::console {

class DemoEnvironment;

// Controls for demo mode (a small dock or a box above the dispatcher panel):
// runner failure rate (%) and latency (ms), producer rate (events/s) and a
// pause switch, plus the demo's state, how many events were produced and
// where each namespace goes (the demo's routes).
// Changes go straight to the DemoEnvironment (they are thread-safe there).
class DemoPanel final : public QWidget {
    Q_OBJECT
public:
    // `demo` must outlive the panel.
    explicit DemoPanel(DemoEnvironment *demo, QWidget *parent = nullptr);
    ~DemoPanel() override;
    Q_DISABLE_COPY_MOVE(DemoPanel)

private:
    void syncFromDemo();
    void updateStatus();
    void openFleet();

    DemoEnvironment *m_demo = nullptr;
    QSpinBox *m_failRate = nullptr; // percent
    QSpinBox *m_latency = nullptr;  // ms
    QDoubleSpinBox *m_rate = nullptr;
    QCheckBox *m_paused = nullptr;
    QLabel *m_status = nullptr;
    QLabel *m_routes = nullptr; // where each namespace goes
    QPushButton *m_fleetButton = nullptr;
    QPointer<QWidget> m_fleet; // the demo's fleet window, while open
    bool m_fleetShown = false;
};

} // namespace outbox::console
