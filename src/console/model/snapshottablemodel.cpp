#include "console/model/snapshottablemodel.h"

namespace outbox::console {

SnapshotTableModel::SnapshotTableModel(QStringList columnTitles, QObject *parent)
    : QAbstractTableModel(parent)
    , m_titles(std::move(columnTitles)) {}

int SnapshotTableModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_titles.size());
}

QVariant SnapshotTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 &&
        section < m_titles.size()) {
        return m_titles.at(section);
    }
    return QAbstractTableModel::headerData(section, orientation, role);
}

RowSignals SnapshotTableModel::rowSignals() {
    RowSignals notify;
    const QModelIndex root;
    notify.beginRemove = [this, root](int f, int l) { beginRemoveRows(root, f, l); };
    notify.endRemove = [this] { endRemoveRows(); };
    notify.beginInsert = [this, root](int f, int l) { beginInsertRows(root, f, l); };
    notify.endInsert = [this] { endInsertRows(); };
    notify.beginMove = [this, root](int from, int to) {
        beginMoveRows(root, from, from, root, to);
    };
    notify.endMove = [this] { endMoveRows(); };
    notify.changed = [this](int row) {
        Q_EMIT dataChanged(index(row, 0), index(row, columnCount() - 1));
    };
    return notify;
}

} // namespace outbox::console
