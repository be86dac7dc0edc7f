#pragma once

#include "store/eventfilter.h"
#include "store/queries.h"

#include <QList>
#include <QStandardItemModel>
#include <QString>

#include <optional>

namespace outbox::console {

// The navigation tree: Pending (with Retrying and, while there are any,
// "Blocked (aggregate order)" as its first children),
// Processing (expired leases in the count text), Delivered ("~" when
// estimated) and Dead, each with namespaces and their topics below. Column 0
// is the name, column 1 the count. Each row's column-0 item carries the
// filter a view should show when it is selected.
//
// applyCounts() updates the tree in place (items matched by key, no reset),
// so expansion and selection survive every refresh.
class StatusNavModel final : public QStandardItemModel {
    Q_OBJECT

public:
    enum Role {
        KeyRole = Qt::UserRole + 1, // QString, stable across refreshes
        FilterRole,                 // store::EventFilter
        CountRole,                  // qint64
        KindRole,                   // NodeKind as int
    };
    enum class NodeKind { Status, Retrying, Blocked, Namespace, Topic };
    enum Column { NameColumn, CountColumn, ColumnCount };

    explicit StatusNavModel(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(StatusNavModel)

    void applyCounts(const store::StatusCounts &counts);
    const std::optional<store::StatusCounts> &counts() const { return m_counts; }

    QModelIndex indexForKey(const QString &key) const; // column 0; invalid when absent
    // The row that stands for `filter` (its place: status, retrying or
    // blocked, namespace, topic), or its status row while that place has no
    // row (no events there).
    QModelIndex indexFor(const store::EventFilter &filter) const;
    static store::EventFilter filterAt(const QModelIndex &index);
    static QString keyAt(const QModelIndex &index);

    static QString statusKey(core::Status status);
    static QString retryingKey();
    static QString blockedKey();
    static QString namespaceKey(core::Status status, const QString &nameSpace);
    static QString topicKey(core::Status status, const QString &nameSpace, const QString &topic);

Q_SIGNALS:
    // After every applyCounts(), whether or not a count changed: what the
    // navigator shows is this fresh.
    void countsApplied();

private:
    struct Node {
        QString key;
        NodeKind kind = NodeKind::Status;
        QString name;
        QString countText;
        QString toolTip;
        qint64 count = 0;
        store::EventFilter filter;
        QList<Node> children;
    };

    static QList<Node> buildTree(const store::StatusCounts &counts);
    void sync(QStandardItem *parent, const QList<Node> &nodes);
    void update(QStandardItem *nameItem, QStandardItem *countItem, const Node &node);
    QList<QStandardItem *> makeRow(const Node &node);

    std::optional<store::StatusCounts> m_counts;
};

} // namespace outbox::console
