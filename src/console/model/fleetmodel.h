#pragma once

#include "store/fleethealth.h"

#include <QAbstractItemModel>
#include <QList>
#include <QPointer>
#include <QTimer>

#include <chrono>

namespace outbox::console {

class FleetWatcher;

// The fleet as a tree: the groups of the fleet file at the top (a database
// without a group is a top-level row of its own), their databases below,
// every level ordered worst first (store::fleetSeverity), then by name. A
// reading moves a row only when its place changes; persistent indexes (the
// view's selection and current row) follow their database. Readings that
// arrive together (fifty databases answering their first reading) are
// applied in one batch, at most every batchInterval: one re-sort, one
// layout change at most, a dataChanged per changed row.
class FleetModel final : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column {
        NameColumn,
        StateColumn,
        DueColumn,
        OldestDueColumn,
        WaitingColumn,
        DeadColumn,
        DiedColumn,
        DeliveredColumn,
        DispatchersColumn,
        PausedColumn,
        ErrorColumn,
        OwnerColumn,
        ColumnCount
    };
    enum Role {
        MemberRole = Qt::UserRole + 1, // int: the FleetWatcher index; -1 on a group row
        SeverityRole,                  // int: store::fleetSeverity of the row (a group: its worst)
        SparkRole,                     // QVariantList of qint64: deliveries per minute
        StateNameRole,                 // QString: "ok", "alert", ...
    };

    static constexpr std::chrono::milliseconds kBatchInterval{100};

    explicit FleetModel(FleetWatcher *watcher, QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(FleetModel)

    // Applies the readings that wait for the next batch now.
    void applyPending();

    // The index of a database's row (its name column); invalid when unknown.
    QModelIndex indexOfMember(int member) const;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    // A batch of readings was applied.
    void updated();

private:
    // A top-level row: a group (its members in `children`) or one database.
    struct Top {
        QString group;       // empty: a database without a group
        int member = -1;     // that database
        QList<int> children; // members of the group, in row order
    };
    void onMemberChanged(int member);
    void reorder();
    int severityOf(int member) const;
    int severityOf(const Top &top) const;
    QVariant memberData(int member, int column, int role) const;
    QVariant groupData(const Top &top, int column, int role) const;
    bool before(int a, int b) const;       // member a sorts before member b
    void sortRows(QList<Top> &rows) const; // worst first at both levels, then by name

    QPointer<FleetWatcher> m_watcher;
    QList<Top> m_top;
    QTimer m_batch;
    QList<int> m_changed; // members with readings not yet applied
};

} // namespace outbox::console
