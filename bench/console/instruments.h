#pragma once

#include "core/result.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <optional>
#include <vector>

namespace outbox::console {
class EventView;
}

// What the console benchmark watches the GUI thread with.
namespace outbox::consolebench {

// The benchmark's QApplication. It sees every event the GUI thread handles
// (notify()), which gives what an event filter cannot: the moment a widget's
// paint event has been *handled* (the rows are drawn), not just delivered.
class BenchApplication final : public QApplication {
    Q_OBJECT

public:
    BenchApplication(int &argc, char **argv);
    Q_DISABLE_COPY_MOVE(BenchApplication)

    // Called after a QEvent::Paint of any widget was handled.
    using PaintHook = std::function<void(QWidget *widget)>;
    void setPaintHook(PaintHook hook) { m_paintHook = std::move(hook); }

    // Nanoseconds on one monotonic clock for the whole run.
    qint64 now() const { return m_clock.nsecsElapsed(); }

    bool notify(QObject *receiver, QEvent *event) override;

private:
    QElapsedTimer m_clock;
    PaintHook m_paintHook;
};

// A 1 ms timer on the GUI thread: the gap between two ticks is how long
// the event loop could not run a timer, i.e. how long the GUI was frozen.
class StallMeter final : public QObject {
    Q_OBJECT

public:
    explicit StallMeter(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(StallMeter)

    void start();
    void stop();
    // ticks, max_gap_ms, p99_gap_ms, p50_gap_ms, and the gaps over 16 ms (a
    // dropped frame at 60 Hz) and over 50 ms: gaps_over_16ms, gaps_over_50ms.
    QJsonObject figures() const;

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    std::vector<qint64> m_gaps; // nanoseconds
};

// Watches one event view from a start time t0 and records when the user
// sees its rows:
//  - shownAt: the first paint of the table's viewport with rows in it (the
//    rows may still be the ones from before, e.g. when coming back to a page);
//  - freshAt: the view shows data read after t0: the model's refreshed()
//    came, and when that refresh changed rows, the repaint after it was
//    drawn. A refresh that changed nothing needs no repaint; then it is the
//    moment refreshed() arrived.
// Times are BenchApplication::now() nanoseconds, taken after the paint event
// was handled (the pixels are in the backing store).
class RowsProbe final : public QObject {
    Q_OBJECT

public:
    RowsProbe(BenchApplication *app, console::EventView *view, qint64 t0);
    ~RowsProbe() override;
    Q_DISABLE_COPY_MOVE(RowsProbe)

    // Runs the event loop until the rows are on screen (fresh: freshAt(),
    // else shownAt) and returns that time in milliseconds from t0. Fails,
    // naming `what`, on a failed load or when nothing came within timeoutMs.
    core::Result<double> wait(bool fresh, const QString &what, int timeoutMs);

private:
    std::optional<qint64> freshAt() const;
    double msFromT0(std::optional<qint64> at) const { return at ? double(*at - m_t0) / 1e6 : -1.0; }
    void onPaint(QWidget *widget);

    BenchApplication *m_app;
    console::EventView *m_view;
    qint64 m_t0;
    std::optional<qint64> m_shownAt;
    std::optional<qint64> m_refreshedAt;
    std::optional<qint64> m_paintAfterRefresh;
    bool m_dirty = false;          // rows changed since t0 (before refreshed)
    bool m_dirtyAtRefresh = false; // ... as of the first refreshed()
    QString m_loadError;
};

// Runs the event loop until `done` or `timeoutMs`; true when done.
bool waitUntil(const std::function<bool()> &done, int timeoutMs);
// Runs the event loop for `ms` milliseconds.
void runFor(int ms);

} // namespace outbox::consolebench
