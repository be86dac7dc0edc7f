#include "console/widgets/windowlayout.h"

#include "console/model/consolesettings.h"

#include <QChildEvent>
#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QScreen>
#include <QTimer>

#include <algorithm>

namespace outbox::console {

namespace {

bool isSideArea(Qt::DockWidgetArea area) {
    return area == Qt::LeftDockWidgetArea || area == Qt::RightDockWidgetArea;
}

// The default share of each area: wide enough for the navigator's counts
// and the detail's metadata, the rest for the table.
constexpr int kLeftWidth = 280;
constexpr int kRightWidth = 400;
constexpr int kBottomHeight = 300;

} // namespace

WindowLayout::WindowLayout(QMainWindow *window, ConsoleSettings *settings)
    : QObject(window)
    , m_window(window)
    , m_settings(settings) {
    m_window->installEventFilter(this);
}

WindowLayout::~WindowLayout() = default;

void WindowLayout::setCentralWidget(QWidget *centre) {
    centre->setMinimumSize(kMinimumCentreWidth, kMinimumCentreHeight);
    m_window->setCentralWidget(centre);
}

QDockWidget *WindowLayout::addDock(const QString &title, const QString &name, QWidget *content,
                                   Qt::DockWidgetArea area, bool shownByDefault) {
    auto *dock = new QDockWidget(title, m_window);
    dock->setObjectName(name); // saveState() needs it
    // A side pane keeps a usable width whatever the centre asks (never less
    // than its contents need).
    if (isSideArea(area)) {
        content->setMinimumWidth(std::max(kMinimumSideWidth, content->minimumSizeHint().width()));
    }
    dock->setWidget(content);
    m_window->addDockWidget(area, dock);
    dock->setVisible(shownByDefault);
    m_docks.append({dock, area, shownByDefault});
    return dock;
}

void WindowLayout::setShownByDefault(QDockWidget *dock, bool shown) {
    for (Dock &d : m_docks) {
        if (d.dock == dock) {
            d.shownByDefault = shown;
        }
    }
}

void WindowLayout::setTabbedBehind(QDockWidget *dock, QDockWidget *front) {
    for (Dock &d : m_docks) {
        if (d.dock == dock) {
            d.behind = front;
        }
    }
}

void WindowLayout::applyDefaults() {
    QList<QDockWidget *> left;
    QList<QDockWidget *> right;
    QList<QDockWidget *> bottom;
    for (const Dock &d : std::as_const(m_docks)) {
        d.dock->setFloating(false);
        m_window->addDockWidget(d.area, d.dock); // moves it back to its area
        d.dock->setVisible(d.shownByDefault);
        if (!d.shownByDefault) {
            continue;
        }
        if (d.behind) {
            m_window->tabifyDockWidget(d.behind, d.dock);
            d.behind->raise();
            continue; // sized with its front pane
        }
        (d.area == Qt::LeftDockWidgetArea    ? left
         : d.area == Qt::RightDockWidgetArea ? right
                                             : bottom)
            .append(d.dock);
    }
    // Stacked in one area, the docks share its height.
    QList<QDockWidget *> sides;
    QList<int> widths;
    if (!left.isEmpty()) {
        sides << left.constFirst();
        widths << kLeftWidth;
    }
    if (!right.isEmpty()) {
        sides << right.constFirst();
        widths << kRightWidth;
    }
    m_window->resizeDocks(sides, widths, Qt::Horizontal);
    if (left.size() > 1) {
        m_window->resizeDocks(left, QList<int>(left.size(), 400), Qt::Vertical);
    }
    if (right.size() > 1) { // the event detail first, then the demo's few controls
        QList<int> heights(right.size(), 240);
        heights[0] = 640;
        m_window->resizeDocks(right, heights, Qt::Vertical);
    }
    if (!bottom.isEmpty()) {
        m_window->resizeDocks({bottom.constFirst()}, {kBottomHeight}, Qt::Vertical);
    }
}

void WindowLayout::restoreGeometry() {
    m_window->resize(kDefaultWindowSize);
    if (m_settings) {
        const QSize before = m_window->size();
        if (m_window->restoreGeometry(m_settings->windowGeometry())) {
            const QSize least = m_window->minimumSizeHint();
            if (m_window->width() < least.width() || m_window->height() < least.height()) {
                m_window->resize(before); // a window too small to hold its panes
            }
        }
    }
    fitToScreen();
}

void WindowLayout::fitToScreen() {
    const QScreen *screen = m_window->screen();
    if (!screen || m_fitting) {
        return;
    }
    if (m_window->isMaximized() || m_window->isFullScreen()) {
        fitMaximised(*screen);
        return;
    }
    m_fitting = true;
    // The frame (title bar, borders) is known once the window is shown.
    const QRect frame = m_window->frameGeometry();
    const QRect inner = m_window->geometry();
    const QMargins margins =
        m_window->isVisible()
            ? QMargins(inner.left() - frame.left(), inner.top() - frame.top(),
                       frame.right() - inner.right(), frame.bottom() - inner.bottom())
            : QMargins();
    const QRect room = screen->availableGeometry().marginsRemoved(margins);
    const QSize size = m_window->size().boundedTo(room.size());
    if (size != m_window->size()) {
        m_window->resize(size);
        if (m_window->width() > room.width() || m_window->height() > room.height()) {
            // The panes on show need more than the screen has: those that
            // share an area become tabs of one pane, and it is fitted again.
            if (tabifyCrowdedAreas()) {
                QTimer::singleShot(0, this, &WindowLayout::fitToScreen);
            }
        }
    }
    // And on the screen: moved in from the right and the bottom first.
    QPoint at = m_window->geometry().topLeft();
    at.setX(std::max(room.left(), std::min(at.x(), room.right() + 1 - m_window->width())));
    at.setY(std::max(room.top(), std::min(at.y(), room.bottom() + 1 - m_window->height())));
    if (m_window->isVisible() && at != m_window->geometry().topLeft()) {
        m_window->move(at - QPoint(margins.left(), margins.top()));
    }
    m_fitting = false;
}

void WindowLayout::fitMaximised(const QScreen &screen) {
    // The window manager gives the size: the panes on show must fit in it,
    // or they would be cut (or the window pushed past the screen where
    // nothing holds it), so those that share an area become tabs.
    const QSize room =
        m_window->isFullScreen() ? screen.geometry().size() : screen.availableGeometry().size();
    const QSize frame = m_window->frameGeometry().size() - m_window->size();
    const QSize least = m_window->minimumSizeHint() + frame;
    const bool crowded = least.width() > room.width() || least.height() > room.height() ||
                         m_window->frameGeometry().width() > room.width() ||
                         m_window->frameGeometry().height() > room.height();
    if (!crowded) {
        return;
    }
    m_fitting = true;
    if (tabifyCrowdedAreas()) {
        // Back to the size the screen gives, maximised again.
        const Qt::WindowStates state = m_window->windowState();
        m_window->setWindowState(state & ~(Qt::WindowMaximized | Qt::WindowFullScreen));
        m_window->resize(room - frame);
        m_window->setWindowState(state);
        QTimer::singleShot(0, this, &WindowLayout::fitToScreen);
    }
    m_fitting = false;
}

bool WindowLayout::tabifyCrowdedAreas() {
    // One area at a time, the bottom first (its panes sit side by side, the
    // widest demand), then the sides; the window is fitted again in between.
    for (const Qt::DockWidgetArea area : {Qt::BottomDockWidgetArea, Qt::RightDockWidgetArea,
                                          Qt::LeftDockWidgetArea, Qt::TopDockWidgetArea}) {
        // The window's own panes first, in the order they were added (the
        // first one stays in front), then the panes others added.
        QList<QDockWidget *> all;
        for (const Dock &d : std::as_const(m_docks)) {
            all.append(d.dock);
        }
        for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
            if (!all.contains(dock)) {
                all.append(dock);
            }
        }
        QList<QDockWidget *> docks;
        for (QDockWidget *dock : std::as_const(all)) {
            if (dock->isVisible() && !dock->isFloating() &&
                m_window->dockWidgetArea(dock) == area &&
                !m_window->tabifiedDockWidgets(dock).contains(docks.value(0))) {
                docks.append(dock);
            }
        }
        if (docks.size() < 2) {
            continue;
        }
        for (qsizetype i = 1; i < docks.size(); ++i) {
            m_window->tabifyDockWidget(docks.constFirst(), docks.at(i));
        }
        docks.constFirst()->raise();
        return true;
    }
    return false;
}

void WindowLayout::useProfile(const QString &profile) {
    if (m_profileInUse && profile == m_profile) {
        return;
    }
    if (m_profileInUse && m_settings) {
        m_settings->setWindowState(m_profile, m_window->saveState());
    }
    m_profile = profile;
    m_profileInUse = true;
    applyDefaults();
    const QByteArray saved = m_settings ? m_settings->windowState(profile) : QByteArray();
    if (saved.isEmpty()) {
        return;
    }
    if (!m_window->restoreState(saved)) {
        applyDefaults();
        return;
    }
    checkWhenShown();
}

void WindowLayout::save() {
    if (!m_settings) {
        return;
    }
    m_settings->setWindowGeometry(m_window->saveGeometry());
    if (m_profileInUse) {
        m_settings->setWindowState(m_profile, m_window->saveState());
    }
}

bool WindowLayout::isUsable() const {
    for (const Dock &d : m_docks) {
        if (!d.dock->isVisible() || d.dock->isFloating()) {
            continue;
        }
        const Qt::DockWidgetArea area = m_window->dockWidgetArea(d.dock);
        if (isSideArea(area) ? d.dock->width() < kMinimumSideWidth
                             : d.dock->height() < kMinimumBottomHeight) {
            return false;
        }
    }
    const QWidget *centre = m_window->centralWidget();
    return !centre ||
           (centre->width() >= kMinimumCentreWidth && centre->height() >= kMinimumCentreHeight);
}

bool WindowLayout::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_window && event->type() == QEvent::Show && m_checkPending) {
        // The sizes are known once the shown window has laid itself out.
        QTimer::singleShot(0, this, &WindowLayout::fallBackIfUnusable);
    }
    // A pane shown grows a maximised window without a resize event (the
    // window manager holds its size): each pane's showing fits it again.
    if (watched == m_window && event->type() == QEvent::ChildAdded) {
        if (auto *dock = qobject_cast<QDockWidget *>(static_cast<QChildEvent *>(event)->child())) {
            connect(dock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
                if (visible && (m_window->isMaximized() || m_window->isFullScreen())) {
                    QTimer::singleShot(0, this, &WindowLayout::fitToScreen);
                }
            });
        }
    }
    // Whatever grows it (a pane shown, a layout asking for more), the window
    // stays on its screen; the panes shrink instead.
    if (watched == m_window && (event->type() == QEvent::Show || event->type() == QEvent::Resize)) {
        QTimer::singleShot(0, this, &WindowLayout::fitToScreen);
    }
    return QObject::eventFilter(watched, event);
}

void WindowLayout::checkWhenShown() {
    m_checkPending = true;
    if (m_window->isVisible()) {
        QTimer::singleShot(0, this, &WindowLayout::fallBackIfUnusable);
    }
}

void WindowLayout::fallBackIfUnusable() {
    if (!m_checkPending) {
        return;
    }
    m_checkPending = false;
    if (!isUsable()) {
        applyDefaults();
    }
}

QString windowTitleFor(const QString &subject) {
    const QString name = WindowLayout::tr("Outbox Console");
    return subject.isEmpty() ? name : WindowLayout::tr("%1 — %2").arg(subject, name);
}

} // namespace outbox::console
