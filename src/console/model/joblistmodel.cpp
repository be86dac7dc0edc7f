#include "console/model/joblistmodel.h"

#include "console/model/bulkjob.h"
#include "console/model/consoletypes.h"
#include "console/model/exportjob.h"

#include <QLocale>

#include <algorithm>

namespace outbox::console {

namespace {

bool isOver(JobListModel::State state) {
    return state == JobListModel::State::Finished || state == JobListModel::State::Stopped ||
           state == JobListModel::State::Failed;
}

QString stateText(JobListModel::State state) {
    switch (state) {
    case JobListModel::State::Running:
        return JobListModel::tr("Running");
    case JobListModel::State::Stopping:
        return JobListModel::tr("Stopping…");
    case JobListModel::State::Finished:
        return JobListModel::tr("Done");
    case JobListModel::State::Stopped:
        return JobListModel::tr("Stopped");
    case JobListModel::State::Failed:
        return JobListModel::tr("Failed");
    }
    return {};
}

} // namespace

JobListModel::JobListModel(QObject *parent)
    : QAbstractTableModel(parent) {
    m_timer.start();
    m_clock = [this] { return m_timer.elapsed(); };
}

JobListModel::~JobListModel() = default;

void JobListModel::setClock(std::function<qint64()> clock) {
    m_clock = std::move(clock);
}

int JobListModel::addJob(const QString &title, std::function<void()> stop) {
    Job job;
    job.id = m_nextId++;
    job.title = title;
    job.startedAt = m_clock();
    job.lastAt = job.startedAt;
    job.stop = std::move(stop);
    beginInsertRows({}, int(m_jobs.size()), int(m_jobs.size()));
    m_jobs.append(std::move(job));
    endInsertRows();
    Q_EMIT runningCountChanged(runningCount());
    return m_jobs.constLast().id;
}

int JobListModel::addBulk(BulkJob *job, const QString &title) {
    QPointer<BulkJob> guard(job);
    const int id = addJob(title, [guard] {
        if (guard) {
            guard->cancel();
        }
    });
    connect(job, &BulkJob::progress, this,
            [this, id](qint64 done, qint64 total) { setProgress(id, done, total); });
    connect(job, &BulkJob::finished, this, [this, id](const store::BulkResult &r) {
        // Of the set confirmed in the dialog (a sealed run), else of what it
        // met; and what it left for the next run.
        QString summary = actionOutcome(r.action, r.changed,
                                        r.confirmed > 0 ? r.confirmed : r.changed + r.skipped,
                                        r.skipped, r.cancelled);
        if (r.newer > 0) {
            summary +=
                tr("; %1 newer matching events left for the next run").arg(formatCount(r.newer));
        }
        if (r.auditId > 0) {
            summary += tr(" (audit entry %1)").arg(r.auditId);
        }
        if (const int row = rowOf(id); row >= 0) {
            m_jobs[row].done = r.changed + r.skipped;
        }
        setEnded(id, r.cancelled ? State::Stopped : State::Finished, summary);
    });
    connect(job, &BulkJob::failed, this,
            [this, id](const core::Error &error) { setEnded(id, State::Failed, error.message); });
    // A job deleted unfinished (its connection closed) was stopped.
    connect(job, &QObject::destroyed, this, [this, id] {
        if (const int row = rowOf(id); row >= 0 && !isOver(m_jobs.at(row).state)) {
            setEnded(id, State::Stopped, tr("Stopped: the connection was closed"));
        }
    });
    return id;
}

int JobListModel::addExport(ExportJob *job, const QString &title) {
    QPointer<ExportJob> guard(job);
    const int id = addJob(title, [guard] {
        if (guard) {
            guard->cancel();
        }
    });
    const QString path = job->path();
    connect(job, &ExportJob::progress, this,
            [this, id](qint64 done, qint64 total) { setProgress(id, done, total); });
    connect(job, &ExportJob::finished, this, [this, id, path](const store::ExportResult &r) {
        if (r.cancelled) {
            setEnded(id, State::Stopped,
                     tr("Stopped after %1 events; nothing was saved to %2")
                         .arg(formatCount(r.written), path));
            return;
        }
        if (const int row = rowOf(id); row >= 0) {
            m_jobs[row].done = r.written;
            m_jobs[row].total = r.written;
        }
        setEnded(id, State::Finished,
                 r.written == 1 ? tr("Saved 1 event to %1").arg(path)
                                : tr("Saved %1 events to %2").arg(formatCount(r.written), path));
    });
    connect(job, &ExportJob::failed, this,
            [this, id](const core::Error &error) { setEnded(id, State::Failed, error.message); });
    connect(job, &QObject::destroyed, this, [this, id, path] {
        if (const int row = rowOf(id); row >= 0 && !isOver(m_jobs.at(row).state)) {
            setEnded(id, State::Stopped,
                     tr("Stopped: the connection was closed; nothing was saved to %1").arg(path));
        }
    });
    return id;
}

void JobListModel::setProgress(int jobId, qint64 done, qint64 total) {
    const int row = rowOf(jobId);
    if (row < 0 || isOver(m_jobs.at(row).state)) {
        return;
    }
    Job &job = m_jobs[row];
    job.done = done;
    job.total = total;
    job.lastAt = m_clock();
    changed(row);
}

void JobListModel::setEnded(int jobId, State state, const QString &summary) {
    const int row = rowOf(jobId);
    if (row < 0 || isOver(m_jobs.at(row).state)) {
        return;
    }
    Job &job = m_jobs[row];
    job.state = state;
    job.summary = summary;
    job.lastAt = m_clock();
    job.stop = nullptr;
    changed(row);
    Q_EMIT runningCountChanged(runningCount());
    Q_EMIT jobEnded(jobId, job.title, summary, state);
}

void JobListModel::changed(int row) {
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int JobListModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_jobs.size());
}

int JobListModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

double JobListModel::rate(const Job &job) const {
    const qint64 ms = job.lastAt - job.startedAt;
    return ms > 0 && job.done > 0 ? double(job.done) * 1000.0 / double(ms) : 0.0;
}

qint64 JobListModel::remainingMs(const Job &job) const {
    const double perSecond = rate(job);
    if (perSecond <= 0 || job.total < job.done) {
        return -1;
    }
    return qint64(double(job.total - job.done) / perSecond * 1000.0);
}

QString JobListModel::rateText(double perSecond) {
    if (perSecond <= 0) {
        return {};
    }
    return tr("%1 events/s").arg(QLocale().toString(perSecond, 'f', perSecond < 10 ? 1 : 0));
}

QString JobListModel::remainingText(qint64 ms) {
    if (ms < 0) {
        return {};
    }
    const qint64 s = (ms + 999) / 1000;
    if (s < 60) {
        return tr("about %1 s left").arg(s);
    }
    if (s < 3600) {
        return tr("about %1 min left").arg((s + 59) / 60);
    }
    return tr("about %1 h %2 min left").arg(s / 3600).arg((s % 3600) / 60);
}

QVariant JobListModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Job &job = m_jobs.at(index.row());
    switch (role) {
    case StateRole:
        return QVariant::fromValue(job.state);
    case PermilleRole:
        if (job.state == State::Finished) {
            return 1000;
        }
        return job.total > 0 ? int(std::min<qint64>(1000, job.done * 1000 / job.total))
                             : (job.total == 0 ? 1000 : -1);
    case CanStopRole:
        return job.state == State::Running;
    case SummaryRole:
        return job.summary;
    case Qt::ToolTipRole:
        return job.summary.isEmpty() ? job.title : job.title + QLatin1Char('\n') + job.summary;
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (Column(index.column())) {
    case TitleColumn:
        return job.title;
    case ProgressColumn:
        if (isOver(job.state)) {
            return job.summary;
        }
        return job.total >= 0 ? tr("%1 of %2").arg(formatCount(job.done), formatCount(job.total))
                              : tr("Counting…");
    case RateColumn:
        return isOver(job.state) ? QString() : rateText(rate(job));
    case RemainingColumn:
        return isOver(job.state) || job.state == State::Stopping ? stateText(job.state)
                                                                 : remainingText(remainingMs(job));
    case StopColumn:
        return job.state == State::Running ? tr("Stop") : QString();
    case ColumnCount:
        break;
    }
    return {};
}

QVariant JobListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case TitleColumn:
        return tr("Job");
    case ProgressColumn:
        return tr("Progress");
    case RateColumn:
        return tr("Rate");
    case RemainingColumn:
        return tr("Time left");
    case StopColumn:
    case ColumnCount:
        break;
    }
    return {};
}

int JobListModel::jobIdAt(int row) const {
    return row >= 0 && row < m_jobs.size() ? m_jobs.at(row).id : 0;
}

int JobListModel::rowOf(int jobId) const {
    for (qsizetype i = 0; i < m_jobs.size(); ++i) {
        if (m_jobs.at(i).id == jobId) {
            return int(i);
        }
    }
    return -1;
}

JobListModel::State JobListModel::stateAt(int row) const {
    return m_jobs.at(row).state;
}

QString JobListModel::titleAt(int row) const {
    return m_jobs.at(row).title;
}

bool JobListModel::stop(int row) {
    if (row < 0 || row >= m_jobs.size() || m_jobs.at(row).state != State::Running) {
        return false;
    }
    Job &job = m_jobs[row];
    job.state = State::Stopping;
    if (job.stop) {
        job.stop();
    }
    changed(row);
    return true;
}

void JobListModel::stopAll() {
    for (int row = 0; row < m_jobs.size(); ++row) {
        stop(row);
    }
}

int JobListModel::runningCount() const {
    return int(std::count_if(m_jobs.cbegin(), m_jobs.cend(),
                             [](const Job &job) { return !isOver(job.state); }));
}

void JobListModel::clearFinished() {
    for (int row = int(m_jobs.size()) - 1; row >= 0; --row) {
        if (isOver(m_jobs.at(row).state)) {
            beginRemoveRows({}, row, row);
            m_jobs.removeAt(row);
            endRemoveRows();
        }
    }
}

} // namespace outbox::console
