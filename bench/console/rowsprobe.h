#pragma once

#include <QObject>

#include <functional>
#include <optional>

namespace outbox::console {
class EventView;
}

namespace outbox::consolebench {

class BenchApplication;

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

    std::optional<qint64> shownAt() const { return m_shownAt; }
    // The first paint of any widget after t0 (the window's first frame).
    std::optional<qint64> firstFrameAt() const { return m_firstFrameAt; }
    std::optional<qint64> freshAt() const;
    bool done() const { return freshAt().has_value(); }
    // Milliseconds from t0; -1 when it did not happen.
    double shownMs() const;
    double freshMs() const;
    // Ends the run before freshAt(): a failed load, with its message.
    const QString &loadError() const { return m_loadError; }

private:
    void onPaint(QWidget *widget);
    void markDirty();

    BenchApplication *m_app;
    console::EventView *m_view;
    qint64 m_t0;
    std::optional<qint64> m_shownAt;
    std::optional<qint64> m_firstFrameAt;
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
