#include "console/widgets/fleetsparkline.h"

#include "console/model/fleetmodel.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace outbox::console {

namespace {
constexpr int kLineWidth = 90; // pixels of the line; the figure takes the rest
}

void FleetSparklineDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                                   const QModelIndex &index) const {
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString figure = opt.text;
    opt.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    const QVariantList points = index.data(FleetModel::SparkRole).toList();
    const QRect area = option.rect.adjusted(4, 0, -4, 0);
    const QRect line(area.left(), area.top() + 3, std::min(kLineWidth, area.width() / 2),
                     std::max(area.height() - 6, 4));
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    const bool selected = option.state.testFlag(QStyle::State_Selected);
    const QColor ink =
        selected ? option.palette.highlightedText().color() : option.palette.color(QPalette::Link);
    if (points.size() > 1) {
        qint64 top = 1;
        for (const QVariant &p : points) {
            top = std::max(top, p.toLongLong());
        }
        QPainterPath path;
        const double step = double(line.width()) / double(points.size() - 1);
        for (int i = 0; i < points.size(); ++i) {
            const double x = line.left() + step * i;
            const double y = line.bottom() -
                             double(points[i].toLongLong()) / double(top) * double(line.height());
            if (i == 0) {
                path.moveTo(x, y);
            } else {
                path.lineTo(x, y);
            }
        }
        painter->setPen(QPen(ink, 1.4));
        painter->drawPath(path);
    }
    painter->setPen(selected ? option.palette.highlightedText().color()
                             : option.palette.text().color());
    const QRect text = area.adjusted(line.width() + 6, 0, 0, 0);
    painter->drawText(text, int(Qt::AlignRight | Qt::AlignVCenter), figure);
    painter->restore();
}

QSize FleetSparklineDelegate::sizeHint(const QStyleOptionViewItem &option,
                                       const QModelIndex &index) const {
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.setWidth(std::max(size.width() + kLineWidth + 14, kLineWidth + 50));
    size.setHeight(std::max(size.height(), option.fontMetrics.height() + 8));
    return size;
}

} // namespace outbox::console
