#include "bench/httpceiling.h"

#include "core/webhooksigner.h"

#include <QDateTime>
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

namespace {

constexpr int ConnectionsPerManager = 6; // Qt's HTTP/1.1 limit per host and manager

QByteArray payload(int bytes, int n) {
    const QByteArray head = "{\"n\": " + QByteArray::number(n) + ", \"pad\": \"";
    const qsizetype padding = std::max<qsizetype>(bytes - head.size() - 2, 0);
    return head + QByteArray(padding, 'x') + "\"}";
}

class Load final {
public:
    Load(const QUrl &url, core::WebhookSigner signer, int concurrency, int payloadBytes)
        : m_url(url)
        , m_signer(std::move(signer))
        , m_concurrency(concurrency)
        , m_body(payload(payloadBytes, 1)) {
        const int managers = (concurrency + ConnectionsPerManager - 1) / ConnectionsPerManager;
        for (int i = 0; i < managers; ++i) {
            auto manager = std::make_unique<QNetworkAccessManager>();
            manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
            manager->setAutoDeleteReplies(false);
            m_managers.push_back(std::move(manager));
            m_load.push_back(0);
        }
    }

    int managers() const { return int(m_managers.size()); }

    // Sends `total` requests keeping `concurrency` in flight; false on timeout.
    bool run(int total, qint64 &failures, qint64 &elapsedNs) {
        m_total = total;
        m_started = 0;
        m_finished = 0;
        m_failures = 0;
        QTimer timeout;
        timeout.setSingleShot(true);
        QObject::connect(&timeout, &QTimer::timeout, &m_loop, [this] { m_loop.exit(1); });
        timeout.start(300000);
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < m_concurrency && m_started < m_total; ++i)
            send();
        const int code = m_total > 0 ? m_loop.exec() : 0;
        elapsedNs = clock.nsecsElapsed();
        failures = m_failures;
        return code == 0;
    }

private:
    // The same request the dispatcher's HttpPublisher makes.
    QNetworkRequest request(const QByteArray &id) const {
        QNetworkRequest request(m_url);
        const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));
        request.setRawHeader(QByteArrayLiteral("webhook-id"), id);
        request.setRawHeader(QByteArrayLiteral("webhook-timestamp"), QByteArray::number(timestamp));
        request.setRawHeader(QByteArrayLiteral("webhook-signature"),
                             m_signer.sign(id, timestamp, m_body));
        request.setRawHeader(QByteArrayLiteral("Idempotency-Key"), id);
        request.setRawHeader(QByteArrayLiteral("Outbox-Namespace"), QByteArrayLiteral("bench"));
        request.setRawHeader(QByteArrayLiteral("Outbox-Topic"), QByteArrayLiteral("bench.http"));
        request.setRawHeader(QByteArrayLiteral("Outbox-Attempt"), QByteArrayLiteral("1"));
        request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                             QNetworkRequest::ManualRedirectPolicy);
        request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                             QNetworkRequest::AlwaysNetwork);
        request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
        request.setTransferTimeout(10000);
        return request;
    }

    void send() {
        // The least busy manager, as HttpPublisher picks it.
        const auto chosen = size_t(std::min_element(m_load.begin(), m_load.end()) - m_load.begin());
        QNetworkAccessManager *manager = m_managers[chosen].get();
        ++m_load[chosen];
        const QByteArray id = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
        QNetworkReply *reply = manager->post(request(id), m_body);
        ++m_started;
        QObject::connect(reply, &QNetworkReply::finished, &m_loop, [this, reply, chosen] {
            --m_load[chosen];
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (reply->error() != QNetworkReply::NoError || status < 200 || status >= 300)
                ++m_failures;
            reply->deleteLater();
            ++m_finished;
            if (m_started < m_total)
                send();
            else if (m_finished == m_total)
                m_loop.quit();
        });
    }

    QUrl m_url;
    core::WebhookSigner m_signer;
    int m_concurrency = 1;
    QByteArray m_body;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    QEventLoop m_loop;
    std::vector<int> m_load; // requests in flight per manager
    int m_total = 0;
    int m_started = 0;
    int m_finished = 0;
    qint64 m_failures = 0;
};

} // namespace

core::Result<HttpCeiling> measureHttpCeiling(const QUrl &url, const QString &secret, int requests,
                                             int concurrency, int payloadBytes,
                                             const CpuMeter &meter) {
    auto signer = core::WebhookSigner::fromSecrets({secret});
    if (!signer)
        return signer.error();
    Load load(url, std::move(signer).value(), std::max(concurrency, 1), payloadBytes);
    qint64 failures = 0;
    qint64 elapsedNs = 0;
    // Warm-up: open the connections (the dispatcher keeps its own open too).
    if (!load.run(std::min(requests, 2000), failures, elapsedNs))
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("HTTP ceiling: the runner did not answer in time")};
    const CpuSnapshot before = meter.sample();
    if (!load.run(requests, failures, elapsedNs))
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("HTTP ceiling: the runner did not answer in time")};
    HttpCeiling result;
    result.cpu = meter.between(before, meter.sample());
    result.managers = load.managers();
    result.failures = failures;
    result.requestsPerSecond = elapsedNs > 0 ? double(requests) * 1e9 / double(elapsedNs) : 0.0;
    return result;
}

} // namespace outbox::bench
