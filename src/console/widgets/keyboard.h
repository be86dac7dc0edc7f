#pragma once

#include <QList>
#include <QObject>
#include <QPointer>

class QAbstractItemView;
class QAction;
class QWidget;

namespace outbox::console {

// Keyboard use of the main window.
//  - Tab walks pane by pane, in the order of the panes given (within a pane,
//    its fields in their usual order), and around; Shift+Tab goes back. An
//    item view is one stop, not one per cell; read-only text views pass Tab
//    on instead of swallowing it.
//  - `copyIds` (Ctrl+C) copies event ids only while one of `tables` has the
//    focus; elsewhere Ctrl+C copies the selected text as usual.
// The window calls focusNextPane() from its focusNextPrevChild().
class KeyboardNavigation final : public QObject {
    Q_OBJECT

public:
    KeyboardNavigation(QWidget *window, const QList<QWidget *> &panes,
                       const QList<QAbstractItemView *> &tables, QAction *copyIds);
    Q_DISABLE_COPY_MOVE(KeyboardNavigation)
    ~KeyboardNavigation() override;

    // Moves the focus to the next (or previous) tab stop, pane by pane;
    // false when the focus is outside every pane (the window's own order
    // applies then).
    bool focusNextPane(bool next);

private:
    QList<QWidget *> stopsOf(const QWidget *pane) const;
    int paneOf(const QWidget *widget) const;

    QWidget *m_window;
    QList<QPointer<QWidget>> m_panes;
};

} // namespace outbox::console
