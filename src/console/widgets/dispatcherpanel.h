#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/dispatcher.h"
#include "dispatch/dispatcherstats.h"
#include "dispatch/publisher.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QUuid>
#include <QWidget>

class QLabel;
class QPushButton;
class QSettings;

namespace outbox::dispatch {
class DispatcherHost;
}
namespace outbox::store {
struct StatusCounts;
}

namespace outbox::console {

class DispatcherSettingsForm;
class LogView;
class ThroughputChart;

// The embedded dispatcher as a dock widget:
//  - Start / Stop a dispatch::DispatcherHost (the dispatcher runs in the
//    host's worker QThread; this widget only exchanges queued signals);
//  - a DispatcherSettingsForm (runner URL, secret, concurrency, batch,
//    lease, poll interval, backoff base/max, max attempts, request timeout)
//    validated with core::DispatcherConfig::validate() on every edit: the
//    problem is shown inline in red (naming the field) and Start / Apply are
//    disabled until it is fixed. While running, Apply sends the form live
//    (DispatcherHost::setConfig); the answer appears in the log;
//  - live figures (state, delivered/s, failures/s, in flight, dead,
//    fenced-out, reconnects, HTTP latency p50/p99);
//  - a ThroughputChart (throughput and backlog per status, last ~5 min);
//  - a LogView (state changes, config applied/rejected, errors, and a
//    summary of failed/dead-lettered attempts every 10 s).
//
// Settings other than the secret persist in the QSettings given to the
// constructor (group "dispatcher"). The secret is kept in memory only.
//
// Stopping never blocks the GUI thread: the host stops gracefully and its
// threads end in the background (DispatcherHost::shutDown); the host is
// deleted once they have.
//
// Closing: call stopForClose() from the main window's closeEvent, ignore the
// event, and close again on readyToClose() (emitted at once, queued, when no
// dispatcher runs or winds down; otherwise once the graceful stop finished
// and the host's threads have ended).
class DispatcherPanel final : public QWidget {
    Q_OBJECT
public:
    // `settings` may be null (nothing is persisted). It must outlive the panel.
    explicit DispatcherPanel(QSettings *settings = nullptr, QWidget *parent = nullptr);
    // A dispatcher still running (or winding down) is aborted here, blocking
    // briefly (leases released); prefer stopForClose() + readyToClose().
    ~DispatcherPanel() override;
    Q_DISABLE_COPY_MOVE(DispatcherPanel)

    // The database the dispatcher connects to. Start stays disabled until a
    // connection is set. A change while running applies at the next start.
    void setConnInfo(const core::ConnInfo &info);
    core::ConnInfo connInfo() const { return m_connInfo; }

    // Fills the form (secrets included, kept in memory only).
    // persist = false (demo mode): from now on nothing is written to
    // QSettings, so demo values never overwrite the user's saved settings.
    void setConfig(const core::DispatcherConfig &config, bool persist = true);
    // The configuration as currently entered (not necessarily valid).
    core::DispatcherConfig config() const;
    // The inline validation message; empty when the form is valid.
    QString validationError() const;

    // Publisher used by the next start (demo mode routes a topic to a
    // rejecting runner); empty = HTTP to the runner URL.
    void setPublisherFactory(dispatch::PublisherFactory factory);

    // Read-only consoles may not run a dispatcher (it changes rows): Start
    // is disabled with `reason` as its tooltip. Does not stop a running one.
    void setReadOnly(bool readOnly, const QString &reason = {});

    // Between start() and the host's stopped().
    bool isRunning() const;
    dispatch::DispatcherState state() const { return m_state; }
    // The latest snapshot (default-constructed before the first one).
    const dispatch::DispatcherStats &lastStats() const { return m_lastStats; }
    double deliveredPerSecond() const { return m_deliveredRate; }

    ThroughputChart *chart() const { return m_chart; }
    LogView *logView() const { return m_log; }

public Q_SLOTS:
    // No-op (with a log line) when the form is invalid, no connection is set,
    // read-only, or already running.
    void start();
    // Graceful stop (§5 Shutdown); stopped is reported through runningChanged.
    void stop();
    // Graceful stop, then readyToClose(). Safe to call repeatedly.
    void stopForClose();
    // Feed from the console's counts refresh (StoreClient) for the backlog chart.
    void addBacklogSample(const outbox::store::StatusCounts &counts);

Q_SIGNALS:
    void runningChanged(bool running);
    void stateChanged(outbox::dispatch::DispatcherState state);
    void statsUpdated(const outbox::dispatch::DispatcherStats &stats);
    void readyToClose();

private:
    void buildUi();
    void updateButtons();
    void applyLive();
    void onStateChanged(dispatch::DispatcherState state);
    void onStats(const dispatch::DispatcherStats &stats);
    void onStopped();
    void onHostFinished(dispatch::DispatcherHost *host);
    void emitReadyToCloseWhenDone();
    void setFigure(const QString &key, const QString &value);
    void resetFigures();

    core::ConnInfo m_connInfo;
    bool m_hasConnInfo = false;
    dispatch::PublisherFactory m_publisherFactory;
    dispatch::DispatcherOptions m_options;
    bool m_readOnly = false;
    QString m_readOnlyReason;
    dispatch::DispatcherHost *m_host = nullptr;   // child; until stopped()
    QList<dispatch::DispatcherHost *> m_retiring; // children stopped, threads ending
    dispatch::DispatcherState m_state = dispatch::DispatcherState::Stopped;
    dispatch::DispatcherStats m_lastStats;
    // Rates are taken over the last few seconds of snapshots, so the figures
    // and the chart do not jitter with every 500 ms snapshot.
    struct RateSample {
        QDateTime at;
        qint64 delivered = 0;
        qint64 failed = 0; // retried + dead
    };
    QList<RateSample> m_rateSamples;
    QUuid m_runWorker; // which run m_rateSamples belong to
    QDateTime m_runStartedAt;
    // Failures are summarised in the log every few seconds, not per event.
    QDateTime m_summaryAt;
    qint64 m_summaryRetried = 0;
    qint64 m_summaryDead = 0;
    double m_deliveredRate = 0.0;
    double m_failureRate = 0.0;
    bool m_closeRequested = false;
    bool m_formDirty = false; // edited since the last start/apply
    // The last few snapshots' "recent" histograms, merged for p50/p99 "now".
    QList<dispatch::Histogram> m_recentHttp;
    QList<dispatch::Histogram> m_recentLag;

    DispatcherSettingsForm *m_form = nullptr;
    QPushButton *m_startButton = nullptr;
    QPushButton *m_stopButton = nullptr;
    QPushButton *m_applyButton = nullptr;
    QHash<QString, QLabel *> m_figures;
    ThroughputChart *m_chart = nullptr;
    LogView *m_log = nullptr;
};

} // namespace outbox::console
