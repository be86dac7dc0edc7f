#pragma once

#include <QApplication>
#include <QElapsedTimer>
#include <QList>
#include <QString>

class QThread;

#include <functional>

namespace outbox::consolebench {

// One event the GUI thread spent a long time on, for the stall report.
struct SlowEvent {
    double ms = 0;
    double cpuMs = 0; // GUI-thread CPU time within it
    QString what;     // "Timer -> QTimer (parent EventTableModel)"
};

// The benchmark's QApplication. It sees every event the GUI thread handles
// (notify()), which gives two things an event filter cannot:
//  - the moment a widget's paint event has been *handled* (the rows are
//    drawn), not just delivered;
//  - how long each top-level event took, so a stall can be traced to the
//    object and event type that caused it.
class BenchApplication final : public QApplication {
    Q_OBJECT

public:
    BenchApplication(int &argc, char **argv);
    ~BenchApplication() override;
    Q_DISABLE_COPY_MOVE(BenchApplication)

    // Called after a QEvent::Paint of any widget was handled.
    using PaintHook = std::function<void(QWidget *widget)>;
    void setPaintHook(PaintHook hook) { m_paintHook = std::move(hook); }

    // Records the slowest top-level events from now on (keeps `keep`).
    void startEventProfile(int keep = 8);
    QList<SlowEvent> stopEventProfile();

    // Nanoseconds on one monotonic clock for the whole run.
    qint64 now() const { return m_clock.nsecsElapsed(); }

    bool notify(QObject *receiver, QEvent *event) override;

    struct Receiver; // what the slow-event report says about a receiver

private:
    void recordSlow(qint64 nanos, qint64 cpuNanos, const Receiver &receiver, int eventType);

    QThread *m_guiThread;
    QElapsedTimer m_clock;
    PaintHook m_paintHook;
    int m_depth = 0;
    bool m_profiling = false;
    int m_keep = 8;
    QList<SlowEvent> m_slowest; // sorted, slowest first
};

} // namespace outbox::consolebench
