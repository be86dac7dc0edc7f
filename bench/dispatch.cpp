#include "bench/dispatch.h"

#include "bench/harness.h"
#include "core/webhooksigner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/httppublisher.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>
#include <QUuid>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace outbox::bench {

core::Result<DispatchRun> runDispatcher(const DispatchPlan &plan) {
    constexpr core::Millis sampleEvery{100}, timeout{1800000}, stallTimeout{60000};
    dispatch::DispatcherHost host(plan.connInfo, plan.config, plan.publisherFactory, plan.options);
    DispatchRun run;
    QEventLoop loop;
    QElapsedTimer clock;
    QString error;
    bool reached = false;
    double lastSample = -1.0;

    QObject::connect(&host, &dispatch::DispatcherHost::started, &loop, [&] {
        clock.start();
        run.rssMbStart = residentMb();
        run.rssMbMax = run.rssMbStart;
        run.samples.append(DeliverySample{0.0, 0});
        lastSample = 0.0;
        if (plan.onStarted)
            plan.onStarted();
    });
    QObject::connect(&host, &dispatch::DispatcherHost::statsSnapshot, &loop,
                     [&](const dispatch::DispatcherStats &stats) {
                         run.stats = stats;
                         if (!clock.isValid() || reached)
                             return;
                         const double seconds = double(clock.nsecsElapsed()) / 1e9;
                         if (stats.delivered >= plan.target) {
                             reached = true;
                             run.seconds = seconds;
                             run.samples.append(DeliverySample{seconds, stats.delivered});
                             run.rssMbEnd = residentMb();
                             run.rssMbMax = std::max(run.rssMbMax, run.rssMbEnd);
                             if (plan.onTarget)
                                 plan.onTarget();
                             QTimer::singleShot(plan.idleAfter, &loop, [&host] { host.stop(); });
                             return;
                         }
                         if ((seconds - lastSample) * 1000.0 >= double(sampleEvery.count())) {
                             lastSample = seconds;
                             run.samples.append(DeliverySample{seconds, stats.delivered});
                             run.rssMbMax = std::max(run.rssMbMax, residentMb());
                         }
                     });
    QObject::connect(&host, &dispatch::DispatcherHost::failed, &loop,
                     [&](const QString &message) { error = message; });
    QObject::connect(&host, &dispatch::DispatcherHost::stopped, &loop, &QEventLoop::quit);
    // A run that stops making progress fails with a message instead of
    // waiting for the overall timeout.
    qint64 lastDelivered = -1;
    QElapsedTimer sinceProgress;
    sinceProgress.start();
    QElapsedTimer sinceStart;
    sinceStart.start();
    QTimer check;
    QObject::connect(&check, &QTimer::timeout, &loop, [&] {
        if (!error.isEmpty() || reached)
            return;
        if (sinceStart.elapsed() >= timeout.count()) {
            error = QStringLiteral("only %1 of %2 events were delivered within %3")
                        .arg(run.stats.delivered)
                        .arg(plan.target)
                        .arg(core::formatDuration(timeout));
            host.stop();
        } else if (run.stats.delivered != lastDelivered) {
            lastDelivered = run.stats.delivered;
            sinceProgress.restart();
        } else if (sinceProgress.elapsed() >= stallTimeout.count()) {
            error = QStringLiteral("no progress for %1: %2 of %3 events delivered (state %4%5)")
                        .arg(core::formatDuration(stallTimeout))
                        .arg(run.stats.delivered)
                        .arg(plan.target)
                        .arg(dispatch::stateName(run.stats.state),
                             run.stats.lastError.isEmpty()
                                 ? QString()
                                 : QStringLiteral(", last error: ") + run.stats.lastError);
            host.stop();
        }
    });
    check.start(1000);
    host.start();
    loop.exec();
    if (!error.isEmpty())
        return core::Error{core::ErrorKind::Failed, error};
    if (!reached)
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("the dispatcher stopped before delivering every event")};
    return run;
}

namespace {

constexpr int ConnectionsPerManager = 6; // Qt's HTTP/1.1 limit per host and manager

class Load final {
public:
    Load(const QUrl &url, core::WebhookSigner signer, int concurrency, int payloadBytes)
        : m_concurrency(concurrency) {
        m_target.url = url;
        m_target.signer = std::move(signer);
        const QByteArray head = "{\"n\": 1, \"pad\": \"";
        m_body =
            head + QByteArray(std::max<qsizetype>(payloadBytes - head.size() - 2, 0), 'x') + "\"}";
        for (int i = 0; i < (concurrency + ConnectionsPerManager - 1) / ConnectionsPerManager;
             ++i) {
            auto manager = std::make_unique<QNetworkAccessManager>();
            manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
            manager->setAutoDeleteReplies(false);
            m_managers.push_back(std::move(manager));
            m_load.push_back(0);
        }
    }

    int managers() const { return int(m_managers.size()); }

    // Sends `total` requests keeping `concurrency` in flight; false on
    // timeout. Sets failures and elapsedNs.
    bool run(int total) {
        m_total = total;
        m_started = m_finished = 0;
        failures = 0;
        QTimer timeout; // this run's only
        timeout.setSingleShot(true);
        QObject::connect(&timeout, &QTimer::timeout, &m_loop, [this] { m_loop.exit(1); });
        timeout.start(300000);
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < m_concurrency && m_started < m_total; ++i)
            send();
        const int code = m_total > 0 ? m_loop.exec() : 0;
        elapsedNs = clock.nsecsElapsed();
        return code == 0;
    }

    qint64 failures = 0; // non-2xx answers or transport errors
    qint64 elapsedNs = 0;

private:
    void send() {
        // The least busy manager, as HttpPublisher picks it.
        const auto chosen = size_t(std::min_element(m_load.begin(), m_load.end()) - m_load.begin());
        ++m_load[chosen];
        ++m_started;
        // The dispatcher's own request for an event like the end-to-end phase's.
        store::ClaimedEvent event;
        event.id = QUuid::createUuid();
        event.nameSpace = QStringLiteral("bench");
        event.topic = QStringLiteral("bench.http");
        event.attempts = 1;
        event.payload = m_body;
        QNetworkReply *reply =
            m_managers[chosen]->post(dispatch::webhookRequest(m_target, event), m_body);
        QObject::connect(reply, &QNetworkReply::finished, &m_loop, [this, reply, chosen] {
            --m_load[chosen];
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (reply->error() != QNetworkReply::NoError || status < 200 || status >= 300)
                ++failures;
            reply->deleteLater();
            if (++m_finished == m_total)
                m_loop.quit();
            else if (m_started < m_total)
                send();
        });
    }

    dispatch::WebhookTarget m_target;
    int m_concurrency = 1;
    QByteArray m_body;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    std::vector<int> m_load; // requests in flight per manager
    QEventLoop m_loop;
    int m_total = 0;
    int m_started = 0;
    int m_finished = 0;
};

} // namespace

core::Result<HttpCeiling> measureHttpCeiling(const QUrl &url, const QString &secret, int requests,
                                             int concurrency, int payloadBytes) {
    auto signer = core::WebhookSigner::fromSecrets({secret});
    if (!signer)
        return signer.error();
    Load load(url, std::move(signer).value(), std::max(concurrency, 1), payloadBytes);
    const QString late = QStringLiteral("the runner did not answer in time");
    // Warm-up: open the connections (the dispatcher keeps its own open too).
    if (!load.run(std::min(requests, 2000)))
        return failure(late);
    if (!load.run(requests))
        return failure(late);
    HttpCeiling result;
    result.managers = load.managers();
    result.failures = load.failures;
    result.requestsPerSecond =
        load.elapsedNs > 0 ? double(requests) * 1e9 / double(load.elapsedNs) : 0.0;
    return result;
}

} // namespace outbox::bench
