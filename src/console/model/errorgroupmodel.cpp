#include "console/model/errorgroupmodel.h"

namespace outbox::console {

ErrorGroupModel::ErrorGroupModel(QObject *parent)
    : SnapshotTableModel({tr("Error"), tr("Events"), tr("Latest")}, parent) {
    Q_ASSERT(columnCount() == ColumnCount);
}

void ErrorGroupModel::applySnapshot(const ErrorGroupsResult &result) {
    const bool filterChanged = !(result.filter == m_filter);
    m_serverTime = result.serverTime;
    m_summary = result.set;
    m_summary.groups.clear(); // they are m_groups
    if (filterChanged) {
        // Other events entirely: the same signature means a different group.
        beginResetModel();
        m_filter = result.filter;
        m_groups = result.set.groups;
        endResetModel();
        return;
    }
    applyRows(
        m_groups, result.set.groups, [](const store::ErrorGroup &g) { return g.signature; },
        [](const store::ErrorGroup &a, const store::ErrorGroup &b) {
            return a.count == b.count && a.latest == b.latest && a.example == b.example;
        });
    // "3m ago" moves on with the server clock even when nothing else changed.
    if (!m_groups.isEmpty()) {
        Q_EMIT dataChanged(index(0, LatestColumn), index(int(m_groups.size()) - 1, LatestColumn),
                           {Qt::DisplayRole});
    }
}

void ErrorGroupModel::clear() {
    beginResetModel();
    m_groups.clear();
    m_filter = {};
    m_summary = {};
    endResetModel();
}

int ErrorGroupModel::rowOf(const QString &signature) const {
    for (qsizetype i = 0; i < m_groups.size(); ++i) {
        if (m_groups.at(i).signature == signature) {
            return int(i);
        }
    }
    return -1;
}

qint64 ErrorGroupModel::totalCount() const {
    qint64 total = 0;
    for (const auto &group : m_groups) {
        total += group.count;
    }
    return total;
}

int ErrorGroupModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_groups.size());
}

QVariant ErrorGroupModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const store::ErrorGroup &group = m_groups.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case SignatureColumn:
            return firstLine(group.signature, 200);
        case CountColumn:
            return formatCount(group.count);
        case LatestColumn:
            return formatRelativeTime(group.latest, m_serverTime);
        default:
            return {};
        }
    case Qt::ToolTipRole:
        if (index.column() == LatestColumn) {
            return formatAbsoluteTime(group.latest);
        }
        return tr("Example:\n%1").arg(group.example.left(2000));
    case Qt::TextAlignmentRole:
        if (index.column() == CountColumn) {
            return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
        }
        return {};
    case SignatureRole:
        return group.signature;
    case FilterRole: {
        store::EventFilter filter = m_filter;
        filter.errorSignature = group.signature;
        return QVariant::fromValue(filter);
    }
    case CountRole:
        return group.count;
    case ExampleRole:
        return group.example;
    default:
        return {};
    }
}

} // namespace outbox::console
