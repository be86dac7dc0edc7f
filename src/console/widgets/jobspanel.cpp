#include "console/widgets/jobspanel.h"

#include "console/model/joblistmodel.h"

#include <QApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTreeView>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

// Draws the progress column as a progress bar with its text, and the stop
// column as a button.
class JobDelegate final : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override {
        QStyle *style = option.widget ? option.widget->style() : QApplication::style();
        if (index.column() == JobListModel::ProgressColumn) {
            const auto state = index.data(JobListModel::StateRole).value<JobListModel::State>();
            if (state == JobListModel::State::Running || state == JobListModel::State::Stopping) {
                QStyleOptionProgressBar bar;
                bar.rect = option.rect.adjusted(2, 3, -2, -3);
                bar.state = option.state | QStyle::State_Horizontal;
                const int permille = index.data(JobListModel::PermilleRole).toInt();
                bar.minimum = 0;
                bar.maximum = permille < 0 ? 0 : 1000; // busy indicator while counting
                bar.progress = std::max(0, permille);
                bar.text = index.data().toString();
                bar.textVisible = true;
                bar.textAlignment = Qt::AlignCenter;
                style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
                return;
            }
        }
        if (index.column() == JobListModel::StopColumn &&
            index.data(JobListModel::CanStopRole).toBool()) {
            QStyleOptionButton button;
            button.rect = option.rect.adjusted(2, 1, -2, -1);
            button.text = index.data().toString();
            button.state = QStyle::State_Enabled | QStyle::State_Raised;
            style->drawControl(QStyle::CE_PushButton, &button, painter, option.widget);
            return;
        }
        QStyledItemDelegate::paint(painter, option, index);
    }

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override {
        QSize size = QStyledItemDelegate::sizeHint(option, index);
        size.setHeight(std::max(size.height(), option.fontMetrics.height() + 12));
        return size;
    }
};

} // namespace

JobsPanel::JobsPanel(JobListModel *model, QWidget *parent)
    : QWidget(parent)
    , m_model(model)
    , m_view(new QTreeView)
    , m_empty(new QLabel(tr("No background jobs. Bulk actions and exports run here while you "
                            "keep working.")))
    , m_stop(new QPushButton(tr("&Stop job")))
    , m_clear(new QPushButton(tr("C&lear finished"))) {
    setObjectName(QStringLiteral("jobsPanel"));
    m_view->setObjectName(QStringLiteral("jobsView"));
    m_stop->setObjectName(QStringLiteral("stopJobButton"));
    m_clear->setObjectName(QStringLiteral("clearJobsButton"));
    m_empty->setObjectName(QStringLiteral("jobsEmptyLabel"));
    m_empty->setWordWrap(true);
    m_empty->setEnabled(false);
    m_stop->setToolTip(tr("Stop the chosen job after its current batch; what it changed stays "
                          "changed, a stopped export saves nothing"));

    m_view->setModel(model);
    m_view->setRootIsDecorated(false);
    m_view->setUniformRowHeights(true);
    m_view->setAllColumnsShowFocus(true);
    m_view->setItemDelegate(new JobDelegate(m_view));
    QHeaderView *header = m_view->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(JobListModel::TitleColumn, QHeaderView::Stretch);
    // The title and the bar share what the figures leave, so that Rate and
    // Time left stay in view in a narrow pane (they were pushed off it).
    header->setSectionResizeMode(JobListModel::ProgressColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(JobListModel::RateColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(JobListModel::RemainingColumn, QHeaderView::ResizeToContents);
    header->setSectionResizeMode(JobListModel::StopColumn, QHeaderView::Fixed);
    header->resizeSection(JobListModel::StopColumn, 70);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_empty);
    buttons->addStretch(1);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_clear);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_view, 1);
    layout->addLayout(buttons);

    connect(m_view, &QTreeView::clicked, this, [this](const QModelIndex &index) {
        if (index.column() == JobListModel::StopColumn) {
            m_model->stop(index.row());
        }
    });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        if (m_view->currentIndex().isValid()) {
            m_model->stop(m_view->currentIndex().row());
        }
    });
    connect(m_clear, &QPushButton::clicked, m_model, &JobListModel::clearFinished);
    connect(m_model, &QAbstractItemModel::dataChanged, this, &JobsPanel::updateButtons);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this](const QModelIndex &, int row) {
        // The newest job becomes the current one: Stop acts on it.
        m_view->setCurrentIndex(m_model->index(row, 0));
        updateButtons();
    });
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &JobsPanel::updateButtons);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &JobsPanel::updateButtons);
    updateButtons();
}

void JobsPanel::updateButtons() {
    const QModelIndex current = m_view->currentIndex();
    m_stop->setEnabled(current.isValid() && current.data(JobListModel::CanStopRole).toBool());
    const int running = m_model->runningCount();
    m_clear->setEnabled(m_model->rowCount() > running);
    m_empty->setVisible(m_model->rowCount() == 0);
}

} // namespace outbox::console
