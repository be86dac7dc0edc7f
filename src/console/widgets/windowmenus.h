#pragma once

#include <QStringList>

#include <functional>

class QMainWindow;
class QMenu;

namespace outbox::console {

class ActionController;
class FilterBar;

// What the menus ask the window to do.
struct WindowCommands {
    std::function<void()> connect;
    std::function<void()> startDemo;
    std::function<void()> refresh;
    std::function<void(int)> showPage; // by index, in the order of `pageTitles`
};

// The menu bar (File, View, Actions, Help, every entry with an access
// letter) and the main toolbar, with the docks' and toolbar's toggles in the
// View menu. `pageTitles` carry their own access letters ("&Pending"); page
// i is on Alt+(i+1). Returns the View menu, for docks added later.
QMenu *buildWindowMenus(QMainWindow *window, ActionController *actions, FilterBar *filterBar,
                        const QStringList &pageTitles, const WindowCommands &commands);

} // namespace outbox::console
