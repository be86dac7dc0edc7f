#include "console/widgets/keyboard.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace outbox::console {

namespace {

bool isTabStop(const QWidget *widget) {
    return (widget->focusPolicy() & Qt::TabFocus) != 0 && widget->focusProxy() == nullptr;
}

bool canTakeFocusNow(const QWidget *widget) {
    return widget->isVisible() && widget->isEnabled();
}

} // namespace

KeyboardNavigation::KeyboardNavigation(QWidget *window, const QList<QWidget *> &panes,
                                       const QList<QAbstractItemView *> &tables, QAction *copyIds)
    : QObject(window)
    , m_window(window) {
    for (QWidget *pane : panes) {
        m_panes.append(pane);
    }
    for (QAbstractItemView *view : window->findChildren<QAbstractItemView *>()) {
        view->setTabKeyNavigation(false);
    }
    for (QPlainTextEdit *edit : window->findChildren<QPlainTextEdit *>()) {
        edit->setTabChangesFocus(edit->isReadOnly());
    }
    for (QTextEdit *edit : window->findChildren<QTextEdit *>()) {
        edit->setTabChangesFocus(edit->isReadOnly());
    }
    if (copyIds) {
        copyIds->setShortcutContext(Qt::WidgetShortcut);
        for (QAbstractItemView *table : tables) {
            table->addAction(copyIds);
        }
    }
}

KeyboardNavigation::~KeyboardNavigation() = default;

QList<QWidget *> KeyboardNavigation::stopsOf(const QWidget *pane) const {
    // In the window's focus chain order: the order the fields were made in.
    QList<QWidget *> stops;
    for (QWidget *w = m_window->nextInFocusChain(); w != m_window; w = w->nextInFocusChain()) {
        if (isTabStop(w) && (w == pane || pane->isAncestorOf(w))) {
            stops.append(w);
        }
    }
    return stops;
}

int KeyboardNavigation::paneOf(const QWidget *widget) const {
    for (qsizetype i = 0; i < m_panes.size(); ++i) {
        const QWidget *pane = m_panes.at(i);
        if (pane && (pane == widget || pane->isAncestorOf(widget))) {
            return int(i);
        }
    }
    return -1;
}

bool KeyboardNavigation::focusNextPane(bool next) {
    QWidget *focus = QApplication::focusWidget();
    const int pane = focus ? paneOf(focus) : -1;
    if (pane < 0) {
        return false;
    }
    const int count = int(m_panes.size());
    const int step = next ? 1 : -1;
    // First the rest of this pane, then the other panes in turn.
    for (int k = 0; k <= count; ++k) {
        const QWidget *candidatePane = m_panes.at(((pane + step * k) % count + count) % count);
        if (!candidatePane || !canTakeFocusNow(candidatePane)) {
            continue;
        }
        QList<QWidget *> stops = stopsOf(candidatePane);
        if (!next) {
            std::reverse(stops.begin(), stops.end());
        }
        qsizetype from = 0;
        if (k == 0) {
            // The stop that holds the focus, then onwards. Failing that, the
            // innermost stop that contains it: a scroll area is a stop of
            // its own and comes before the fields inside it, so the first
            // container found would lead straight back to the focus.
            from = stops.size();
            const qsizetype at = stops.indexOf(focus);
            for (qsizetype i = 0; i < stops.size(); ++i) {
                if (at >= 0 ? i == at : stops.at(i)->isAncestorOf(focus)) {
                    from = i + 1;
                }
            }
        }
        for (qsizetype i = from; i < stops.size(); ++i) {
            if (stops.at(i) != focus && canTakeFocusNow(stops.at(i))) {
                stops.at(i)->setFocus(next ? Qt::TabFocusReason : Qt::BacktabFocusReason);
                return true;
            }
        }
    }
    return false;
}

} // namespace outbox::console
