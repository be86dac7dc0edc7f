#include "console/widgets/errorgroupsview.h"

#include "console/model/errorgroupmodel.h"
#include "console/model/filterstate.h"
#include "console/model/storeclient.h"

#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace outbox::console {

ErrorGroupsView::ErrorGroupsView(FilterState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_model(new ErrorGroupModel(this))
    , m_view(new QTableView(this))
    , m_caption(new QLabel(this)) {
    setObjectName(QStringLiteral("errorGroupsView"));
    m_view->setObjectName(QStringLiteral("errorGroupsTable"));
    m_view->setModel(m_model);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setShowGrid(false);
    m_view->verticalHeader()->hide();
    // Signatures are long and the dock is narrow: wrap them, rows grow.
    m_view->setWordWrap(true);
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setSectionResizeMode(ErrorGroupModel::SignatureColumn,
                                                     QHeaderView::Stretch);
    m_view->horizontalHeader()->setSectionResizeMode(ErrorGroupModel::CountColumn,
                                                     QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(ErrorGroupModel::LatestColumn,
                                                     QHeaderView::ResizeToContents);
    m_view->setToolTip(tr("Click a group to show only its events; click it again to show all."));
    m_caption->setObjectName(QStringLiteral("errorGroupsCaption"));
    m_caption->setWordWrap(true);
    m_caption->setContentsMargins(4, 2, 4, 2);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_caption);
    layout->addWidget(m_view);

    connect(m_view, &QTableView::clicked, this, &ErrorGroupsView::activate);
    m_view->installEventFilter(this); // Enter or Space does what a click does
    connect(m_state, &FilterState::changed, this, &ErrorGroupsView::showFilter);
    showFilter(m_state->filter());
}

ErrorGroupsView::~ErrorGroupsView() = default;

void ErrorGroupsView::activate(const QModelIndex &index) {
    if (!index.isValid()) {
        return;
    }
    const QString signature = index.data(ErrorGroupModel::SignatureRole).toString();
    // A second click on the active group removes the narrowing.
    m_state->setErrorSignature(signature == m_state->filter().errorSignature ? QString()
                                                                             : signature);
}

bool ErrorGroupsView::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_view && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter || key == Qt::Key_Space) {
            activate(m_view->currentIndex());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ErrorGroupsView::setClient(StoreClient *client) {
    if (m_client) {
        disconnect(m_client, nullptr, this, nullptr);
    }
    m_client = client;
    m_model->clear();
    if (!m_client) {
        return;
    }
    connect(m_client, &StoreClient::errorGroupsReady, this,
            [this](RequestId id, const ErrorGroupsResult &result) {
                if (id != m_requestId) {
                    return;
                }
                m_lastError.clear();
                m_model->applySnapshot(result);
                setActiveSignature(m_active);
                updateCaption();
            });
    connect(m_client, &StoreClient::requestFailed, this,
            [this](RequestId id, RequestKind, const core::Error &error) {
                if (id == m_requestId) {
                    m_lastError = error.message;
                    updateCaption();
                }
            });
}

void ErrorGroupsView::showFilter(const store::EventFilter &filter) {
    store::EventFilter events = filter;
    events.errorSignature.clear();
    if (!(events == m_filter)) {
        m_filter = events;
        refresh();
    }
    setActiveSignature(filter.errorSignature);
    updateCaption();
}

bool ErrorGroupsView::isGrouped(const store::EventFilter &filter) {
    // Delivered events rarely carry an error worth grouping, and there may be
    // millions of them: grouping them would scan the whole set every tick.
    return filter.status != core::Status::Delivered;
}

void ErrorGroupsView::refresh() {
    if (!isGrouped(m_filter)) {
        m_model->clear();
        updateCaption();
        return;
    }
    if (m_client) {
        m_requestId = m_client->requestErrorGroups(m_filter, 50, QStringLiteral("error-groups"));
    }
}

void ErrorGroupsView::setActiveSignature(const QString &signature) {
    m_active = signature;
    const int row = signature.isEmpty() ? -1 : m_model->rowOf(signature);
    if (row < 0) {
        m_view->clearSelection();
        return;
    }
    m_view->setCurrentIndex(m_model->index(row, 0));
}

void ErrorGroupsView::updateCaption() {
    if (!m_lastError.isEmpty()) {
        m_caption->setText(tr("Could not group errors: %1").arg(m_lastError));
        return;
    }
    if (!isGrouped(m_filter)) {
        m_caption->setText(tr("Errors are grouped for pending, processing and dead events."));
        return;
    }
    const QString scope = m_filter.status ? core::statusName(*m_filter.status) : tr("dead");
    if (m_model->rowCount() == 0) {
        m_caption->setText(tr("No errors among the %1 events in view.").arg(scope));
        return;
    }
    // The kinds are counted before the limit on rows shown; a sample says so.
    const store::ErrorGroupSet &summary = m_model->summary();
    const qint64 kinds = std::max<qint64>(summary.kinds, m_model->rowCount());
    QString among = summary.sampled ? tr("among the newest %1 %2 events in view (a sample)")
                                          .arg(formatCount(summary.grouped), scope)
                                    : tr("among the %1 events in view").arg(scope);
    if (summary.searchedNewest > 0 && !summary.sampled)
        among = tr("among the matching events of the newest %1 %2 events (the search reads no "
                   "further)")
                    .arg(formatCount(summary.searchedNewest), scope);
    QString text = kinds == 1 ? tr("1 kind of error %1").arg(among)
                              : tr("%1 kinds of error %2").arg(formatCount(kinds), among);
    if (kinds > m_model->rowCount()) {
        text += tr(", the %1 largest").arg(m_model->rowCount());
    }
    if (summary.stale && summary.groupedAt.isValid()) {
        text += tr(" (as of %1)").arg(formatRelativeTime(summary.groupedAt, m_model->serverTime()));
    }
    m_caption->setText(text + QLatin1Char(':'));
}

} // namespace outbox::console
