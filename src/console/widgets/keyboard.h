#pragma once

#include <QList>

class QAbstractItemView;
class QAction;
class QWidget;

namespace outbox::console {

// Keyboard use of the main window.
//  - Tab walks pane by pane, in the order of `panes` (each pane's own
//    fields in their order), and around; an item view is one stop, not
//    one per cell.
//  - `copyIds` (Ctrl+C) copies event ids only while one of `tables` has
//    the focus; elsewhere Ctrl+C copies the selected text as usual.
//  - Read-only text views pass Tab on instead of swallowing it.
void setUpKeyboard(QWidget *window, const QList<QWidget *> &panes,
                   const QList<QAbstractItemView *> &tables, QAction *copyIds);

} // namespace outbox::console
