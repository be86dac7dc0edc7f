#pragma once

#include <QWidget>

class QLabel;
class QPushButton;
class QTreeView;

namespace outbox::console {

class JobListModel;

// The background jobs (JobListModel) as a list: what each does, a progress
// bar, its rate, the time left and a Stop button per running job; below, Stop
// for the current row (keyboard) and Clear finished.
class JobsPanel final : public QWidget {
    Q_OBJECT

public:
    explicit JobsPanel(JobListModel *model, QWidget *parent = nullptr);
    Q_DISABLE_COPY_MOVE(JobsPanel)

    QTreeView *view() const { return m_view; }

private:
    void updateButtons();

    JobListModel *m_model;
    QTreeView *m_view;
    QLabel *m_empty;
    QPushButton *m_stop;
    QPushButton *m_clear;
};

} // namespace outbox::console
