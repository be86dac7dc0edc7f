#pragma once

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "core/duration.h"
#include "core/routes.h"
#include "devtools/devrunner.h"
#include "dispatch/publisher.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QUrl>

#include <memory>

namespace outbox::devtools {
class EmbeddedPostgres;
class KafkaMockCluster;
} // namespace outbox::devtools

namespace outbox::console {

class DemoProducer;

// Demo mode (`outbox-console --demo`): a private
// PostgreSQL cluster in a temporary directory, migrated; a development
// runner on 127.0.0.1 (free port) with adjustable failure rate and latency;
// a producer enqueueing a steady mix of topics over three namespaces. The
// embedded dispatcher itself is the DispatcherPanel's, started on
// dispatcherConfig() + publisherFactory().
//
// So that a newcomer sees events die within a minute, one topic
// (PoisonNamespace/PoisonTopic, a few percent of the mix) goes to a second
// runner that always answers 422; with maxAttempts 5 and short backoff those
// rows are retried a few times and then dead-lettered.
//
// So that a newcomer sees a log beside webhooks, KafkaNamespace goes to
// KafkaTopic on librdkafka's mock cluster (in this process, loopback ports).
// The three destinations are a routes configuration (core/routes.h) and the
// dispatcher delivers through dispatch::RoutingPublisher, as
// `outboxctl dispatch --routes` does.
//
// Threading: lives in the GUI thread and never blocks it. initdb/start/
// migrate and the cluster's shutdown run on a setup thread, the runners on a
// runner thread, the producer (own connection) on a producer thread.
//
// Order on exit: stop the dispatcher first (DispatcherPanel::stopForClose),
// then stop() and wait for stopped(). The destructor tears down whatever is
// still running synchronously, as a last resort.
class DemoEnvironment final : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Starting, Ready, Stopping, Stopped, Failed };

    struct Settings {
        double failRate = 0.10;        // runner: share of requests answered 503
        core::Millis latency{20};      // runner: delay before each answer
        double eventsPerSecond = 20.0; // producer rate
        bool producerPaused = false;
    };

    static constexpr const char *PoisonNamespace = "billing";
    static constexpr const char *PoisonTopic = "invoice.legacy_export";
    static constexpr const char *KafkaNamespace = "users";
    static constexpr const char *KafkaTopic = "demo.users";

    explicit DemoEnvironment(QObject *parent = nullptr);
    explicit DemoEnvironment(const Settings &initial, QObject *parent = nullptr);
    ~DemoEnvironment() override;
    Q_DISABLE_COPY_MOVE(DemoEnvironment)

    // Idle/Stopped/Failed -> Starting; emits progress(...) then ready() or failed().
    void start();
    // Asynchronous: producer stopped, runners closed, cluster stopped and its
    // directory removed; then stopped(). At once (queued) when nothing runs.
    void stop();

    State state() const { return m_state; }
    bool isReady() const { return m_state == State::Ready; }

    // Valid after ready().
    core::ConnInfo connInfo() const { return m_connInfo; }
    // runner URL = the dev runner, a demo secret (memory only), concurrency
    // 16, max attempts 5, backoff 500 ms .. 10 s; routes: PoisonTopic to the
    // rejecting runner, KafkaNamespace to the mock cluster, the rest to the
    // runner. Valid after ready().
    core::DispatcherConfig dispatcherConfig() const;
    // The routing publisher the routes need.
    dispatch::PublisherFactory publisherFactory() const;
    // "namespace -> destination" lines for the panel.
    QStringList routeDescriptions() const;
    // The mock cluster (null when not ready): its records can be read back.
    const devtools::KafkaMockCluster *kafkaCluster() const { return m_kafka.get(); }
    QUrl runnerUrl() const { return m_runnerUrl; }
    // The cluster's temporary directory (empty before the first start; kept
    // after stop so a caller can check that it is gone).
    QString clusterDirectory() const { return m_clusterDirectory; }
    qint64 postgresPid() const { return m_postgresPid; } // 0 when not running

    // Live controls (any time; remembered across start()).
    Settings settings() const { return m_settings; }
    void setRunnerFailRate(double rate); // clamped 0..1
    void setRunnerLatency(core::Millis latency);
    void setProducerRate(double eventsPerSecond); // clamped 0..1000
    void setProducerPaused(bool paused);

    qint64 producedCount() const { return m_produced; } // events inserted so far
    devtools::DevRunnerStats runnerStats() const;       // the main runner's counts

Q_SIGNALS:
    void progress(const QString &step);
    void ready(const outbox::core::ConnInfo &connInfo);
    void failed(const QString &message);
    void stopped();
    void stateChanged(outbox::console::DemoEnvironment::State state);
    // Producer activity (throttled to a few per second) and problems.
    void produced(qint64 total);
    void producerError(const QString &message);
    void settingsChanged();

private:
    struct SetupResult {
        bool ok = false;
        QString error;
        QString connInfo; // libpq key=value
        QString clusterDirectory;
        qint64 postgresPid = 0;
    };
    struct RunnerResult {
        bool ok = false;
        QString error;
        QUrl runnerUrl;
        QUrl rejectUrl;
    };

    core::Routes routes() const;
    void setState(State state);
    void postProgress(quint64 generation, const QString &step); // from any thread
    void onClusterReady(quint64 generation, const SetupResult &result);
    void onRunnersReady(quint64 generation, const RunnerResult &result);
    void startProducer();
    void fail(const QString &message);
    // Stops whatever runs, off the GUI thread; ends in `finalState`.
    void teardown(State finalState);
    void stopStepDone();
    void onProducerThreadFinished();
    void onRunnerThreadFinished();
    void stopCluster();
    void pushRunnerSettings();

    Settings m_settings;
    State m_state = State::Idle;
    State m_finalState = State::Stopped; // where the running teardown ends
    core::ConnInfo m_connInfo;
    QUrl m_runnerUrl;
    QUrl m_rejectUrl;
    QString m_secret; // memory only
    QString m_clusterDirectory;
    qint64 m_postgresPid = 0;
    qint64 m_produced = 0;
    quint64 m_generation = 0; // results of a start that was stopped meanwhile are ignored
    int m_pendingStops = 0;
    bool m_waitProducer = false;
    bool m_waitRunners = false;
    bool m_waitCluster = false;
    devtools::DevRunnerStats m_lastRunnerStats;

    // Used only on the setup thread while a job runs; the GUI thread keeps a
    // reference so that the destructor can stop it as a last resort.
    std::shared_ptr<devtools::EmbeddedPostgres> m_cluster;
    std::unique_ptr<devtools::KafkaMockCluster> m_kafka; // GUI thread; its own threads
    QThread m_setupThread;
    QThread m_runnerThread;
    QThread m_producerThread;
    QObject *m_setupContext = nullptr;         // lives in m_setupThread; jobs run there
    devtools::DevRunner *m_runner = nullptr;   // lives in m_runnerThread
    devtools::DevRunner *m_rejecter = nullptr; // lives in m_runnerThread
    DemoProducer *m_producer = nullptr;        // lives in m_producerThread
};

} // namespace outbox::console

Q_DECLARE_METATYPE(outbox::console::DemoEnvironment::State)
