#include "console/widgets/dispatchersview.h"

#include "console/model/consoletypes.h"
#include "console/model/statusnavmodel.h"
#include "console/widgets/destinationstable.h"
#include "console/widgets/detailpane.h"

#include <QAbstractItemView>
#include <QDockWidget>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QScrollBar>
#include <QStatusBar>
#include <QStyle>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace outbox::console {

namespace {

// What an operator looks for first on the left; the host and its process in
// one column, the worker id (long, rarely read) in that column's tooltip, so
// that every column fits a pane of a laptop's bottom area.
enum Column { State, Heartbeat, Dispatcher, Namespace, InFlight, Rate, Started, Version, Count };

QString scopeText(const QString &nameSpace, const std::optional<QString> &topic) {
    return topic ? QObject::tr("topic %1 of %2").arg(*topic, nameSpace)
                 : QObject::tr("namespace %1").arg(nameSpace);
}

} // namespace

DispatchersView::DispatchersView(QMainWindow *window, QAbstractItemView *navigator,
                                 DispatchActivity *activity, DetailPane *detail)
    : QWidget(window)
    , m_window(window)
    , m_navigator(navigator)
    , m_activity(activity)
    , m_detail(detail)
    , m_table(new QTableWidget(0, Count))
    , m_destinations(new DestinationsTable)
    , m_summary(new QLabel)
    , m_pauses(new QLabel) {
    setObjectName(QStringLiteral("dispatchersView"));
    m_table->setObjectName(QStringLiteral("dispatchersTable"));
    m_table->setHorizontalHeaderLabels({tr("State"), tr("Heartbeat"), tr("Dispatcher"),
                                        tr("Namespace"), tr("In flight"), tr("Delivered/s"),
                                        tr("Started"), tr("Version")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    // Each column as wide as its contents: fitDock() asks for that much room.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_summary->setObjectName(QStringLiteral("dispatchersSummary"));
    m_pauses->setObjectName(QStringLiteral("pausesLabel"));
    m_pauses->setWordWrap(true);
    m_summary->setText(tr("Not connected."));
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_destinations, 1);
    layout->addWidget(m_pauses);

    auto *dock = new QDockWidget(tr("Dispatchers"), window);
    dock->setObjectName(QStringLiteral("dispatchersDock"));
    dock->setWidget(this);
    window->addDockWidget(Qt::BottomDockWidgetArea, dock);
    dock->hide();
    // Shown lower than a handful of dispatchers (the bottom area is shared
    // with the jobs panel, sized for a few jobs) or narrower than its
    // columns (beside the charts): grow to fit them, once per showing.
    m_dock = dock;
    connect(dock, &QDockWidget::visibilityChanged, this, [dock, this](bool visible) {
        if (!visible || dock->isFloating())
            return;
        m_fitPending = true;
        QTimer::singleShot(0, this, &DispatchersView::fitDock);
    });

    m_navigator->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_navigator, &QWidget::customContextMenuRequested, this,
            &DispatchersView::showNavigatorMenu);
    connect(&m_watcher, &RegistryWatcher::snapshotReady, this, &DispatchersView::showSnapshot);
    connect(&m_watcher, &RegistryWatcher::failed, this, [this](const QString &message) {
        m_summary->setText(tr("Registry not available: %1").arg(message));
    });
    connect(m_destinations, &DestinationsTable::pauseRequested, this, [this](const QString &name) {
        if (const auto reason = askReason(tr("destination %1").arg(name)))
            m_watcher.pauseDestination(name, *reason);
    });
    connect(m_destinations, &DestinationsTable::resumeRequested, &m_watcher,
            &RegistryWatcher::resumeDestination);
    connect(&m_watcher, &RegistryWatcher::actionFinished, this,
            [this](bool, const QString &message) {
                m_window->statusBar()->showMessage(message, 15000);
            });
}

void DispatchersView::fitDock() {
    if (!m_fitPending || !m_dock->isVisible() || m_dock->isFloating())
        return;
    // The summary, the header, five rows and a pause line.
    const int height =
        m_table->verticalHeader()->defaultSectionSize() * 7 + m_summary->sizeHint().height() * 3;
    if (m_dock->height() < height)
        m_window->resizeDocks({m_dock}, {height}, Qt::Vertical);
    if (m_table->rowCount() == 0)
        return; // the widths come with the first rows
    m_fitPending = false;
    // Every column as wide as its title and texts (the header sizes them),
    // a scroll bar, the table's frame, the margins and the dock's frame:
    // from the style, since a dock shown a moment ago may not be laid out.
    const QMargins margins = layout()->contentsMargins();
    const int width = m_table->horizontalHeader()->length() +
                      m_table->verticalScrollBar()->sizeHint().width() + 2 * m_table->frameWidth() +
                      margins.left() + margins.right() +
                      2 * style()->pixelMetric(QStyle::PM_DockWidgetFrameWidth, nullptr, m_dock);
    if (m_dock->width() >= width)
        return;
    // Taken from the panes beside it in its area (given one size alone,
    // QMainWindow shares the change out among all of them).
    QList<QDockWidget *> row{m_dock};
    QList<int> widths{width};
    const int rest = std::max(0, m_window->width() - width);
    int others = 0;
    const QList<QDockWidget *> tabs = m_window->tabifiedDockWidgets(m_dock);
    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>()) {
        if (dock != m_dock && !tabs.contains(dock) && dock->isVisible() && !dock->isFloating() &&
            m_window->dockWidgetArea(dock) == m_window->dockWidgetArea(m_dock)) {
            row << dock;
            others += dock->width();
        }
    }
    for (qsizetype i = 1; i < row.size(); ++i)
        widths << int(qint64(rest) * row.at(i)->width() / std::max(1, others));
    m_window->resizeDocks(row, widths, Qt::Horizontal);
}

void DispatchersView::setConnInfo(const core::ConnInfo &info) {
    m_snapshot.reset();
    m_activity->registry.reset(); // another database: nothing known until the first read
    m_watcher.setConnInfo(info);
}

void DispatchersView::showSnapshot(const RegistrySnapshot &snapshot) {
    m_snapshot = snapshot;
    const store::DispatcherList &list = snapshot.dispatchers;
    m_table->setRowCount(int(list.entries.size()));
    for (int row = 0; row < list.entries.size(); ++row) {
        const store::DispatcherEntry &e = list.entries.at(row);
        const QStringList texts{e.alive ? e.state : tr("gone"),
                                formatRelativeTime(e.heartbeatAt, list.serverTime),
                                tr("%1 (%2)").arg(e.host).arg(e.pid),
                                e.nameSpace.isEmpty() ? tr("(all)") : e.nameSpace,
                                tr("%1 / %2").arg(e.inFlight).arg(e.concurrency),
                                QString::number(e.deliveredPerSecond, 'f', 1),
                                formatRelativeTime(e.startedAt, list.serverTime),
                                e.version};
        for (int column = 0; column < texts.size(); ++column) {
            auto *item = new QTableWidgetItem(texts.at(column));
            if (!e.alive)
                item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            if (column == Dispatcher)
                item->setToolTip(tr("Host %1, process %2, worker %3\n%4, database user %5, "
                                    "runner %6")
                                     .arg(e.host)
                                     .arg(e.pid)
                                     .arg(e.workerId.toString(QUuid::WithoutBraces), e.application,
                                          e.dbUser, e.runnerUrl));
            if (column == Started)
                item->setToolTip(
                    e.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
            m_table->setItem(row, column, item);
        }
    }
    fitDock();
    m_summary->setText(
        list.entries.isEmpty()
            ? tr("No dispatcher has registered.")
            : tr("%1 alive of %2 registered.").arg(list.aliveCount()).arg(list.entries.size()));
    QStringList pauses;
    for (const store::Pause &pause : snapshot.pauses)
        pauses << tr("Paused: %1 by %2, %3: %4")
                      .arg(scopeText(pause.nameSpace, pause.topic), pause.pausedBy,
                           formatRelativeTime(pause.pausedAt, list.serverTime), pause.reason);
    for (const store::DestinationPause &pause : snapshot.destinationPauses)
        pauses << tr("Paused: destination %1 by %2, %3: %4")
                      .arg(pause.destination, pause.pausedBy,
                           formatRelativeTime(pause.pausedAt, list.serverTime), pause.reason);
    Q_EMIT openCircuitsChanged(m_destinations->showSnapshot(snapshot));
    m_pauses->setText(pauses.join(QLatin1Char('\n')));
    m_pauses->setVisible(!pauses.isEmpty());
    m_activity->registry = snapshot;
    m_detail->setDispatchActivity(*m_activity);
}

void DispatchersView::showNavigatorMenu(const QPoint &pos) {
    const QModelIndex index = m_navigator->indexAt(pos);
    const auto kind = StatusNavModel::NodeKind(index.data(StatusNavModel::KindRole).toInt());
    if (!index.isValid() ||
        (kind != StatusNavModel::NodeKind::Namespace && kind != StatusNavModel::NodeKind::Topic))
        return;
    const store::EventFilter filter = StatusNavModel::filterAt(index);
    const QString nameSpace = filter.nameSpace;
    const std::optional<QString> topic = kind == StatusNavModel::NodeKind::Topic
                                             ? std::optional<QString>(filter.topic)
                                             : std::nullopt;
    bool paused = false;
    if (m_snapshot) {
        for (const store::Pause &pause : m_snapshot->pauses)
            paused = paused || (pause.nameSpace == nameSpace && (!topic || pause.topic == topic));
    }
    QMenu menu(m_navigator);
    QAction *pause = menu.addAction(tr("&Pause %1…").arg(scopeText(nameSpace, topic)));
    pause->setObjectName(QStringLiteral("pauseAction"));
    QAction *resume = menu.addAction(tr("&Resume %1").arg(scopeText(nameSpace, topic)));
    resume->setObjectName(QStringLiteral("resumeAction"));
    resume->setEnabled(paused || !m_snapshot);
    QAction *chosen = menu.exec(m_navigator->viewport()->mapToGlobal(pos));
    if (chosen == pause)
        askPause(nameSpace, topic);
    else if (chosen == resume)
        m_watcher.resume(nameSpace, topic);
}

void DispatchersView::askPause(const QString &nameSpace, const std::optional<QString> &topic) {
    if (const auto reason = askReason(scopeText(nameSpace, topic)))
        m_watcher.pause(nameSpace, topic, *reason);
}

std::optional<QString> DispatchersView::askReason(const QString &what) {
    bool ok = false;
    const QString reason =
        QInputDialog::getText(m_window, tr("Pause delivery"),
                              tr("Dispatchers stop claiming events of %1 within a poll "
                                 "interval; they stay pending until resumed.\nWhy? (shown to "
                                 "everybody and audited)")
                                  .arg(what),
                              QLineEdit::Normal, QString(), &ok)
            .trimmed();
    if (!ok)
        return std::nullopt;
    if (reason.isEmpty()) {
        m_window->statusBar()->showMessage(tr("Not paused: a reason is required."), 15000);
        return std::nullopt;
    }
    return reason;
}

} // namespace outbox::console
