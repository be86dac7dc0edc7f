// The keyboard's focus mark is plain to see: after Tab, the focused check
// box carries a frame two pixels wide in the palette's highlight colour.

#include "console/widgets/focusstyle.h"

#include <QApplication>
#include <QCheckBox>
#include <QImage>
#include <QPushButton>
#include <QVBoxLayout>
#include <QWidget>
#include <QtTest>

using namespace outbox;

class TestFocusStyle final : public QObject {
    Q_OBJECT

private:
    // Pixels of `widget` in exactly the highlight colour.
    static int highlighted(QWidget *widget) {
        const QImage image = widget->grab().toImage();
        const QRgb mark = widget->palette().color(QPalette::Highlight).rgb();
        int count = 0;
        for (int y = 0; y < image.height(); ++y) {
            for (int x = 0; x < image.width(); ++x)
                count += image.pixel(x, y) == mark ? 1 : 0;
        }
        return count;
    }

private Q_SLOTS:
    void theFocusFrameIsTwoPixelsOfHighlight() {
        QApplication::setStyle(new console::FocusStyle);
        QWidget window;
        auto *first = new QPushButton(QStringLiteral("First"));
        auto *box = new QCheckBox(QStringLiteral("Show desktop notifications"));
        auto *layout = new QVBoxLayout(&window);
        layout->addWidget(first);
        layout->addWidget(box);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        first->setFocus(Qt::OtherFocusReason);
        const int before = highlighted(box);
        QTest::keyClick(first, Qt::Key_Tab);
        QTRY_COMPARE(QApplication::focusWidget(), box);
        const int after = highlighted(box);
        // A frame around the box's text, two pixels wide: at least twice
        // the perimeter of the smallest frame that holds the label's height.
        const int least = 2 * 2 * (box->fontMetrics().height() + 20);
        QVERIFY2(after - before >= least,
                 qPrintable(QStringLiteral("%1 highlight pixels after Tab, %2 before (at least %3 "
                                           "more expected)")
                                .arg(after)
                                .arg(before)
                                .arg(least)));
    }
};

QTEST_MAIN(TestFocusStyle)
#include "tst_focusstyle.moc"
