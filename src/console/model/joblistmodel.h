#pragma once

#include <QAbstractTableModel>
#include <QElapsedTimer>
#include <QList>
#include <QPointer>
#include <QString>

#include <functional>

namespace outbox::console {

class BulkJob;
class ExportJob;

// The console's background jobs (bulk actions, exports), newest last: what
// each does, how far it is, its rate and time left, and a way to stop it.
// Jobs run on their own threads and connections (StoreClient); this model
// only follows their signals, so any number may run while the operator
// keeps working. Finished jobs stay listed with their outcome until
// clearFinished().
class JobListModel final : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        TitleColumn,
        ProgressColumn,
        RateColumn,
        RemainingColumn,
        StopColumn,
        ColumnCount
    };
    Q_ENUM(Column)
    enum class State { Running, Stopping, Finished, Stopped, Failed };
    Q_ENUM(State)
    enum Role {
        StateRole = Qt::UserRole + 1, // State
        PermilleRole,                 // progress 0..1000, -1 while the total is unknown
        CanStopRole,                  // bool
        SummaryRole,                  // the outcome, once over
    };

    explicit JobListModel(QObject *parent = nullptr);
    ~JobListModel() override;
    Q_DISABLE_COPY_MOVE(JobListModel)

    // Milliseconds on a monotonic clock, for rate and time left (tests pass
    // their own).
    void setClock(std::function<qint64()> clock);

    // Follows the job until it ends; the title says what it does. The job
    // stays owned by whoever owns it.
    int addBulk(BulkJob *job, const QString &title);
    int addExport(ExportJob *job, const QString &title);

    // A generic job: `stop` asks it to stop; report with the setters below.
    int addJob(const QString &title, std::function<void()> stop);
    void setProgress(int jobId, qint64 done, qint64 total);
    void setEnded(int jobId, State state, const QString &summary);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    int jobIdAt(int row) const;
    int rowOf(int jobId) const;
    State stateAt(int row) const;
    QString titleAt(int row) const;
    // Asks the job in `row` to stop (after its current batch); false when it
    // is not running.
    bool stop(int row);
    void stopAll();
    int runningCount() const;
    void clearFinished();

    // "1,200 events/s"; empty when nothing is known yet.
    static QString rateText(double perSecond);
    // "about 3 min left"; empty when unknown.
    static QString remainingText(qint64 ms);

Q_SIGNALS:
    void runningCountChanged(int running);
    void jobEnded(int jobId, const QString &title, const QString &summary,
                  outbox::console::JobListModel::State state);

private:
    struct Job {
        int id = 0;
        QString title;
        State state = State::Running;
        qint64 done = 0;
        qint64 total = -1;
        qint64 startedAt = 0;
        qint64 lastAt = 0; // clock at the last progress report
        QString summary;
        std::function<void()> stop;
    };

    double rate(const Job &job) const;
    qint64 remainingMs(const Job &job) const;
    void changed(int row);

    QList<Job> m_jobs;
    int m_nextId = 1;
    QElapsedTimer m_timer;
    std::function<qint64()> m_clock;
};

} // namespace outbox::console
