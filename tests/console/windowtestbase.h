#pragma once

// What the main-window tests share: one throwaway cluster per executable
// (migrated with the least-privilege roles), a fresh database and settings
// file per test, and a MainWindow connected to it. The tests reach the
// window's parts the way a user sees them: by type and object name, through
// its tabs, menus' actions and status bar.

#include "console/model/consolesettings.h"
#include "console/widgets/actions.h"
#include "console/widgets/eventview.h"
#include "console/widgets/mainwindow.h"
#include "support/pgtestcase.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QObject>
#include <QSettings>
#include <QSqlDatabase>
#include <QTemporaryDir>
#include <QTimer>

#include <functional>
#include <memory>

namespace outbox::testing {

constexpr int kWindowTimeout = 20000;

// "{id,id}" for binding to a uuid[] parameter.
QString uuidArray(const QList<QUuid> &ids);

class WindowTestBase : public QObject, protected PgTestCase {
    Q_OBJECT

private Q_SLOTS:
    // The fixture every window suite runs (QtTest finds these slots in the
    // base class); a suite that needs more defines its own slot, calling the
    // helper below.
    void initTestCase() { startCluster(); }
    void init() { setUpDatabase(); }
    void cleanup() { tearDownDatabase(); }
    void cleanupTestCase() { stopCluster(); }

protected:
    void startCluster();
    void setUpDatabase();
    void tearDownDatabase();
    void stopCluster();

    // A window on the test's database (as `user` when given), shown and
    // connected. Health checks and reconnects are quick.
    void openWindow(bool readOnly = false, const QString &user = {});
    // `count` dead events of one namespace with errors "<error> <n>" and,
    // with a prefix, dedupe keys "<prefix><n>".
    void insertDead(int count, const QString &nameSpace, const QString &error,
                    const QString &dedupePrefix = {});
    // Shows the status page and waits until it holds `rows` rows; its model
    // (the view's proxy) is checked by a QAbstractItemModelTester.
    console::EventView *showLoaded(core::Status status, int rows);

    // The window's child of type T (and object name, when given); null when
    // there is none.
    template <typename T> T *part(const QString &name = {}) const {
        return m_window->findChild<T *>(name);
    }
    console::ActionController *actions() const { return part<console::ActionController>(); }
    QAction *action(console::ActionController::Kind kind) const;
    console::EventView *page(core::Status status) const;
    console::EventView *currentPage() const;
    // Clicks the page's tab.
    void showPage(core::Status status);
    // View > Refresh.
    void refresh();
    // What the status bar says.
    bool isConnected() const;
    QString connectionText() const;
    bool isLive() const;
    // Clicks the rows of these ids (the first one plain, the others with
    // Ctrl), as a user selects them; returns how many rows are selected, or
    // -1 when a row not asked for is.
    int clickRows(console::EventView *view, const QList<QUuid> &ids);
    // clickRows() on the events at these row positions: their ids, or none
    // (with a warning) when the selection is not exactly those rows.
    QList<QUuid> clickRowsAt(console::EventView *view, const QList<int> &rows);
    // Ctrl+A in the page's table.
    void selectAllRows(console::EventView *view);
    // The detail pane: its title (the event's id once one is chosen), the
    // "why" line and the payload.
    QString detailTitle() const;
    QString detailExplanation() const;
    QString detailPayload() const;
    // Clicks the live toggle in the status bar when it is not in `live` state.
    void setLive(bool live);
    // Runs `answer` on the next modal dialog of type T once it is up: the
    // confirmations and the file dialog run their own event loop, so the
    // answer has to come from a timer.
    template <typename T> void answerNext(std::function<void(T *)> answer) {
        auto *poll = new QTimer(m_window.get());
        poll->setInterval(20);
        QObject::connect(poll, &QTimer::timeout, poll, [poll, answer] {
            if (auto *dialog = qobject_cast<T *>(QApplication::activeModalWidget())) {
                poll->stop();
                poll->deleteLater();
                answer(dialog);
            }
        });
        poll->start();
    }
    // Triggers `action`, which asks where to save, and saves under the
    // suggested name in the test's directory (the working directory
    // meanwhile, where the file dialog opens): the path saved to, empty when
    // no file dialog came.
    QString saveAs(QAction *action);
    QString scalar(const QString &sql, const QVariantList &values = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<QSettings> m_qsettings;
    std::unique_ptr<console::ConsoleSettings> m_settings;
    std::unique_ptr<console::MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
};

} // namespace outbox::testing
