#pragma once

#include <QStyledItemDelegate>

namespace outbox::console {

// Paints FleetModel's deliveries per minute (FleetModel::SparkRole) as a
// small line, the last minute's figure beside it.
class FleetSparklineDelegate final : public QStyledItemDelegate {
    Q_OBJECT

public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
};

} // namespace outbox::console
