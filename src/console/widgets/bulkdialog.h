#pragma once

#include "store/eventfilter.h"
#include "store/operations.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QPointer>
#include <QTimer>

#include <memory>
#include <optional>

class QCheckBox;

namespace Ui {
class BulkDialog;
}

namespace outbox::console {

class BulkJob;
class StoreClient;

// An operator action on every event matching a filter: a dry run counts
// the events and shows a sample; a confirmation states the count (with a
// rate limit for redrives and the batch size); Start hands the job to the
// background (jobStarted(): the jobs panel shows its progress, rate, time
// left and Stop) and closes the dialog, so the window is never held while
// the job runs. The count confirmed is sealed: the run never changes more,
// and events that match only later are left for the next run (its result
// says how many). Cancel is the default button. Opened with open(), so it
// never blocks the event loop.
class BulkDialog final : public QDialog {
    Q_OBJECT

public:
    enum class Stage { Checking, Confirm, Started, Failed };
    Q_ENUM(Stage)

    BulkDialog(StoreClient *client, store::Action action, store::EventFilter filter,
               QWidget *parent = nullptr);
    ~BulkDialog() override;
    Q_DISABLE_COPY_MOVE(BulkDialog)

    void setRate(double eventsPerSecond);
    double rate() const;
    void setBatchSize(int rows);
    void setReason(const QString &reason);
    // Narrows the dry run to a preview confirmed earlier (the purge
    // dialog's), so that this confirmation never asks for more.
    void setSeal(const store::BulkSeal &seal);

    // Starts the dry run; called by the owner after open().
    void begin();
    // The confirmation's "go" (the Start button): starts the job, emits
    // jobStarted() and closes.
    void start();

    Stage stage() const { return m_stage; }
    store::Action action() const { return m_action; }
    const store::EventFilter &filter() const { return m_filter; }
    qint64 matched() const { return m_matched; }

    // Plain-language wording shared with the selection actions.
    static QString verb(store::Action action);   // "Requeue"
    static QString effect(store::Action action); // what happens to each event
    static bool hasRateLimit(store::Action action);

Q_SIGNALS:
    void stageChanged(outbox::console::BulkDialog::Stage stage);
    // The job runs on; it belongs to the client that started it. `title`
    // says what it does ("Requeue 400 events · namespace billing").
    void jobStarted(outbox::console::BulkJob *job, const QString &title);

private:
    void setStage(Stage stage);
    void onDryRun(const store::BulkResult &result);
    void onFailed(const QString &message);

    std::unique_ptr<Ui::BulkDialog> m_ui;
    QPointer<StoreClient> m_client;
    store::Action m_action;
    store::EventFilter m_filter;
    Stage m_stage = Stage::Checking;
    QPointer<BulkJob> m_job;
    qint64 m_matched = 0;
    std::optional<store::BulkSeal> m_previewSeal; // narrows the dry run
    store::BulkSeal m_seal;       // what the confirmation shows: all the run touches
    QCheckBox *m_again = nullptr; // replay: also events replayed before
    // While counting: the seconds so far, every second, so that a long count
    // (seconds at millions of rows) never looks stuck.
    QTimer m_countingTick;
    QElapsedTimer m_countingFor;
};

} // namespace outbox::console
