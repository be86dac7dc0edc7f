#pragma once

#include <QList>
#include <QObject>
#include <QSize>
#include <QString>

class QDockWidget;
class QMainWindow;
class QScreen;
class QWidget;

namespace outbox::console {

class ConsoleSettings;

// The main window's docks: their default arrangement, and the arrangement
// the user made, saved per connection profile (the demo's layout does not
// follow into a real session). Every pane has a minimum usable size, so no
// text shown in the window (a long filter, a long error) can squeeze a pane
// away; a saved layout that leaves a pane or the centre below its minimum,
// or that does not restore at all, is ignored for the default one.
class WindowLayout final : public QObject {
    Q_OBJECT

public:
    // The smallest size a dock pane or the centre may get.
    static constexpr int kMinimumSideWidth = 200;    // navigator, error groups, detail, demo
    static constexpr int kMinimumBottomHeight = 140; // dispatcher
    static constexpr int kMinimumCentreWidth = 480;
    static constexpr int kMinimumCentreHeight = 240;
    static constexpr QSize kDefaultWindowSize{1500, 920};

    WindowLayout(QMainWindow *window, ConsoleSettings *settings);
    Q_DISABLE_COPY_MOVE(WindowLayout)
    ~WindowLayout() override;

    // The centre, with its minimum size.
    void setCentralWidget(QWidget *centre);
    // Adds a dock (named for saveState) in its default area; a dock that is
    // not `shownByDefault` waits for the View menu.
    QDockWidget *addDock(const QString &title, const QString &name, QWidget *content,
                         Qt::DockWidgetArea area, bool shownByDefault = true);
    // Demo mode shows the dispatcher by default, for instance.
    void setShownByDefault(QDockWidget *dock, bool shown);
    // By default `dock` is a tab behind `front` (both in one area).
    void setTabbedBehind(QDockWidget *dock, QDockWidget *front);

    // Puts every dock in its default area, visibility and size.
    void applyDefaults();
    // The window's size and place (shared by every profile); a saved size
    // below the window's minimum is ignored, one beyond the screen is fitted.
    void restoreGeometry();
    // Keeps the window, frame included, within its screen's available
    // geometry (what the panels and the task bar leave): done after every
    // resize, so nothing the window shows can grow it past the screen.
    void fitToScreen();
    // Saves the layout of the profile in use and restores the one saved for
    // `profile` (the defaults when there is none, or it is unusable).
    void useProfile(const QString &profile);
    QString profile() const { return m_profile; }
    // Saves the geometry and the current profile's layout.
    void save();

    // Whether every docked pane on show and the centre have their minimum
    // size (only meaningful once the window is shown).
    bool isUsable() const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    struct Dock {
        QDockWidget *dock;
        Qt::DockWidgetArea area;
        bool shownByDefault;
        QDockWidget *behind = nullptr; // the default tab group's front pane
    };
    void checkWhenShown();
    // fitToScreen() for a maximised or full-screen window.
    void fitMaximised(const QScreen &screen);
    // Makes the docks on show in one area that has several side by side
    // tabs of one dock; false when no area has.
    bool tabifyCrowdedAreas();
    void fallBackIfUnusable();

    QMainWindow *m_window;
    ConsoleSettings *m_settings;
    QList<Dock> m_docks;
    QString m_profile;
    bool m_profileInUse = false;
    bool m_checkPending = false;
    bool m_fitting = false;
};

// The window title for `subject` (what the window shows, e.g. "db on host
// [read-only]"): "<subject> — Outbox Console", or the name alone. It ends in
// the application's display name (application.cpp), so the window system,
// which appends that name to titles that do not end with it, does not add it
// a second time.
QString windowTitleFor(const QString &subject);

} // namespace outbox::console
