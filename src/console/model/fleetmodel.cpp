#include "console/model/fleetmodel.h"

#include "console/model/consoletypes.h"
#include "console/model/fleetwatcher.h"

#include <QColor>
#include <QLocale>

#include <algorithm>
#include <utility>

namespace outbox::console {

namespace {

// internalId of a database row under a group: the group's top row + 1; of a
// top-level row: 0.
constexpr quintptr kTopLevel = 0;

QColor stateColour(store::FleetState state) {
    switch (state) {
    case store::FleetState::Alert:
        return QColor(0xc6, 0x28, 0x28);
    case store::FleetState::Unreachable:
        return QColor(0x8e, 0x24, 0xaa);
    case store::FleetState::Warning:
        return QColor(0xb2, 0x6a, 0x00);
    case store::FleetState::Pending:
        return QColor(0x75, 0x75, 0x75);
    case store::FleetState::Ok:
        return QColor(0x2e, 0x7d, 0x32);
    }
    return {};
}

QString stateTitle(store::FleetState state) {
    switch (state) {
    case store::FleetState::Alert:
        return FleetModel::tr("Alert");
    case store::FleetState::Unreachable:
        return FleetModel::tr("Unreachable");
    case store::FleetState::Warning:
        return FleetModel::tr("Warning");
    case store::FleetState::Pending:
        return FleetModel::tr("Pending");
    case store::FleetState::Ok:
        return FleetModel::tr("OK");
    }
    return {};
}

} // namespace

FleetModel::FleetModel(FleetWatcher *watcher, QObject *parent)
    : QAbstractItemModel(parent)
    , m_watcher(watcher) {
    for (int i = 0; i < watcher->size(); ++i) {
        const QString &group = watcher->member(i).entry.group;
        if (group.isEmpty()) {
            m_top.append(Top{{}, i, {}});
            continue;
        }
        auto found = std::find_if(m_top.begin(), m_top.end(),
                                  [&](const Top &t) { return t.member < 0 && t.group == group; });
        if (found == m_top.end()) {
            m_top.append(Top{group, -1, {i}});
        } else {
            found->children.append(i);
        }
    }
    sortRows(m_top); // the first order, before any view sees it
    m_batch.setSingleShot(true);
    m_batch.setInterval(kBatchInterval);
    connect(&m_batch, &QTimer::timeout, this, &FleetModel::applyPending);
    connect(watcher, &FleetWatcher::memberChanged, this, &FleetModel::onMemberChanged);
}

int FleetModel::severityOf(int member) const {
    return store::fleetSeverity(m_watcher->member(member).state);
}

int FleetModel::severityOf(const Top &top) const {
    if (top.member >= 0) {
        return severityOf(top.member);
    }
    int worst = 0;
    for (int m : top.children) {
        worst = std::max(worst, severityOf(m));
    }
    return worst;
}

void FleetModel::sortRows(QList<Top> &rows) const {
    for (Top &t : rows) {
        std::stable_sort(t.children.begin(), t.children.end(),
                         [this](int a, int b) { return before(a, b); });
    }
    std::stable_sort(rows.begin(), rows.end(), [this](const Top &a, const Top &b) {
        const int sa = severityOf(a), sb = severityOf(b);
        if (sa != sb) {
            return sa > sb;
        }
        const QString na = a.member >= 0 ? m_watcher->member(a.member).entry.name : a.group;
        const QString nb = b.member >= 0 ? m_watcher->member(b.member).entry.name : b.group;
        return na.localeAwareCompare(nb) < 0;
    });
}

bool FleetModel::before(int a, int b) const {
    const int sa = severityOf(a), sb = severityOf(b);
    if (sa != sb) {
        return sa > sb;
    }
    return m_watcher->member(a).entry.name.localeAwareCompare(m_watcher->member(b).entry.name) < 0;
}

QModelIndex FleetModel::indexOfMember(int member) const {
    for (int r = 0; r < m_top.size(); ++r) {
        if (m_top[r].member == member) {
            return createIndex(r, 0, kTopLevel);
        }
        const int c = int(m_top[r].children.indexOf(member));
        if (c >= 0) {
            return createIndex(c, 0, quintptr(r + 1));
        }
    }
    return {};
}

void FleetModel::onMemberChanged(int member) {
    if (!m_changed.contains(member)) {
        m_changed.append(member);
    }
    if (!m_batch.isActive()) {
        m_batch.start();
    }
}

void FleetModel::applyPending() {
    m_batch.stop();
    if (m_changed.isEmpty()) {
        return;
    }
    const QList<int> changed = std::exchange(m_changed, {});
    reorder();
    QList<int> groups; // top rows of groups whose worst state may have changed
    for (int member : changed) {
        const QModelIndex at = indexOfMember(member);
        if (!at.isValid()) {
            continue;
        }
        Q_EMIT dataChanged(at, at.siblingAtColumn(ColumnCount - 1));
        if (at.parent().isValid() && !groups.contains(at.parent().row())) {
            groups.append(at.parent().row());
        }
    }
    for (int row : std::as_const(groups)) {
        Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
    }
    Q_EMIT updated();
}

void FleetModel::reorder() {
    QList<Top> sorted = m_top;
    sortRows(sorted);
    const auto same = [](const Top &a, const Top &b) {
        return a.member == b.member && a.group == b.group && a.children == b.children;
    };
    if (std::equal(sorted.begin(), sorted.end(), m_top.begin(), m_top.end(), same)) {
        return;
    }
    // A keyed move: every persistent index follows its database or group.
    Q_EMIT layoutAboutToBeChanged();
    const QModelIndexList before = persistentIndexList();
    QList<int> members;    // what each persistent index points at: a member,
    QList<QString> groups; // or a group row (member -1)
    for (const QModelIndex &i : before) {
        const Top &top = m_top[i.internalId() == kTopLevel ? i.row() : int(i.internalId()) - 1];
        if (i.internalId() == kTopLevel) {
            members << top.member;
            groups << top.group;
        } else {
            members << top.children[i.row()];
            groups << QString();
        }
    }
    m_top = sorted;
    QModelIndexList after;
    for (int k = 0; k < before.size(); ++k) {
        QModelIndex moved;
        if (members[k] >= 0) {
            moved = indexOfMember(members[k]);
        } else {
            for (int r = 0; r < m_top.size(); ++r) {
                if (m_top[r].member < 0 && m_top[r].group == groups[k]) {
                    moved = createIndex(r, 0, kTopLevel);
                }
            }
        }
        after << (moved.isValid() ? moved.siblingAtColumn(before[k].column()) : QModelIndex());
    }
    changePersistentIndexList(before, after);
    Q_EMIT layoutChanged();
}

QModelIndex FleetModel::index(int row, int column, const QModelIndex &parent) const {
    if (!hasIndex(row, column, parent)) {
        return {};
    }
    if (!parent.isValid()) {
        return createIndex(row, column, kTopLevel);
    }
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex FleetModel::parent(const QModelIndex &child) const {
    if (!child.isValid() || child.internalId() == kTopLevel) {
        return {};
    }
    return createIndex(int(child.internalId()) - 1, 0, kTopLevel);
}

int FleetModel::rowCount(const QModelIndex &parent) const {
    if (!parent.isValid()) {
        return int(m_top.size());
    }
    if (parent.column() != 0 || parent.internalId() != kTopLevel) {
        return 0;
    }
    return int(m_top[parent.row()].children.size());
}

int FleetModel::columnCount(const QModelIndex &) const {
    return ColumnCount;
}

QVariant FleetModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
    case NameColumn:
        return tr("Database");
    case StateColumn:
        return tr("State");
    case DueColumn:
        return tr("Due");
    case OldestDueColumn:
        return tr("Oldest due");
    case WaitingColumn:
        return tr("Waiting");
    case DeadColumn:
        return tr("Dead");
    case DiedColumn:
        return tr("Died 1 h");
    case DeliveredColumn:
        return tr("Delivered/min");
    case DispatchersColumn:
        return tr("Dispatchers");
    case PausedColumn:
        return tr("Paused");
    case ErrorColumn:
        return tr("Top error");
    case OwnerColumn:
        return tr("Owner");
    default:
        return {};
    }
}

QVariant FleetModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !m_watcher) {
        return {};
    }
    if (index.internalId() != kTopLevel) {
        const Top &top = m_top[int(index.internalId()) - 1];
        return memberData(top.children[index.row()], index.column(), role);
    }
    const Top &top = m_top[index.row()];
    if (top.member >= 0) {
        return memberData(top.member, index.column(), role);
    }
    return groupData(top, index.column(), role);
}

QVariant FleetModel::groupData(const Top &top, int column, int role) const {
    const auto worst = static_cast<store::FleetState>(severityOf(top));
    switch (role) {
    case MemberRole:
        return -1;
    case SeverityRole:
        return severityOf(top);
    case StateNameRole:
        return store::fleetStateName(worst);
    case Qt::DisplayRole:
        if (column == NameColumn) {
            return tr("%1 (%2)").arg(top.group).arg(top.children.size());
        }
        if (column == StateColumn) {
            int bad = 0;
            for (int m : top.children) {
                bad += severityOf(m) >= store::fleetSeverity(store::FleetState::Warning) ? 1 : 0;
            }
            return bad == 0 ? stateTitle(worst)
                            : tr("%1: %2 of %3 need a look")
                                  .arg(stateTitle(worst))
                                  .arg(bad)
                                  .arg(top.children.size());
        }
        return {};
    case Qt::ForegroundRole:
        return column == StateColumn ? QVariant(stateColour(worst)) : QVariant();
    default:
        return {};
    }
}

QVariant FleetModel::memberData(int member, int column, int role) const {
    const FleetMember &m = m_watcher->member(member);
    const auto *s =
        m.snapshot && m.state != store::FleetState::Unreachable ? &*m.snapshot : nullptr;
    switch (role) {
    case MemberRole:
        return member;
    case SeverityRole:
        return store::fleetSeverity(m.state);
    case StateNameRole:
        return store::fleetStateName(m.state);
    case SparkRole: {
        QVariantList points;
        if (s) {
            for (qint64 v : s->deliveredPerMinute) {
                points << v;
            }
        }
        return points;
    }
    case Qt::ForegroundRole:
        return column == StateColumn ? QVariant(stateColour(m.state)) : QVariant();
    case Qt::TextAlignmentRole:
        if (column >= DueColumn && column <= DiedColumn) {
            return int(Qt::AlignRight | Qt::AlignVCenter);
        }
        return {};
    case Qt::ToolTipRole:
        if (column == NameColumn) {
            return m.entry.target.redacted();
        }
        if (column == StateColumn) {
            return m.reasons.join(QLatin1Char('\n'));
        }
        if (column == ErrorColumn && s && s->topError) {
            return s->topError->example;
        }
        if ((column == DueColumn || column == WaitingColumn || column == DeadColumn) && s) {
            return tr("~ marks an estimate: the count stops after the first entries and "
                      "takes the planner's figure beyond.");
        }
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (column) {
    case NameColumn:
        return m.entry.name;
    case StateColumn:
        return m.reasons.isEmpty()
                   ? stateTitle(m.state)
                   : stateTitle(m.state) + QLatin1String(": ") + firstLine(m.reasons.first(), 120);
    case OwnerColumn:
        return m.entry.owner;
    default:
        break;
    }
    if (!s) {
        return {};
    }
    switch (column) {
    case DueColumn:
        return store::fleetCountText(s->due);
    case OldestDueColumn:
        return s->oldestDueAt.isValid() ? store::fleetSpan(s->oldestDueAgeSeconds()) : QString();
    case WaitingColumn:
        return store::fleetCountText(s->waiting);
    case DeadColumn:
        return store::fleetCountText(s->dead);
    case DiedColumn:
        return s->historyUnsupported ? tr("n/a") : QLocale().toString(s->diedLastHour);
    case DeliveredColumn:
        return s->deliveredPerMinute.isEmpty() ? QString()
                                               : QLocale().toString(s->deliveredPerMinute.last());
    case DispatchersColumn:
        return s->dispatchersGone > 0
                   ? tr("%1 alive, %2 gone").arg(s->dispatchersAlive).arg(s->dispatchersGone)
                   : tr("%1 alive").arg(s->dispatchersAlive);
    case PausedColumn:
        return s->pausedNamespaces.join(QLatin1String(", "));
    case ErrorColumn:
        if (!s->topError) {
            return QString();
        }
        return s->topErrorSampled ? tr("%1 (%2, newest sampled)")
                                        .arg(firstLine(s->topError->signature, 80))
                                        .arg(s->topError->count)
                                  : tr("%1 (%2)")
                                        .arg(firstLine(s->topError->signature, 80))
                                        .arg(s->topError->count);
    default:
        return {};
    }
}

} // namespace outbox::console
