#include "bench/dispatch.h"

#include "bench/harness.h"
#include "bench/report.h"
#include "core/webhooksigner.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/webhookclient.h"
#include "dispatch/webhookrequest.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonObject>
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
                             host.stop();
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

// One request's body: a JSON object padded to `bytes`.
QByteArray paddedBody(int bytes) {
    const QByteArray head = "{\"n\": 1, \"pad\": \"";
    return head + QByteArray(std::max<qsizetype>(bytes - head.size() - 2, 0), 'x') + "\"}";
}

// The dispatcher's own headers for an event like the end-to-end phase's.
dispatch::HttpHeaders eventHeaders(const dispatch::WebhookTarget &target, const QByteArray &body) {
    store::ClaimedEvent event;
    event.id = QUuid::createUuid();
    event.nameSpace = QStringLiteral("bench");
    event.topic = QStringLiteral("bench.http");
    event.attempts = 1;
    event.payload = body;
    return dispatch::webhookHeaders(target, event);
}

// Sends one request through a client; `done(ok)` once it is answered (2xx).
using Post = std::function<void(std::function<void(bool ok)> done)>;

// QNetworkAccessManager as HttpPublisher used it up to this change: one
// manager per 6 connections (Qt's limit per host and manager), each request
// on the least busy one, HTTP/2 off, no redirects, cookies or cache.
class QnamClient final {
public:
    QnamClient(const dispatch::WebhookTarget &target, int concurrency, QByteArray body)
        : m_target(target)
        , m_body(std::move(body)) {
        for (int i = 0; i < (concurrency + 5) / 6; ++i) {
            auto manager = std::make_unique<QNetworkAccessManager>();
            manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
            manager->setAutoDeleteReplies(false);
            m_managers.push_back(std::move(manager));
            m_load.push_back(0);
        }
    }
    int managers() const { return int(m_managers.size()); }

    void post(std::function<void(bool ok)> done) {
        const auto chosen = size_t(std::min_element(m_load.begin(), m_load.end()) - m_load.begin());
        ++m_load[chosen];
        QNetworkRequest request(m_target.url);
        for (const auto &[name, value] : eventHeaders(m_target, m_body))
            request.setRawHeader(name, value);
        request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                             QNetworkRequest::AlwaysNetwork);
        request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
        request.setTransferTimeout(10000);
        QNetworkReply *reply = m_managers[chosen]->post(request, m_body);
        QObject::connect(reply, &QNetworkReply::finished, reply, [this, reply, chosen, done] {
            --m_load[chosen];
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            reply->deleteLater();
            done(reply->error() == QNetworkReply::NoError && status >= 200 && status < 300);
        });
    }

private:
    dispatch::WebhookTarget m_target;
    QByteArray m_body;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    std::vector<int> m_load; // requests in flight per manager
};

// The dispatcher's client (WebhookClient), one connection per request in flight.
class OwnClient final {
public:
    OwnClient(const dispatch::WebhookTarget &target, int concurrency, QByteArray body)
        : m_target(target)
        , m_body(std::move(body)) {
        m_client.configure(dispatch::httpEndpoint(target), target.timeout, concurrency);
    }
    void post(std::function<void(bool ok)> done) {
        m_client.post(dispatch::httpRequest(m_target, eventHeaders(m_target, m_body), m_body),
                      64 * 1024, [done](dispatch::HttpAnswer &answer) {
                          done(answer.failure == dispatch::HttpAnswer::Failure::None &&
                               answer.status >= 200 && answer.status < 300);
                      });
    }

private:
    dispatch::WebhookTarget m_target;
    QByteArray m_body;
    dispatch::WebhookClient m_client;
};

struct Driven {
    qint64 elapsedNs = 0;
    qint64 failures = 0;
    QList<double> latenciesMs; // per request
};

// Sends `total` requests through `post` keeping `concurrency` in flight, in
// an event loop of its own; fails after 5 minutes.
core::Result<Driven> drive(const Post &post, int total, int concurrency) {
    QEventLoop loop;
    Driven result;
    result.latenciesMs.reserve(total);
    int started = 0;
    int finished = 0;
    std::function<void()> send = [&] {
        ++started;
        QElapsedTimer clock;
        clock.start();
        post([&, clock](bool ok) {
            result.latenciesMs.append(double(clock.nsecsElapsed()) / 1e6);
            result.failures += ok ? 0 : 1;
            if (++finished == total)
                loop.quit();
            else if (started < total)
                send();
        });
    };
    QTimer::singleShot(300000, &loop, [&loop] { loop.exit(1); });
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < std::min(concurrency, total); ++i)
        send();
    if (total > 0 && loop.exec() != 0)
        return failure(QStringLiteral("the runner did not answer %1 requests within 5 minutes")
                           .arg(total - finished));
    result.elapsedNs = clock.nsecsElapsed();
    return result;
}

core::Result<dispatch::WebhookTarget> targetFor(const QUrl &url, const QString &secret) {
    auto signer = core::WebhookSigner::fromSecrets({secret});
    if (!signer)
        return signer.error();
    dispatch::WebhookTarget target;
    target.url = url;
    target.signer = std::move(signer).value();
    return target;
}

} // namespace

core::Result<HttpCeiling> measureHttpCeiling(const QUrl &url, const QString &secret, int requests,
                                             int concurrency, int payloadBytes, bool qnam) {
    auto target = targetFor(url, secret);
    if (!target)
        return target.error();
    concurrency = std::max(concurrency, 1);
    HttpCeiling result;
    std::unique_ptr<QnamClient> viaQnam;
    std::unique_ptr<OwnClient> viaOwn;
    Post post;
    if (qnam) {
        viaQnam = std::make_unique<QnamClient>(target.value(), concurrency, paddedBody(payloadBytes));
        result.managers = viaQnam->managers();
        post = [&viaQnam](auto done) { viaQnam->post(std::move(done)); };
    } else {
        viaOwn = std::make_unique<OwnClient>(target.value(), concurrency, paddedBody(payloadBytes));
        post = [&viaOwn](auto done) { viaOwn->post(std::move(done)); };
    }
    // Warm-up: open the connections (the dispatcher keeps its own open too).
    if (auto warm = drive(post, std::min(requests, 2000), concurrency); !warm)
        return warm.error();
    auto run = drive(post, requests, concurrency);
    if (!run)
        return run.error();
    result.failures = run->failures;
    result.requestsPerSecond =
        run->elapsedNs > 0 ? double(requests) * 1e9 / double(run->elapsedNs) : 0.0;
    return result;
}

core::Result<QJsonArray> measureLatencyBySize(const QUrl &url, const QString &secret,
                                              const QList<int> &sizes, int requests) {
    auto target = targetFor(url, secret);
    if (!target)
        return target.error();
    QJsonArray rows;
    for (const int bytes : sizes) {
        QJsonObject row{{QStringLiteral("bytes"), bytes}};
        for (const bool qnam : {false, true}) {
            // One request at a time, on one warm connection.
            QnamClient viaQnam(target.value(), 1, paddedBody(bytes));
            OwnClient viaOwn(target.value(), 1, paddedBody(bytes));
            const Post post = [&](auto done) {
                qnam ? viaQnam.post(std::move(done)) : viaOwn.post(std::move(done));
            };
            if (auto warm = drive(post, 3, 1); !warm)
                return warm.error();
            auto run = drive(post, requests, 1);
            if (!run)
                return run.error();
            if (run->failures > 0)
                return failure(QStringLiteral("%1 of %2 requests of %3 bytes failed")
                                   .arg(run->failures)
                                   .arg(requests)
                                   .arg(bytes));
            const QList<double> &ms = run->latenciesMs;
            const qsizetype stalls =
                std::count_if(ms.begin(), ms.end(), [](double value) { return value >= 20.0; });
            row.insert(qnam ? QStringLiteral("qnam") : QStringLiteral("client"),
                       QJsonObject{{QStringLiteral("p50_ms"), rounded(percentile(ms, 0.5), 3)},
                                   {QStringLiteral("p99_ms"), rounded(percentile(ms, 0.99), 3)},
                                   {QStringLiteral("max_ms"), rounded(percentile(ms, 1.0), 3)},
                                   {QStringLiteral("over_20_ms"), qint64(stalls)}});
        }
        rows.append(row);
    }
    return rows;
}

} // namespace outbox::bench
