#pragma once

#include "store/eventfilter.h"
#include "store/operations.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QPointer>

#include <memory>
#include <optional>

class QCheckBox;

namespace Ui {
class BulkDialog;
}

namespace outbox::console {

class BulkJob;
class StoreClient;

// An operator action on every event matching a filter, in four steps: a
// dry run counts the events and shows a sample; a confirmation states the
// count (with a rate limit for redrives and the batch size); the job runs
// in bounded batches off the GUI thread with a progress bar and Cancel;
// the result says what changed and what was skipped. The count confirmed is
// sealed: the run never changes more, and events that match only later are
// left for the next run (the result says how many). Cancel is the default
// button. Opened with open(), so it never blocks the event loop.
class BulkDialog final : public QDialog {
    Q_OBJECT

public:
    enum class Stage { Checking, Confirm, Running, Done, Failed };
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
    // The confirmation's "go" (the Start button).
    void start();
    // Stops a running job after its current batch (the Cancel button).
    void cancelRun();

    Stage stage() const { return m_stage; }
    store::Action action() const { return m_action; }
    const store::EventFilter &filter() const { return m_filter; }
    qint64 matched() const { return m_matched; }
    const std::optional<store::BulkResult> &result() const { return m_result; }

    // Plain-language wording shared with the selection actions.
    static QString verb(store::Action action);      // "Requeue"
    static QString pastTense(store::Action action); // "requeued"
    static QString effect(store::Action action);    // what happens to each event
    static bool hasRateLimit(store::Action action);

Q_SIGNALS:
    void stageChanged(outbox::console::BulkDialog::Stage stage);
    void completed(const outbox::store::BulkResult &result);

protected:
    void reject() override;

private:
    void setStage(Stage stage);
    void onDryRun(const store::BulkResult &result);
    void onProgress(qint64 done, qint64 total);
    void onFinished(const store::BulkResult &result);
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
    std::optional<store::BulkResult> m_result;
    QElapsedTimer m_elapsed;
};

} // namespace outbox::console
