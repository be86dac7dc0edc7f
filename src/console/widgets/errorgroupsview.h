#pragma once

#include "store/eventfilter.h"

#include <QWidget>

class QLabel;
class QModelIndex;
class QTableView;

namespace outbox::console {

class ErrorGroupModel;
class FilterState;
class StoreClient;

// "What is failing": the last errors of the events in view (the console's
// filter without its error group), grouped by normalised signature (ids and
// numbers stripped) with counts, largest first. Clicking a group narrows the
// console's filter to it, clicking it again widens it; the group that
// narrows it is marked. Both come and go through the FilterState: a new set
// of events is grouped once, a new group chosen among them is only marked.
class ErrorGroupsView final : public QWidget {
    Q_OBJECT

public:
    explicit ErrorGroupsView(FilterState *state, QWidget *parent = nullptr);
    ~ErrorGroupsView() override;
    Q_DISABLE_COPY_MOVE(ErrorGroupsView)

    void setClient(StoreClient *client);
    void refresh();

    ErrorGroupModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void activate(const QModelIndex &index);
    void showFilter(const store::EventFilter &filter);
    // Marks the group that currently filters the events (empty: none).
    void setActiveSignature(const QString &signature);
    static bool isGrouped(const store::EventFilter &filter);
    void updateCaption();

    FilterState *m_state;

    StoreClient *m_client = nullptr;
    ErrorGroupModel *m_model;
    QTableView *m_view;
    QLabel *m_caption;
    store::EventFilter m_filter;
    QString m_active;
    quint64 m_requestId = 0;
    QString m_lastError;
};

} // namespace outbox::console
