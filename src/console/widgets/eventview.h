#pragma once

#include "core/event.h"
#include "core/status.h"
#include "store/eventfilter.h"

#include <QList>
#include <QUuid>
#include <QWidget>

class QLabel;
class QToolButton;
class QSortFilterProxyModel;
class QTableView;

namespace outbox::console {

class ConsoleSettings;
class EventTableModel;
class StoreClient;

// One table page: the live events of one status. Sorting by age (or id,
// which is time-ordered) runs on the server through the keyset order; other
// columns sort the rows loaded so far. The header's context menu chooses
// columns; the layout is saved per status.
//
// Live refreshes never move what the operator works on: while the pointer is
// over the table or rows are selected, new rows wait behind a "N new events"
// button instead of pushing the rows down, and when the chosen event leaves
// the page (requeued, delivered) the detail stays on it instead of jumping to
// a neighbour.
class EventView final : public QWidget {
    Q_OBJECT

public:
    EventView(core::Status status, ConsoleSettings *settings, QWidget *parent = nullptr);
    ~EventView() override;
    Q_DISABLE_COPY_MOVE(EventView)

    core::Status status() const { return m_status; }
    QString viewKey() const; // "pending", ... for saved layouts

    void setClient(StoreClient *client);
    // The full filter of this view (its status included). A different filter
    // reloads from the first page; the same one only refreshes.
    void setFilter(const store::EventFilter &filter);
    const store::EventFilter &filter() const;
    void refresh();

    QList<core::OutboxEvent> selectedEvents() const;
    std::optional<core::OutboxEvent> currentEvent() const;

    EventTableModel *model() const { return m_model; }
    QTableView *table() const { return m_table; }

    void saveLayout();
    void restoreLayout();
    void resetLayout();
    // The event the operator chose (null: none), kept across refreshes.
    QUuid chosenEvent() const { return m_chosen; }
    // Chooses that event: selects its row now or once a refresh brings it.
    void selectEvent(const QUuid &id);

Q_SIGNALS:
    // A null id: nothing current.
    void currentEventChanged(const QUuid &id);
    void selectionChanged();
    void contextMenuRequested(const QPoint &globalPos);

protected:
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showColumnMenu(const QPoint &pos);
    void onHeaderClicked(int section);
    void updatePlaceholder();
    void applyDefaultColumns();
    void onCurrentRowChanged(const QModelIndex &current);
    void keepChosenRow();
    bool selectChosenRow();
    void updateHold();
    void updateNewRowsButton();
    void placeNewRowsButton();

    core::Status m_status;
    ConsoleSettings *m_settings;
    EventTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_table;
    QLabel *m_placeholder;
    QToolButton *m_newRows;
    QUuid m_chosen;
    bool m_rowsMoving = false; // the model is changing rows under the selection
    QString m_loadError;
    QByteArray m_defaultHeaderState;
};

} // namespace outbox::console
