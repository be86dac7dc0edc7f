#pragma once

#include <QObject>
#include <QPointer>

class QAction;
class QDockWidget;
class QMainWindow;
class QToolButton;

namespace outbox::console {

class ActionController;
class JobListModel;
class JobsPanel;
class StoreClient;

// The window's background jobs: the Jobs dock (JobsPanel over a
// JobListModel), a status-bar button that counts running jobs, "Export all
// matching…" (every event the filter matches, as JSON lines, streamed), and
// the question when the window is closed while jobs run. Bulk actions
// arrive through ActionController::bulkStarted.
class JobsController final : public QObject {
    Q_OBJECT

public:
    JobsController(QMainWindow *window, ActionController *actions);
    Q_DISABLE_COPY_MOVE(JobsController)

    JobListModel *model() const { return m_model; }
    QAction *exportAction() const { return m_export; }

    // Starts exporting the current filter's events to `path`.
    void startExport(const QString &path);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void exportMatching();
    void showPanel();
    void updateIndicator();
    void askBeforeClose();

    QMainWindow *m_window;
    ActionController *m_actions;
    QPointer<StoreClient> m_client;
    JobListModel *m_model;
    JobsPanel *m_panel;
    QDockWidget *m_dock;
    QToolButton *m_indicator;
    QAction *m_export;
    bool m_closeConfirmed = false;
    bool m_sized = false; // the dock got its first height
    bool m_asking = false;
};

} // namespace outbox::console
