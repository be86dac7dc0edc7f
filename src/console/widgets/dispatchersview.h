#pragma once

#include "console/model/eventexplanation.h"
#include "console/model/registrywatcher.h"
#include "core/conninfo.h"

#include <QWidget>

class QAbstractItemView;
class QDockWidget;
class QLabel;
class QMainWindow;
class QTableWidget;

namespace outbox::console {

class DestinationsTable;
class DetailPane;

// Who is delivering and what is paused: the "Dispatchers" dock (a table of
// the registry, alive ones first, and the pauses with who, when and why),
// Pause/Resume in the navigator's context menu on a namespace or topic, and
// the registry's part of the detail pane's "why is this not delivered?".
// Reads through a RegistryWatcher (its own thread and connection).
class DispatchersView final : public QWidget {
    Q_OBJECT
public:
    // Adds its dock to `window` (hidden; the View menu shows it), a context
    // menu to `navigator` (a view of StatusNavModel), and keeps the registry
    // part of `*activity` (the window's) current in `detail`.
    DispatchersView(QMainWindow *window, QAbstractItemView *navigator, DispatchActivity *activity,
                    DetailPane *detail);
    Q_DISABLE_COPY_MOVE(DispatchersView)

    void setConnInfo(const core::ConnInfo &info);

Q_SIGNALS:
    // The routing dispatchers' destinations whose circuit is open, "name:
    // reason" each, on every registry read (AlertMonitor::setOpenCircuits).
    void openCircuitsChanged(const QStringList &circuits);

private:
    void showSnapshot(const RegistrySnapshot &snapshot);
    // Gives the dock the height of a few dispatchers and the width of every
    // column, once after it is shown (then the user's sizes stand).
    void fitDock();
    void showNavigatorMenu(const QPoint &pos);
    void askPause(const QString &nameSpace, const std::optional<QString> &topic);
    // Why, asked of the operator for pausing `what`; none when cancelled or
    // empty (said in the status bar).
    std::optional<QString> askReason(const QString &what);

    QMainWindow *m_window;
    QDockWidget *m_dock = nullptr;
    bool m_fitPending = false;
    QAbstractItemView *m_navigator;
    DispatchActivity *m_activity;
    DetailPane *m_detail;
    RegistryWatcher m_watcher;
    QTableWidget *m_table;
    DestinationsTable *m_destinations;
    QLabel *m_summary;
    QLabel *m_pauses;
    std::optional<RegistrySnapshot> m_snapshot;
};

} // namespace outbox::console
