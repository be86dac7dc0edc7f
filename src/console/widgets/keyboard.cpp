#include "console/widgets/keyboard.h"

#include <QAbstractItemView>
#include <QAction>
#include <QPlainTextEdit>
#include <QTextEdit>

namespace outbox::console {

namespace {

bool isTabStop(const QWidget *widget) {
    return (widget->focusPolicy() & Qt::TabFocus) != 0 && widget->focusProxy() == nullptr;
}

} // namespace

void setUpKeyboard(QWidget *window, const QList<QWidget *> &panes,
                   const QList<QAbstractItemView *> &tables, QAction *copyIds) {
    for (QAbstractItemView *view : window->findChildren<QAbstractItemView *>()) {
        view->setTabKeyNavigation(false);
    }
    for (QPlainTextEdit *edit : window->findChildren<QPlainTextEdit *>()) {
        if (edit->isReadOnly()) {
            edit->setTabChangesFocus(true);
        }
    }
    for (QTextEdit *edit : window->findChildren<QTextEdit *>()) {
        if (edit->isReadOnly()) {
            edit->setTabChangesFocus(true);
        }
    }

    // Each pane's tab stops in the order Qt already has them (the order they
    // were made in), then the panes one after the other.
    QList<QList<QWidget *>> stops(panes.size());
    for (QWidget *w = window->nextInFocusChain(); w != window; w = w->nextInFocusChain()) {
        if (!isTabStop(w)) {
            continue;
        }
        for (qsizetype i = 0; i < panes.size(); ++i) {
            if (panes.at(i) == w || panes.at(i)->isAncestorOf(w)) {
                stops[i].append(w);
                break;
            }
        }
    }
    QWidget *previous = nullptr;
    for (const QList<QWidget *> &pane : std::as_const(stops)) {
        for (QWidget *w : pane) {
            if (previous) {
                QWidget::setTabOrder(previous, w);
            }
            previous = w;
        }
    }

    if (copyIds) {
        copyIds->setShortcutContext(Qt::WidgetShortcut);
        for (QAbstractItemView *table : tables) {
            table->addAction(copyIds);
        }
    }
}

} // namespace outbox::console
