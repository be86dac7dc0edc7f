#pragma once

#include "core/event.h"
#include "core/status.h"
#include "store/eventfilter.h"

#include <QList>
#include <QUuid>
#include <QWidget>

class QLabel;
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

Q_SIGNALS:
    // A null id: nothing current.
    void currentEventChanged(const QUuid &id);
    void selectionChanged();
    void contextMenuRequested(const QPoint &globalPos);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void showColumnMenu(const QPoint &pos);
    void onHeaderClicked(int section);
    void updatePlaceholder();
    void applyDefaultColumns();

    core::Status m_status;
    ConsoleSettings *m_settings;
    EventTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_table;
    QLabel *m_placeholder;
    QString m_loadError;
    QByteArray m_defaultHeaderState;
};

} // namespace outbox::console
