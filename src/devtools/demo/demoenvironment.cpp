#include "devtools/demo/demoenvironment.h"

#include "console/model/consoletypes.h"
#include "core/routes.h"
#include "devtools/demo/demoproducer.h"
#include "devtools/embeddedpostgres.h"
#include "devtools/kafkamock.h"
#include "dispatch/routingpublisher.h"
#include "store/migrator.h"
#include "store/session.h"

#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>

#include <algorithm>
#include <functional>
#include <utility>

namespace outbox::console {

namespace {

// Runs `close` in the thread of `worker` and then ends that thread; without
// a worker, only ends the thread.
void closeThenQuit(QThread *thread, QObject *worker, std::function<void()> close) {
    if (!worker) {
        thread->quit();
        return;
    }
    QMetaObject::invokeMethod(
        worker,
        [thread, close = std::move(close)] {
            close();
            thread->quit();
        },
        Qt::QueuedConnection);
}

// The runner's answer for the poison topic: a client error that is not in
// the permanent list, so the dispatcher retries it with backoff until
// max_attempts and then dead-letters it, as a real misconfigured consumer would.
constexpr int RejectStatus = 422;

QString makeDemoSecret() {
    QByteArray key(24, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(key.data()),
                                          key.size() / int(sizeof(quint32)));
    return QStringLiteral("whsec_") + QString::fromLatin1(key.toBase64());
}

} // namespace

DemoEnvironment::DemoEnvironment(QObject *parent)
    : DemoEnvironment(Settings{}, parent) {}

DemoEnvironment::DemoEnvironment(const Settings &initial, QObject *parent)
    : QObject(parent)
    , m_settings(initial)
    , m_secret(makeDemoSecret()) {
    qRegisterMetaType<State>();
    qRegisterMetaType<core::ConnInfo>();
    m_setupThread.setObjectName(QStringLiteral("demo-setup"));
    m_runnerThread.setObjectName(QStringLiteral("demo-runner"));
    m_producerThread.setObjectName(QStringLiteral("demo-producer"));
    m_setupContext = new QObject;
    m_setupContext->moveToThread(&m_setupThread);
    connect(&m_setupThread, &QThread::finished, m_setupContext, &QObject::deleteLater);
    connect(&m_producerThread, &QThread::finished, this,
            &DemoEnvironment::onProducerThreadFinished);
    connect(&m_runnerThread, &QThread::finished, this, &DemoEnvironment::onRunnerThreadFinished);
    m_setupThread.start();
}

DemoEnvironment::~DemoEnvironment() {
    // Last resort, synchronous: every thread's objects are deleted in that
    // thread when it finishes (finished -> deleteLater), then the cluster is
    // stopped and its directory removed here if no job did it.
    m_producer = nullptr;
    m_runner = nullptr;
    m_rejecter = nullptr;
    m_producerThread.quit();
    m_producerThread.wait();
    m_runnerThread.quit();
    m_runnerThread.wait();
    m_setupThread.quit();
    m_setupThread.wait();
    if (m_cluster) {
        const auto stoppedCluster = m_cluster->stop();
        if (!stoppedCluster)
            qCWarning(lcConsole).noquote() << stoppedCluster.errorMessage();
        m_cluster.reset();
    }
}

void DemoEnvironment::setState(State state) {
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

void DemoEnvironment::postProgress(quint64 generation, const QString &step) {
    QMetaObject::invokeMethod(
        this,
        [this, generation, step] {
            if (generation == m_generation && m_state == State::Starting) {
                qCInfo(lcConsole).noquote() << "demo:" << step;
                Q_EMIT progress(step);
            }
        },
        Qt::QueuedConnection);
}

void DemoEnvironment::start() {
    if (m_state == State::Starting || m_state == State::Ready || m_state == State::Stopping) {
        qCWarning(lcConsole) << "demo: start() ignored while" << int(m_state);
        return;
    }
    const quint64 generation = ++m_generation;
    m_produced = 0;
    m_lastRunnerStats = {};
    setState(State::Starting);

    auto cluster = std::make_shared<devtools::EmbeddedPostgres>();
    m_cluster = cluster;
    postProgress(generation, tr("Creating a private PostgreSQL cluster…"));
    QMetaObject::invokeMethod(
        m_setupContext,
        [this, generation, cluster] {
            SetupResult result;
            if (const auto started = cluster->start(); !started) {
                result.error =
                    tr("Demo mode could not start PostgreSQL: %1").arg(started.errorMessage());
            } else {
                result.clusterDirectory = QFileInfo(cluster->dataDirectory()).path();
                result.connInfo = cluster->connInfo();
                postProgress(generation, tr("Applying migrations…"));
                QString error;
                if (const auto info = core::ConnInfo::parse(result.connInfo); !info) {
                    error = info.errorMessage();
                } else {
                    store::Session session(
                        info.value(), {.applicationName = QStringLiteral("outbox-demo-setup")});
                    if (const auto opened = session.open(); !opened) {
                        error = opened.errorMessage();
                    } else {
                        // Aggregate order on (an empty table: built at once),
                        // so that the dispatcher panel's Ordering can be tried.
                        store::Migrator migrator(session);
                        if (const auto migrated = migrator.migrate(); !migrated)
                            error = migrated.errorMessage();
                        else if (const auto ordered = migrator.enableAggregateOrder(); !ordered)
                            error = ordered.errorMessage();
                    }
                }
                if (!error.isEmpty()) {
                    result.error = tr("Demo mode could not migrate its database: %1").arg(error);
                } else {
                    QFile pidFile(cluster->dataDirectory() + QStringLiteral("/postmaster.pid"));
                    if (pidFile.open(QIODevice::ReadOnly))
                        result.postgresPid = pidFile.readLine().trimmed().toLongLong();
                    result.ok = true;
                }
            }
            QMetaObject::invokeMethod(
                this, [this, generation, result] { onClusterReady(generation, result); },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void DemoEnvironment::onClusterReady(quint64 generation, const SetupResult &result) {
    if (generation != m_generation || m_state != State::Starting)
        return; // stopped meanwhile; the stop job takes care of the cluster
    m_clusterDirectory = result.clusterDirectory;
    m_postgresPid = result.postgresPid;
    if (!result.ok) {
        fail(result.error);
        return;
    }
    const auto info = core::ConnInfo::parse(result.connInfo);
    if (!info) {
        fail(info.errorMessage());
        return;
    }
    m_connInfo = info.value();

    Q_EMIT progress(tr("Starting the development runner…"));
    m_runnerThread.start();
    auto *runner = new devtools::DevRunner;
    auto *rejecter = new devtools::DevRunner;
    runner->moveToThread(&m_runnerThread);
    rejecter->moveToThread(&m_runnerThread);
    connect(&m_runnerThread, &QThread::finished, runner, &QObject::deleteLater);
    connect(&m_runnerThread, &QThread::finished, rejecter, &QObject::deleteLater);
    m_runner = runner;
    m_rejecter = rejecter;
    pushRunnerSettings();
    QMetaObject::invokeMethod(
        runner,
        [this, generation, runner, rejecter] {
            RunnerResult out;
            const auto a = runner->listen(QHostAddress::LocalHost, 0);
            const auto b = a ? rejecter->listen(QHostAddress::LocalHost, 0) : a;
            if (!a || !b) {
                out.error = tr("Demo mode could not start its runner: %1")
                                .arg(a ? b.errorMessage() : a.errorMessage());
            } else {
                out.ok = true;
                out.runnerUrl = runner->url();
                out.rejectUrl = rejecter->url(QStringLiteral("/legacy-export"));
            }
            QMetaObject::invokeMethod(
                this, [this, generation, out] { onRunnersReady(generation, out); },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void DemoEnvironment::pushRunnerSettings() {
    // The setters are thread-safe: the runner keeps serving in its thread.
    if (m_runner) {
        devtools::DevRunnerSettings main;
        main.failRate = m_settings.failRate;
        main.failStatus = 503;
        main.latency = m_settings.latency;
        main.secrets = {m_secret};
        if (const auto set = m_runner->setSettings(main); !set)
            qCWarning(lcConsole).noquote() << set.errorMessage();
    }
    if (m_rejecter) {
        devtools::DevRunnerSettings reject;
        reject.fixedStatus = RejectStatus;
        reject.latency = m_settings.latency;
        reject.secrets = {m_secret};
        if (const auto set = m_rejecter->setSettings(reject); !set)
            qCWarning(lcConsole).noquote() << set.errorMessage();
    }
}

void DemoEnvironment::onRunnersReady(quint64 generation, const RunnerResult &result) {
    if (generation != m_generation || m_state != State::Starting)
        return;
    if (!result.ok) {
        fail(result.error);
        return;
    }
    m_runnerUrl = result.runnerUrl;
    m_rejectUrl = result.rejectUrl;
    Q_EMIT progress(tr("Starting a Kafka mock cluster…"));
    m_kafka = std::make_unique<devtools::KafkaMockCluster>();
    if (!m_kafka->isRunning() || !m_kafka->createTopic(QLatin1String(KafkaTopic), 2)) {
        const QString error = m_kafka->error();
        m_kafka.reset();
        fail(tr("The Kafka mock cluster did not start: %1").arg(error));
        return;
    }
    Q_EMIT progress(tr("Starting the producer…"));
    startProducer();
    setState(State::Ready);
    qCInfo(lcConsole).noquote() << "demo: ready on" << m_connInfo.redacted() << "runner"
                                << m_runnerUrl.toString();
    Q_EMIT ready(m_connInfo);
}

void DemoEnvironment::startProducer() {
    m_producerThread.start();
    auto *producer =
        new DemoProducer(m_connInfo, QLatin1String(PoisonNamespace), QLatin1String(PoisonTopic));
    producer->moveToThread(&m_producerThread);
    connect(&m_producerThread, &QThread::finished, producer, &QObject::deleteLater);
    connect(producer, &DemoProducer::produced, this, [this](qint64 total) {
        m_produced = total;
        Q_EMIT produced(total);
    });
    connect(producer, &DemoProducer::error, this, &DemoEnvironment::producerError);
    m_producer = producer;
    const double rate = m_settings.eventsPerSecond;
    const bool paused = m_settings.producerPaused;
    QMetaObject::invokeMethod(
        producer, [producer, rate, paused] { producer->start(rate, paused); },
        Qt::QueuedConnection);
}

core::DispatcherConfig DemoEnvironment::dispatcherConfig() const {
    core::DispatcherConfig config;
    config.runnerUrl = m_runnerUrl;
    config.secrets = {m_secret};
    config.batchSize = 50;
    config.concurrency = 16;
    config.lease = core::Millis(30'000);
    config.pollInterval = core::Millis(1000);
    config.maxAttempts = 5;
    config.baseDelay = core::Millis(500);
    config.maxDelay = core::Millis(10'000);
    config.requestTimeout = core::Millis(5000);
    config.shutdownGrace = core::Millis(5000);
    // Secrets stay in memory: the http destinations sign with config.secrets.
    if (auto applied = core::applyRoutes(config, routes(), QStringLiteral("(demo routes)"));
        !applied)
        qCWarning(lcConsole).noquote() << "demo: routes:" << applied.errorMessage();
    return config;
}

dispatch::PublisherFactory DemoEnvironment::publisherFactory() const {
    return []() -> std::unique_ptr<dispatch::Publisher> {
        return std::make_unique<dispatch::RoutingPublisher>();
    };
}

core::Routes DemoEnvironment::routes() const {
    core::Routes routes;
    const auto destination = [&routes](const QString &name, const QString &kind,
                                       QList<QPair<QString, QString>> properties) {
        core::Destination entry;
        entry.name = name;
        entry.kind = kind;
        entry.properties = std::move(properties);
        routes.destinations.append(entry);
    };
    destination(QStringLiteral("legacy-export"), core::Routes::kindHttp(),
                {{QStringLiteral("url"), m_rejectUrl.toString()}});
    // The rejecting runner is there to show rows dead-lettered: its circuit
    // must not hold them back (an open circuit's events keep their attempts).
    routes.destinations.last().circuitFailures = 1'000'000;
    destination(QStringLiteral("users-log"), core::Routes::kindKafka(),
                {{QStringLiteral("brokers"), m_kafka ? m_kafka->bootstrapServers() : QString()},
                 {QStringLiteral("topic"), QLatin1String(KafkaTopic)}});
    destination(QStringLiteral("webhooks"), core::Routes::kindHttp(),
                {{QStringLiteral("url"), m_runnerUrl.toString()}});
    const auto route = [&routes](const QString &nameSpace, const QString &topic,
                                 const QString &to) {
        core::Route entry;
        entry.nameSpace = nameSpace;
        entry.topic = topic;
        entry.destination = to;
        routes.routes.append(entry);
    };
    route(QLatin1String(PoisonNamespace), QLatin1String(PoisonTopic),
          QStringLiteral("legacy-export"));
    route(QLatin1String(KafkaNamespace), QStringLiteral("*"), QStringLiteral("users-log"));
    route(QStringLiteral("*"), QStringLiteral("*"), QStringLiteral("webhooks"));
    return routes;
}

QStringList DemoEnvironment::routeDescriptions() const {
    QStringList lines;
    const core::Routes table = routes();
    for (const core::Route &route : table.routes) {
        const core::Destination *to = table.destination(route.destination);
        const QString where = to->kind == core::Routes::kindKafka()
                                  ? tr("Kafka topic %1 on the mock cluster")
                                        .arg(to->property(QStringLiteral("topic")))
                              : to->property(QStringLiteral("url")) == m_rejectUrl.toString()
                                  ? tr("HTTP, a runner answering 422")
                                  : tr("HTTP, the development runner");
        const QString what = route.isCatchAll() ? tr("everything else")
                             : route.topic == QLatin1String("*")
                                 ? route.nameSpace
                                 : route.nameSpace + QLatin1Char('/') + route.topic;
        lines.append(tr("%1 → %2 (%3)").arg(what, to->name, where));
    }
    return lines;
}

void DemoEnvironment::setRunnerFailRate(double rate) {
    m_settings.failRate = std::clamp(rate, 0.0, 1.0);
    if (m_runner)
        m_runner->setFailRate(m_settings.failRate);
    Q_EMIT settingsChanged();
}

void DemoEnvironment::setRunnerLatency(core::Millis latency) {
    m_settings.latency = std::max(latency, core::Millis(0));
    if (m_runner)
        m_runner->setLatency(m_settings.latency);
    if (m_rejecter)
        m_rejecter->setLatency(m_settings.latency);
    Q_EMIT settingsChanged();
}

void DemoEnvironment::setProducerRate(double eventsPerSecond) {
    m_settings.eventsPerSecond = std::clamp(eventsPerSecond, 0.0, 1000.0);
    if (m_producer) {
        const double rate = m_settings.eventsPerSecond;
        QMetaObject::invokeMethod(
            m_producer, [p = m_producer, rate] { p->setRate(rate); }, Qt::QueuedConnection);
    }
    Q_EMIT settingsChanged();
}

void DemoEnvironment::setProducerPaused(bool paused) {
    m_settings.producerPaused = paused;
    if (m_producer)
        QMetaObject::invokeMethod(
            m_producer, [p = m_producer, paused] { p->setPaused(paused); }, Qt::QueuedConnection);
    Q_EMIT settingsChanged();
}

devtools::DevRunnerStats DemoEnvironment::runnerStats() const {
    return m_runner ? m_runner->stats() : m_lastRunnerStats;
}

void DemoEnvironment::fail(const QString &message) {
    qCWarning(lcConsole).noquote() << message;
    teardown(State::Failed);
    Q_EMIT failed(message);
}

void DemoEnvironment::stop() {
    if (m_state == State::Stopping) {
        m_finalState = State::Stopped; // a failure's teardown now also reports stopped()
        return;
    }
    teardown(State::Stopped);
}

void DemoEnvironment::teardown(State finalState) {
    ++m_generation; // late results of a start in progress are ignored
    m_finalState = finalState;
    setState(State::Stopping);
    m_pendingStops = 1; // released at the end of this function
    if (m_runner)
        m_lastRunnerStats = m_runner->stats();
    // Objects are deleted in their own threads when those finish; the GUI
    // thread forgets them now so no later call reaches a dying object.
    DemoProducer *producer = std::exchange(m_producer, nullptr);
    devtools::DevRunner *runner = std::exchange(m_runner, nullptr);
    devtools::DevRunner *rejecter = std::exchange(m_rejecter, nullptr);
    m_waitProducer = m_producerThread.isRunning();
    m_waitRunners = m_runnerThread.isRunning();
    m_waitCluster = m_cluster != nullptr;
    // Each thread first closes its connections in a job of its own and then
    // ends: finished() is emitted before the thread's deferred deletes, so
    // closing only in the destructors would race with the cluster's shutdown.
    if (m_waitProducer) {
        ++m_pendingStops;
        closeThenQuit(&m_producerThread, producer, [producer] { producer->stop(); });
    }
    if (m_waitRunners) {
        ++m_pendingStops;
        closeThenQuit(&m_runnerThread, runner && rejecter ? runner : nullptr, [runner, rejecter] {
            runner->close();
            rejecter->close();
        });
    }
    if (m_waitCluster) {
        ++m_pendingStops;
        // After the producer, so its connection does not see the shutdown
        // as an error.
        if (!m_waitProducer)
            stopCluster();
    }
    // Queued, so stopped() never arrives inside the caller's stop().
    QMetaObject::invokeMethod(this, &DemoEnvironment::stopStepDone, Qt::QueuedConnection);
}

void DemoEnvironment::onProducerThreadFinished() {
    if (m_state != State::Stopping || !m_waitProducer)
        return;
    m_waitProducer = false;
    if (m_waitCluster)
        stopCluster();
    stopStepDone();
}

void DemoEnvironment::onRunnerThreadFinished() {
    if (m_state != State::Stopping || !m_waitRunners)
        return;
    m_waitRunners = false;
    stopStepDone();
}

void DemoEnvironment::stopCluster() {
    // Posted after any start job on the same thread, so it also cleans up
    // after a start that is still running.
    QMetaObject::invokeMethod(
        m_setupContext,
        [this, cluster = std::move(m_cluster)]() mutable {
            if (const auto stoppedCluster = cluster->stop(); !stoppedCluster)
                qCWarning(lcConsole).noquote() << stoppedCluster.errorMessage();
            cluster.reset(); // removes the directory
            QMetaObject::invokeMethod(
                this,
                [this] {
                    m_waitCluster = false;
                    stopStepDone();
                },
                Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void DemoEnvironment::stopStepDone() {
    if (--m_pendingStops > 0)
        return;
    const State finalState = m_finalState;
    m_postgresPid = 0;
    m_runnerUrl.clear();
    m_rejectUrl.clear();
    m_kafka.reset(); // the dispatcher stopped before the demo (see the header)
    setState(finalState);
    if (finalState == State::Stopped) {
        qCInfo(lcConsole) << "demo: stopped; cluster directory removed";
        Q_EMIT stopped();
    }
}

} // namespace outbox::console
