#include "console/widgets/windowmenus.h"

#include "console/widgets/actions.h"
#include "console/widgets/filterbar.h"
#include "console/widgets/fleetwindow.h"

#include <QApplication>
#include <QDockWidget>
#include <QIcon>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QSet>
#include <QToolBar>

namespace outbox::console {

namespace {

// Gives each entry of `menu` that has no access letter the first letter of
// its text that no other entry of the menu uses (the panes' entries are
// named after their titles, which have none).
void addAccessLetters(QMenu *menu) {
    QSet<QChar> used;
    const QList<QAction *> entries = menu->actions();
    for (const QAction *a : entries) {
        const QString text = a->text();
        const qsizetype at = text.indexOf(QLatin1Char('&'));
        if (at >= 0 && at + 1 < text.size()) {
            used.insert(text.at(at + 1).toLower());
        }
    }
    for (QAction *a : entries) {
        QString text = a->text();
        if (a->isSeparator() || text.contains(QLatin1Char('&'))) {
            continue;
        }
        for (qsizetype i = 0; i < text.size(); ++i) {
            const QChar letter = text.at(i).toLower();
            if (letter.isLetter() && !used.contains(letter)) {
                used.insert(letter);
                a->setText(text.insert(i, QLatin1Char('&')));
                break;
            }
        }
    }
}

} // namespace

QMenu *buildWindowMenus(QMainWindow *window, ActionController *actions, FilterBar *filterBar,
                        const QStringList &pageTitles, const WindowCommands &commands) {
    QMenu *file = window->menuBar()->addMenu(QMainWindow::tr("&File"));
    file->addAction(QIcon(QStringLiteral(":/icons/connect.svg")), QMainWindow::tr("&Connect…"),
                    QKeySequence::Open, window, commands.connect);
    QAction *demo = file->addAction(QMainWindow::tr("Start &demo"), window, commands.startDemo);
    demo->setObjectName(QStringLiteral("startDemoAction"));
    QAction *fleet = file->addAction(QMainWindow::tr("Open &fleet…"), window,
                                     [window] { openFleetDialog(window); });
    fleet->setObjectName(QStringLiteral("openFleetAction"));
    if (auto *alerts = window->findChild<QAction *>(QStringLiteral("alertSettingsAction")))
        file->addAction(alerts); // AlertNotifier's
    file->addSeparator();
    file->addAction(QMainWindow::tr("&Quit"), QKeySequence::Quit, window, &QWidget::close);

    QMenu *view = window->menuBar()->addMenu(QMainWindow::tr("&View"));
    QAction *refresh =
        view->addAction(QIcon(QStringLiteral(":/icons/refresh.svg")), QMainWindow::tr("&Refresh"),
                        QKeySequence::Refresh, window, commands.refresh);
    refresh->setObjectName(QStringLiteral("refreshAction"));
    view->addAction(QMainWindow::tr("&Find…"), QKeySequence::Find, filterBar,
                    &FilterBar::focusSearch);
    view->addAction(QMainWindow::tr("C&lear filter"), filterBar, &FilterBar::clear);
    view->addSeparator();
    for (int i = 0; i < pageTitles.size(); ++i) {
        view->addAction(pageTitles.at(i), QKeySequence(int(Qt::ALT) | int(Qt::Key_1 + i)), window,
                        [show = commands.showPage, i] { show(i); });
    }
    view->addSeparator();
    for (QDockWidget *dock : window->findChildren<QDockWidget *>()) {
        view->addAction(dock->toggleViewAction());
        // Shown from the menu, a pane tabbed with others comes to the front
        // (it used to open as a hidden tab behind the one on show).
        QObject::connect(dock->toggleViewAction(), &QAction::triggered, dock, [dock](bool on) {
            if (on)
                dock->raise();
        });
    }

    actions->fillActionsMenu(window->menuBar()->addMenu(QMainWindow::tr("&Actions")));

    QMenu *help = window->menuBar()->addMenu(QMainWindow::tr("&Help"));
    help->addAction(QMainWindow::tr("&About"), window, [window] {
        // Not QMessageBox::about(): its own event loop would run inside this call.
        auto *box = new QMessageBox(
            QMessageBox::Information, QMainWindow::tr("About Outbox Console"),
            QMainWindow::tr("<b>Outbox Console</b> %1<br>Live views, operator actions and an "
                            "embedded dispatcher for PostgreSQL transactional outboxes.")
                .arg(QApplication::applicationVersion()),
            QMessageBox::Ok, window);
        box->setIconPixmap(window->windowIcon().pixmap(64));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    });

    QToolBar *bar = window->addToolBar(QMainWindow::tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolBar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setIconSize(QSize(18, 18));
    bar->addAction(refresh);
    bar->addSeparator();
    using A = ActionController;
    for (A::Kind kind : {A::RetrySelected, A::RequeueSelected, A::CancelSelected, A::ReplaySelected,
                         A::PurgeSelected}) {
        bar->addAction(actions->action(kind));
    }
    bar->addSeparator();
    bar->addAction(actions->action(A::RequeueMatching));
    bar->addAction(actions->action(A::PurgeOld));
    bar->addSeparator();
    bar->addAction(actions->action(A::CopyId));
    bar->addAction(actions->action(A::ExportJson));
    view->addAction(bar->toggleViewAction());
    addAccessLetters(view);
    return view;
}

} // namespace outbox::console
