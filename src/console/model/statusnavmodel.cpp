#include "console/model/statusnavmodel.h"

#include "console/model/consoletypes.h"

#include <QLocale>
#include <QMap>
#include <QSet>

namespace outbox::console {

namespace {

const QChar kSep(0x1f); // unit separator: cannot clash with names in keys

qint64 countFor(const store::TopicCount &t, core::Status status) {
    switch (status) {
    case core::Status::Pending:
        return t.pending;
    case core::Status::Processing:
        return t.processing;
    case core::Status::Dead:
        return t.dead;
    case core::Status::Delivered:
        return 0; // not broken down: the delivered set is huge
    }
    return 0;
}

QString statusLabel(core::Status status) {
    switch (status) {
    case core::Status::Pending:
        return StatusNavModel::tr("Pending");
    case core::Status::Processing:
        return StatusNavModel::tr("Processing");
    case core::Status::Delivered:
        return StatusNavModel::tr("Delivered");
    case core::Status::Dead:
        return StatusNavModel::tr("Dead");
    }
    return {};
}

} // namespace

StatusNavModel::StatusNavModel(QObject *parent)
    : QStandardItemModel(0, ColumnCount, parent) {
    setHorizontalHeaderLabels({tr("Status"), tr("Events")});
    store::StatusCounts empty;
    sync(invisibleRootItem(), buildTree(empty));
}

QString StatusNavModel::statusKey(core::Status status) {
    return core::statusName(status);
}

QString StatusNavModel::retryingKey() {
    return statusKey(core::Status::Pending) + kSep + QStringLiteral("retrying");
}

QString StatusNavModel::blockedKey() {
    return statusKey(core::Status::Pending) + kSep + QStringLiteral("blocked");
}

QString StatusNavModel::namespaceKey(core::Status status, const QString &nameSpace) {
    return statusKey(status) + kSep + QStringLiteral("ns") + kSep + nameSpace;
}

QString StatusNavModel::topicKey(core::Status status, const QString &nameSpace,
                                 const QString &topic) {
    return namespaceKey(status, nameSpace) + kSep + QStringLiteral("topic") + kSep + topic;
}

QList<StatusNavModel::Node> StatusNavModel::buildTree(const store::StatusCounts &counts) {
    // namespace -> topic -> row, sorted by name
    QMap<QString, QMap<QString, store::TopicCount>> byNamespace;
    for (const auto &t : counts.topics) {
        byNamespace[t.nameSpace][t.topic] = t;
    }

    // Per-topic counts are an aggregate over every live and dead row, rerun
    // only now and then on a large table (store::LiveCounts).
    const QString staleTip =
        counts.topicsEstimated
            ? tr("Counted at %1; events have changed since (counted again shortly)")
                  .arg(QLocale().toString(counts.topicsAt.toLocalTime(), QLocale::ShortFormat))
            : QString();
    auto namespaceNodes = [&](core::Status status) {
        QList<Node> result;
        for (auto ns = byNamespace.cbegin(); ns != byNamespace.cend(); ++ns) {
            Node nsNode;
            nsNode.key = namespaceKey(status, ns.key());
            nsNode.kind = NodeKind::Namespace;
            nsNode.name = ns.key();
            nsNode.filter.status = status;
            nsNode.filter.nameSpace = ns.key();
            for (auto topic = ns->cbegin(); topic != ns->cend(); ++topic) {
                const qint64 n = countFor(topic.value(), status);
                if (n <= 0) {
                    continue;
                }
                Node topicNode;
                topicNode.key = topicKey(status, ns.key(), topic.key());
                topicNode.kind = NodeKind::Topic;
                topicNode.name = topic.key();
                topicNode.count = n;
                topicNode.countText = formatCount(n, counts.topicsEstimated);
                topicNode.toolTip = staleTip;
                topicNode.filter = nsNode.filter;
                topicNode.filter.topic = topic.key();
                nsNode.count += n;
                nsNode.children.append(topicNode);
            }
            if (nsNode.count > 0) {
                nsNode.countText = formatCount(nsNode.count, counts.topicsEstimated);
                nsNode.toolTip = staleTip;
                result.append(nsNode);
            }
        }
        return result;
    };

    auto statusNode = [](core::Status status, qint64 count) {
        Node node;
        node.key = statusKey(status);
        node.kind = NodeKind::Status;
        node.name = statusLabel(status);
        node.count = count;
        node.countText = formatCount(count);
        node.filter.status = status;
        return node;
    };

    Node pending = statusNode(core::Status::Pending, counts.pending + counts.retrying);
    pending.toolTip = tr("%1 waiting for a first attempt, %2 retrying after a failure")
                          .arg(formatCount(counts.pending), formatCount(counts.retrying));
    if (counts.oldestPendingAt.isValid() && counts.serverTime.isValid()) {
        pending.toolTip += QLatin1Char('\n') +
                           tr("Oldest created %1")
                               .arg(formatRelativeTime(counts.oldestPendingAt, counts.serverTime));
    }
    Node retrying;
    retrying.key = retryingKey();
    retrying.kind = NodeKind::Retrying;
    retrying.name = tr("Retrying");
    retrying.count = counts.retrying;
    retrying.countText = formatCount(counts.retrying);
    retrying.toolTip = tr("Pending events that failed at least once");
    retrying.filter.status = core::Status::Pending;
    retrying.filter.retrying = true;
    pending.children.append(retrying);
    // Counted with the breakdown (store::LiveCounts): estimated like it.
    // Shown only while there are some, where aggregates are in use.
    Node blocked;
    blocked.key = blockedKey();
    blocked.kind = NodeKind::Blocked;
    blocked.name = tr("Blocked (aggregate order)");
    blocked.count = counts.blocked;
    blocked.countText = formatCount(counts.blocked, counts.topicsEstimated);
    blocked.toolTip =
        tr("Pending events that wait for an earlier pending, processing or dead event of their "
           "aggregate: dispatchers delivering in aggregate order do not claim them yet") +
        (staleTip.isEmpty() ? QString() : QLatin1Char('\n') + staleTip);
    blocked.filter.status = core::Status::Pending;
    blocked.filter.aggregateBlocked = true;
    if (blocked.count > 0) {
        pending.children.append(blocked);
    }
    pending.children.append(namespaceNodes(core::Status::Pending));

    Node processing = statusNode(core::Status::Processing, counts.processing);
    if (counts.expiredLeases > 0) {
        processing.countText =
            tr("%1 (%2 expired)")
                .arg(formatCount(counts.processing), formatCount(counts.expiredLeases));
    }
    processing.toolTip =
        tr("%1 leased by a dispatcher, %2 with an expired lease")
            .arg(formatCount(counts.processing), formatCount(counts.expiredLeases));
    processing.children = namespaceNodes(core::Status::Processing);

    Node delivered = statusNode(core::Status::Delivered, counts.delivered);
    delivered.countText = formatCount(counts.delivered, counts.deliveredEstimated);
    delivered.toolTip = counts.deliveredEstimated
                            ? tr("Estimated from the table statistics (too many to count)")
                            : tr("Exact count");

    Node dead = statusNode(core::Status::Dead, counts.dead);
    dead.countText = formatCount(counts.dead, counts.deadEstimated);
    if (counts.deadEstimated) {
        dead.toolTip = staleTip;
    }
    dead.children = namespaceNodes(core::Status::Dead);

    return {pending, processing, delivered, dead};
}

QList<QStandardItem *> StatusNavModel::makeRow(const Node &node) {
    auto *name = new QStandardItem;
    auto *count = new QStandardItem;
    name->setEditable(false);
    count->setEditable(false);
    count->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    name->setData(node.key, KeyRole);
    name->setData(static_cast<int>(node.kind), KindRole);
    name->setData(QVariant::fromValue(node.filter), FilterRole);
    update(name, count, node);
    // The whole subtree goes in with one insertion.
    for (const Node &child : node.children) {
        name->appendRow(makeRow(child));
    }
    return {name, count};
}

void StatusNavModel::update(QStandardItem *name, QStandardItem *count, const Node &node) {
    // Only touch what differs: every setData emits dataChanged.
    auto set = [](QStandardItem *item, const QVariant &value, int role) {
        if (item->data(role) != value) {
            item->setData(value, role);
        }
    };
    set(name, node.name, Qt::DisplayRole);
    set(name, node.toolTip.isEmpty() ? QVariant() : QVariant(node.toolTip), Qt::ToolTipRole);
    set(name, node.count, CountRole);
    set(count, node.countText, Qt::DisplayRole);
    set(count, node.toolTip.isEmpty() ? QVariant() : QVariant(node.toolTip), Qt::ToolTipRole);
    set(count, node.count, CountRole);
}

void StatusNavModel::sync(QStandardItem *parent, const QList<Node> &nodes) {
    QSet<QString> wanted;
    for (const auto &node : nodes) {
        wanted.insert(node.key);
    }
    for (int row = parent->rowCount() - 1; row >= 0; --row) {
        if (!wanted.contains(parent->child(row, NameColumn)->data(KeyRole).toString())) {
            parent->removeRow(row);
        }
    }
    for (int i = 0; i < nodes.size(); ++i) {
        const Node &node = nodes.at(i);
        QStandardItem *existing = i < parent->rowCount() ? parent->child(i, NameColumn) : nullptr;
        if (!existing || existing->data(KeyRole).toString() != node.key) {
            int found = -1;
            for (int row = i + 1; row < parent->rowCount(); ++row) {
                if (parent->child(row, NameColumn)->data(KeyRole).toString() == node.key) {
                    found = row;
                    break;
                }
            }
            if (found >= 0) {
                // Children are sorted by name, so this only happens if the
                // sort rule changes; moving keeps the subtree's items.
                parent->insertRow(i, parent->takeRow(found));
            } else {
                parent->insertRow(i, makeRow(node));
            }
            existing = parent->child(i, NameColumn);
        }
        update(existing, parent->child(i, CountColumn), node);
        sync(existing, node.children);
    }
}

void StatusNavModel::applyCounts(const store::StatusCounts &counts) {
    m_counts = counts;
    sync(invisibleRootItem(), buildTree(counts));
    Q_EMIT countsApplied();
}

QModelIndex StatusNavModel::indexForKey(const QString &key) const {
    const QModelIndexList found =
        match(index(0, NameColumn), KeyRole, key, 1, Qt::MatchExactly | Qt::MatchRecursive);
    return found.isEmpty() ? QModelIndex() : found.first();
}

QModelIndex StatusNavModel::indexFor(const store::EventFilter &filter) const {
    if (!filter.status) {
        return {};
    }
    const core::Status status = *filter.status;
    QString key;
    if (status == core::Status::Pending && filter.aggregateBlocked) {
        key = blockedKey();
    } else if (status == core::Status::Pending && filter.retrying.value_or(false)) {
        key = retryingKey();
    } else if (!filter.nameSpace.isEmpty()) {
        key = filter.topic.isEmpty() ? namespaceKey(status, filter.nameSpace)
                                     : topicKey(status, filter.nameSpace, filter.topic);
    }
    const QModelIndex place = key.isEmpty() ? QModelIndex() : indexForKey(key);
    return place.isValid() ? place : indexForKey(statusKey(status));
}

store::EventFilter StatusNavModel::filterAt(const QModelIndex &index) {
    return index.siblingAtColumn(NameColumn).data(FilterRole).value<store::EventFilter>();
}

QString StatusNavModel::keyAt(const QModelIndex &index) {
    return index.siblingAtColumn(NameColumn).data(KeyRole).toString();
}

} // namespace outbox::console
