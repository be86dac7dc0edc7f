#include "console/widgets/focusstyle.h"

#include <QPainter>
#include <QStyleOption>

namespace outbox::console {

FocusStyle::FocusStyle() = default;

void FocusStyle::drawPrimitive(PrimitiveElement element, const QStyleOption *option,
                               QPainter *painter, const QWidget *widget) const {
    if (element != PE_FrameFocusRect || !(option->state & State_KeyboardFocusChange)) {
        QProxyStyle::drawPrimitive(element, option, painter, widget);
        return;
    }
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->setPen(QPen(option->palette.color(QPalette::Highlight), 2));
    painter->setBrush(Qt::NoBrush);
    // A 2-pixel pen is centred on the path: one pixel in from each edge.
    painter->drawRect(QRectF(option->rect).adjusted(1, 1, -1, -1));
    painter->restore();
}

} // namespace outbox::console
