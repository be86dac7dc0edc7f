#include "console/widgets/jobscontroller.h"

#include "console/model/joblistmodel.h"
#include "console/model/storeclient.h"
#include "console/widgets/actions.h"
#include "console/widgets/jobspanel.h"

#include <QAction>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QToolButton>

namespace outbox::console {

JobsController::JobsController(QMainWindow *window, ActionController *actions)
    : QObject(window)
    , m_window(window)
    , m_actions(actions)
    , m_model(new JobListModel(this))
    , m_panel(new JobsPanel(m_model))
    , m_dock(new QDockWidget(tr("Jobs"), window))
    , m_indicator(new QToolButton)
    , m_export(new QAction(QIcon(QStringLiteral(":/icons/export.svg")), tr("E&xport all matching…"),
                           this)) {
    m_dock->setObjectName(QStringLiteral("jobsDock")); // saveState() needs it
    m_dock->setWidget(m_panel);
    window->addDockWidget(Qt::BottomDockWidgetArea, m_dock);
    // The bottom area's two lists (dispatchers, jobs) are tabs of one dock
    // area: side by side each was a few columns wide.
    if (auto *dispatchers = window->findChild<QDockWidget *>(QStringLiteral("dispatchersDock")))
        window->tabifyDockWidget(dispatchers, m_dock);
    m_dock->hide(); // shown when a job starts, or from the View menu

    m_indicator->setObjectName(QStringLiteral("jobsIndicator"));
    m_indicator->setAutoRaise(true);
    m_indicator->setToolTip(tr("Show the background jobs"));
    window->statusBar()->addPermanentWidget(m_indicator);
    connect(m_indicator, &QToolButton::clicked, this, &JobsController::showPanel);

    m_export->setObjectName(QStringLiteral("exportMatchingAction"));
    m_export->setStatusTip(tr("Save every event the filter matches, one JSON object per line, "
                              "in the background"));
    m_actions->addMatchingAction(m_export);
    connect(m_export, &QAction::triggered, this, &JobsController::exportMatching);

    connect(actions, &ActionController::clientChanged, this, [this](StoreClient *client) {
        m_client = client;
        m_export->setEnabled(client != nullptr);
    });
    m_export->setEnabled(false);
    connect(actions, &ActionController::bulkStarted, this,
            [this](BulkJob *job, const QString &title) {
                m_model->addBulk(job, title);
                showPanel();
            });
    connect(m_model, &JobListModel::runningCountChanged, this, &JobsController::updateIndicator);
    connect(m_model, &JobListModel::jobEnded, this,
            [this](int, const QString &title, const QString &summary) {
                // What the job did, without its filter: the status bar is short.
                const QString what = title.section(QStringLiteral(" · "), 0, 0);
                m_window->statusBar()->showMessage(tr("%1: %2").arg(what, summary), 15000);
            });
    window->installEventFilter(this);
    updateIndicator();
}

void JobsController::showPanel() {
    m_dock->show();
    m_dock->raise();
    if (!m_sized && !m_dock->isFloating()) {
        // A few rows: the tables above keep most of the height.
        m_sized = true;
        m_window->resizeDocks({m_dock}, {m_panel->sizeHint().height() / 2 + 60}, Qt::Vertical);
    }
}

void JobsController::updateIndicator() {
    const int running = m_model->runningCount();
    m_indicator->setVisible(running > 0);
    m_indicator->setText(running == 1 ? tr("1 job running") : tr("%1 jobs running").arg(running));
}

void JobsController::exportMatching() {
    if (!m_client) {
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Export every matching event as JSON lines"),
        QStringLiteral("outbox-events.jsonl"), tr("JSON lines (*.jsonl *.ndjson);;All files (*)"));
    if (!path.isEmpty()) {
        startExport(path);
    }
}

void JobsController::startExport(const QString &path) {
    if (!m_client) {
        return;
    }
    const store::EventFilter filter = m_actions->currentFilter();
    ExportJob *job = m_client->startExport(filter, path, &eventJsonLine);
    const QString described = filter.describe();
    QString title = tr("Export to %1").arg(path);
    if (!described.isEmpty()) {
        title += QStringLiteral(" · ") + described;
    }
    m_model->addExport(job, title);
    showPanel();
}

bool JobsController::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_window && event->type() == QEvent::Close && !m_closeConfirmed &&
        m_model->runningCount() > 0) {
        event->ignore();
        askBeforeClose();
        return true;
    }
    return QObject::eventFilter(watched, event);
}

void JobsController::askBeforeClose() {
    if (m_asking) {
        return;
    }
    m_asking = true;
    showPanel();
    const int running = m_model->runningCount();
    auto *box =
        new QMessageBox(QMessageBox::Question, tr("Jobs are running"),
                        running == 1 ? tr("A background job is still running.")
                                     : tr("%1 background jobs are still running.").arg(running),
                        QMessageBox::NoButton, m_window);
    box->setObjectName(QStringLiteral("closeWithJobsBox"));
    box->setInformativeText(tr("Stopping ends each job after its current batch: what it changed "
                               "stays changed, an unfinished export is not saved."));
    QPushButton *stop = box->addButton(tr("&Stop jobs and close"), QMessageBox::DestructiveRole);
    stop->setObjectName(QStringLiteral("stopAndCloseButton"));
    QPushButton *keep = box->addButton(tr("&Keep running"), QMessageBox::RejectRole);
    keep->setObjectName(QStringLiteral("keepRunningButton"));
    box->setDefaultButton(keep);
    box->setEscapeButton(keep);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, stop] {
        m_asking = false;
        if (box->clickedButton() == stop) {
            m_model->stopAll();
            m_closeConfirmed = true;
            m_window->close();
        }
    });
    box->open();
}

} // namespace outbox::console
