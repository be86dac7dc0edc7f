#pragma once

#include "store/eventfilter.h"

#include <QWidget>

class QLabel;
class QModelIndex;
class QTableView;

namespace outbox::console {

class ErrorGroupModel;
class StoreClient;

// "What is failing": the last errors of the events in view, grouped by
// normalised signature (ids and numbers stripped) with counts, largest
// first. Clicking a group asks for the events to be narrowed to it.
class ErrorGroupsView final : public QWidget {
    Q_OBJECT

public:
    explicit ErrorGroupsView(QWidget *parent = nullptr);
    ~ErrorGroupsView() override;
    Q_DISABLE_COPY_MOVE(ErrorGroupsView)

    void setClient(StoreClient *client);
    // The events to group (the current page's filter without its error
    // signature); reloads.
    void setFilter(const store::EventFilter &filter);
    void refresh();
    // Marks the group that currently filters the events (empty: none).
    void setActiveSignature(const QString &signature);

    ErrorGroupModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }

Q_SIGNALS:
    void groupActivated(const QString &signature);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void activate(const QModelIndex &index);
    static bool isGrouped(const store::EventFilter &filter);
    void updateCaption();

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
