#pragma once

#include <QProxyStyle>

namespace outbox::console {

// The keyboard's focus mark, plain to see: a 2-pixel frame in the
// palette's highlight colour where the base style draws its focus frame
// (Fusion's is one pixel of a darkened highlight: hard to find on a table
// cell or a check box). Like the base style, only after keyboard use.
class FocusStyle final : public QProxyStyle {
    Q_OBJECT

public:
    FocusStyle();

    void drawPrimitive(PrimitiveElement element, const QStyleOption *option, QPainter *painter,
                       const QWidget *widget = nullptr) const override;
};

} // namespace outbox::console
