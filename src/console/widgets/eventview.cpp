#include "console/widgets/eventview.h"

#include "console/model/consolesettings.h"
#include "console/model/eventtablemodel.h"

#include <QEvent>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QScrollBar>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

using Col = EventTableModel::Column;

QList<int> hiddenByDefault(core::Status status) {
    switch (status) {
    case core::Status::Pending:
        return {Col::TenantColumn, Col::LeaseHolderColumn, Col::LeaseRemainingColumn};
    case core::Status::Processing:
        return {Col::StatusColumn, Col::TenantColumn, Col::NextAttemptColumn};
    case core::Status::Delivered:
        return {Col::StatusColumn,      Col::TenantColumn,         Col::NextAttemptColumn,
                Col::LeaseHolderColumn, Col::LeaseRemainingColumn, Col::LastErrorColumn};
    case core::Status::Dead:
        return {Col::StatusColumn, Col::TenantColumn, Col::NextAttemptColumn,
                Col::LeaseHolderColumn, Col::LeaseRemainingColumn};
    }
    return {};
}

bool sortsOnServer(int column) {
    // Ids are UUID v7, so they sort like created_at.
    return column == Col::CreatedColumn || column == Col::IdColumn;
}

} // namespace

EventView::EventView(core::Status status, ConsoleSettings *settings, QWidget *parent)
    : QWidget(parent)
    , m_status(status)
    , m_settings(settings)
    , m_model(new EventTableModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_table(new QTableView(this))
    , m_placeholder(new QLabel(m_table))
    , m_newRows(new QToolButton(m_table)) {
    setObjectName(QStringLiteral("eventView_") + viewKey());
    // Rows removed by a refresh move the current index to a neighbour; the
    // operator's choice stays (see keepChosenRow). Connected before the
    // proxy and the selection model, so that it is known before they move it.
    connect(m_model, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            [this] { m_rowsMoving = true; });
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(EventTableModel::RawRole);
    m_proxy->setDynamicSortFilter(true);

    m_table->setObjectName(QStringLiteral("eventTable_") + viewKey());
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 8);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);

    QHeaderView *header = m_table->horizontalHeader();
    header->setSectionsMovable(true);
    header->setSectionsClickable(true);
    header->setSortIndicatorShown(true);
    header->setHighlightSections(false);
    header->setStretchLastSection(true);
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    header->setToolTip(tr("Click Age or ID to sort on the server (newest or oldest first); other "
                          "columns sort the rows loaded so far. Right-click to choose columns."));
    connect(header, &QHeaderView::customContextMenuRequested, this, &EventView::showColumnMenu);
    connect(header, &QHeaderView::sectionClicked, this, &EventView::onHeaderClicked);

    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setWordWrap(true);
    m_placeholder->setObjectName(QStringLiteral("placeholder"));
    m_placeholder->setStyleSheet(QStringLiteral("color: palette(mid); font-size: 13pt;"));
    m_placeholder->setAttribute(Qt::WA_TransparentForMouseEvents);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_table);

    applyDefaultColumns();
    m_defaultHeaderState = header->saveState();
    restoreLayout();

    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        Q_EMIT contextMenuRequested(m_table->viewport()->mapToGlobal(pos));
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &EventView::onCurrentRowChanged);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EventView::selectionChanged);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EventView::updateHold);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &EventView::placeNewRowsButton);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &EventView::keepChosenRow);

    m_newRows->setObjectName(QStringLiteral("newRowsButton"));
    m_newRows->setIcon(QIcon(QStringLiteral(":/icons/refresh.svg")));
    m_newRows->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_newRows->hide();
    // Not a Tab stop (it comes and goes under the keyboard's feet): Alt+N
    // takes the new rows in, as its tooltip says.
    m_newRows->setFocusPolicy(Qt::NoFocus);
    m_newRows->setToolTip(tr("Show the events that came in while you were working here (Alt+N)"));
    connect(m_newRows, &QToolButton::clicked, m_model, &EventTableModel::showHeldRows);
    auto *showNew = new QShortcut(QKeySequence(int(Qt::ALT) | int(Qt::Key_N)), this);
    showNew->setContext(Qt::WidgetWithChildrenShortcut);
    connect(showNew, &QShortcut::activated, this, [this] {
        if (m_newRows->isVisible())
            m_newRows->click();
    });
    // Never over the chosen row: placed again when the selection or the
    // scroll position moves.
    connect(m_table->verticalScrollBar(), &QScrollBar::valueChanged, this,
            &EventView::placeNewRowsButton);
    connect(m_model, &EventTableModel::heldRowsChanged, this, &EventView::updateNewRowsButton);
    m_table->viewport()->installEventFilter(this);
    connect(m_model, &EventTableModel::loadFailed, this, [this](const QString &message) {
        m_loadError = message;
        updatePlaceholder();
    });
    connect(m_model, &EventTableModel::refreshed, this, [this] {
        m_loadError.clear();
        updatePlaceholder();
        if (!m_table->selectionModel()->currentIndex().isValid()) {
            selectChosenRow(); // chosen before its row was loaded
        }
    });
    connect(m_model, &EventTableModel::loadingChanged, this, &EventView::updatePlaceholder);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &EventView::updatePlaceholder);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &EventView::updatePlaceholder);
    connect(m_model, &QAbstractItemModel::modelReset, this, &EventView::updatePlaceholder);
    // A new query (filter or order) drops the rows and the selection without
    // a currentRowChanged: say so, or the detail pane would keep showing an
    // event the filter hides.
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_chosen = QUuid();
        Q_EMIT currentEventChanged(QUuid());
    });
    updatePlaceholder();
}

EventView::~EventView() = default;

QString EventView::viewKey() const {
    return core::statusName(m_status);
}

void EventView::setClient(StoreClient *client) {
    m_model->setClient(client);
}

void EventView::setFilter(const store::EventFilter &filter) {
    if (filter == m_model->filter() && m_model->rowCount() > 0) {
        refresh();
        return;
    }
    m_loadError.clear();
    m_model->setQuery(filter, m_model->order());
}

const store::EventFilter &EventView::filter() const {
    return m_model->filter();
}

void EventView::refresh() {
    m_model->refresh();
}

QList<core::OutboxEvent> EventView::selectedEvents() const {
    // Selection order is click order; act in the model's (server's) order.
    QList<int> sourceRows;
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    sourceRows.reserve(rows.size());
    for (const QModelIndex &index : rows) {
        sourceRows.append(m_proxy->mapToSource(index).row());
    }
    std::sort(sourceRows.begin(), sourceRows.end());
    QList<core::OutboxEvent> events;
    events.reserve(sourceRows.size());
    for (int row : std::as_const(sourceRows)) {
        events.append(m_model->eventAt(row));
    }
    return events;
}

std::optional<core::OutboxEvent> EventView::currentEvent() const {
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (!current.isValid()) {
        return std::nullopt;
    }
    return m_model->eventAt(m_proxy->mapToSource(current).row());
}

void EventView::applyDefaultColumns() {
    QHeaderView *header = m_table->horizontalHeader();
    const int charWidth = m_table->fontMetrics().horizontalAdvance(QLatin1Char('0'));
    const QList<QPair<int, int>> widths{
        {Col::IdColumn, 14},          {Col::StatusColumn, 9},
        {Col::NamespaceColumn, 11},   {Col::TopicColumn, 16},
        {Col::TenantColumn, 37},      {Col::DedupeKeyColumn, 14},
        {Col::AttemptsColumn, 8},     {Col::NextAttemptColumn, 12},
        {Col::LeaseHolderColumn, 11}, {Col::LeaseRemainingColumn, 15},
        {Col::LastErrorColumn, 50},   {Col::CreatedColumn, 10},
    };
    for (const auto &[column, chars] : widths) {
        header->resizeSection(column, chars * charWidth + 12);
        header->setSectionHidden(column, false);
    }
    for (int column : hiddenByDefault(m_status)) {
        header->setSectionHidden(column, true);
    }
    // Age first: the newest-first list is read by it; then the id, whose
    // start is enough to tell rows apart and to find one (the tooltip has it
    // whole). The last error, the longest text, goes last and takes the width
    // left; at a usual window size every other column is on screen.
    const QList<int> order{Col::CreatedColumn,        Col::IdColumn,
                           Col::StatusColumn,         Col::NamespaceColumn,
                           Col::TopicColumn,          Col::TenantColumn,
                           Col::DedupeKeyColumn,      Col::AttemptsColumn,
                           Col::NextAttemptColumn,    Col::LeaseHolderColumn,
                           Col::LeaseRemainingColumn, Col::LastErrorColumn};
    static_assert(Col::ColumnCount == 12);
    for (int i = 0; i < order.size(); ++i) {
        header->moveSection(header->visualIndex(order.at(i)), i);
    }
    header->setSortIndicator(Col::CreatedColumn, Qt::DescendingOrder);
}

void EventView::saveLayout() {
    if (m_settings) {
        m_settings->setHeaderState(viewKey(), m_table->horizontalHeader()->saveState());
    }
}

void EventView::restoreLayout() {
    if (!m_settings) {
        return;
    }
    const QByteArray state = m_settings->headerState(viewKey());
    if (!state.isEmpty() && !m_table->horizontalHeader()->restoreState(state)) {
        m_table->horizontalHeader()->restoreState(m_defaultHeaderState);
    }
    // The saved indicator may name a client-side sort; start in server order.
    m_proxy->sort(-1);
    m_table->horizontalHeader()->setSortIndicator(
        Col::CreatedColumn, m_model->order() == store::SortOrder::NewestFirst ? Qt::DescendingOrder
                                                                              : Qt::AscendingOrder);
}

void EventView::resetLayout() {
    m_table->horizontalHeader()->restoreState(m_defaultHeaderState);
    for (int i = 0; i < Col::ColumnCount; ++i) {
        m_table->horizontalHeader()->moveSection(m_table->horizontalHeader()->visualIndex(i), i);
    }
    applyDefaultColumns();
    m_proxy->sort(-1);
    saveLayout();
}

void EventView::showColumnMenu(const QPoint &pos) {
    QHeaderView *header = m_table->horizontalHeader();
    QMenu menu(this);
    menu.setObjectName(QStringLiteral("columnMenu"));
    int visible = 0;
    for (int column = 0; column < Col::ColumnCount; ++column) {
        visible += header->isSectionHidden(column) ? 0 : 1;
    }
    for (int column = 0; column < Col::ColumnCount; ++column) {
        QAction *action =
            menu.addAction(m_model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
        action->setCheckable(true);
        action->setChecked(!header->isSectionHidden(column));
        // The last visible column cannot be hidden: the table would vanish.
        action->setEnabled(header->isSectionHidden(column) || visible > 1);
        connect(action, &QAction::toggled, this, [this, header, column](bool on) {
            header->setSectionHidden(column, !on);
            saveLayout();
        });
    }
    menu.addSeparator();
    menu.addAction(tr("Reset columns"), this, &EventView::resetLayout);
    menu.exec(header->viewport()->mapToGlobal(pos));
}

void EventView::onHeaderClicked(int section) {
    QHeaderView *header = m_table->horizontalHeader();
    if (sortsOnServer(section)) {
        const store::SortOrder next = m_model->order() == store::SortOrder::NewestFirst
                                          ? store::SortOrder::OldestFirst
                                          : store::SortOrder::NewestFirst;
        m_proxy->sort(-1);
        m_model->setQuery(m_model->filter(), next);
        header->setSortIndicator(section, next == store::SortOrder::NewestFirst
                                              ? Qt::DescendingOrder
                                              : Qt::AscendingOrder);
        return;
    }
    const Qt::SortOrder order =
        m_proxy->sortColumn() == section && m_proxy->sortOrder() == Qt::AscendingOrder
            ? Qt::DescendingOrder
            : Qt::AscendingOrder;
    m_proxy->sort(section, order);
    header->setSortIndicator(section, order);
}

void EventView::onCurrentRowChanged(const QModelIndex &current) {
    if (m_rowsMoving) {
        return; // a refresh moved the current index, not the operator
    }
    m_chosen = current.isValid() ? current.data(EventTableModel::IdRole).toUuid() : QUuid();
    Q_EMIT currentEventChanged(m_chosen);
}

void EventView::keepChosenRow() {
    const int row = m_chosen.isNull() ? -1 : m_model->rowOf(m_chosen);
    QItemSelectionModel *selection = m_table->selectionModel();
    const QModelIndex chosen =
        row < 0 ? QModelIndex() : m_proxy->mapFromSource(m_model->index(row, 0));
    if (selection->currentIndex().row() != chosen.row() ||
        selection->currentIndex().isValid() != chosen.isValid()) {
        // The chosen event left the page: no row is current (rather than a
        // neighbour the operator did not choose), and the detail stays on it.
        selection->setCurrentIndex(chosen, QItemSelectionModel::NoUpdate);
    }
    m_rowsMoving = false;
}

void EventView::selectEvent(const QUuid &id) {
    m_chosen = id;
    selectChosenRow();
}

bool EventView::selectChosenRow() {
    const int row = m_chosen.isNull() ? -1 : m_model->rowOf(m_chosen);
    if (row < 0) {
        return false;
    }
    const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
    m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
    m_table->scrollTo(index);
    return true;
}

bool EventView::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_table->viewport() &&
        (event->type() == QEvent::Enter || event->type() == QEvent::Leave)) {
        updateHold();
    }
    return QWidget::eventFilter(watched, event);
}

void EventView::updateHold() {
    // Rows only come in while nobody is pointing at or working on them.
    m_model->setHoldNewRows(m_table->viewport()->underMouse() ||
                            m_table->selectionModel()->hasSelection());
}

void EventView::updateNewRowsButton() {
    const int held = m_model->heldRows();
    m_newRows->setVisible(held > 0);
    if (held == 0) {
        return;
    }
    m_newRows->setText(held == 1 ? tr("1 new event: show it")
                                 : tr("%1 new events: show them").arg(held));
    m_newRows->adjustSize();
    placeNewRowsButton();
    m_newRows->raise();
}

void EventView::placeNewRowsButton() {
    if (!m_newRows->isVisible())
        return;
    // At the top of the rows, or at their bottom when the chosen row is
    // under the top place.
    const QRect area = m_table->viewport()->geometry();
    const int x = area.left() + (area.width() - m_newRows->width()) / 2;
    QRect place(QPoint(x, area.top() + 4), m_newRows->size());
    const QModelIndex current = m_table->selectionModel()->currentIndex();
    if (current.isValid() && m_table->selectionModel()->isRowSelected(current.row(), {})) {
        const QRect chosen = m_table->visualRect(current).translated(area.topLeft());
        if (QRect(area.left(), chosen.top(), area.width(), chosen.height()).intersects(place))
            place.moveBottom(area.bottom() - 4);
    }
    m_newRows->move(place.topLeft());
}

void EventView::updatePlaceholder() {
    QString text;
    if (!m_loadError.isEmpty() && m_model->rowCount() == 0) {
        text = tr("Could not load events:\n%1").arg(m_loadError);
    } else if (m_model->rowCount() == 0) {
        // Only before the first answer: a live re-read of an empty result
        // keeps saying "no match" instead of flickering.
        text = m_model->isLoading() && !m_model->hasAnswer()
                   ? tr("Loading…")
                   : tr("No %1 events match.").arg(core::statusName(m_status));
    }
    m_placeholder->setText(text);
    m_placeholder->setVisible(!text.isEmpty());
    m_placeholder->setGeometry(m_table->viewport()->geometry());
}

void EventView::resizeEvent(QResizeEvent *event) {
    QWidget::resizeEvent(event);
    m_placeholder->setGeometry(m_table->viewport()->geometry());
}

} // namespace outbox::console
