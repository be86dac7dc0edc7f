#include "devtools/httpload.h"

#include "dispatch/webhookclient.h"
#include "dispatch/webhookrequest.h"

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

namespace outbox::devtools {

namespace {

using Done = std::function<void(bool ok)>;

// The dispatcher's own headers for an event like the end-to-end phases'.
dispatch::HttpHeaders eventHeaders(const dispatch::WebhookTarget &target, const QByteArray &body) {
    store::ClaimedEvent event;
    event.id = QUuid::createUuid();
    event.nameSpace = QStringLiteral("bench");
    event.topic = QStringLiteral("bench.http");
    event.attempts = 1;
    event.payload = body;
    return dispatch::webhookHeaders(target, event);
}

bool isSuccess(int status) {
    return status >= 200 && status < 300;
}

class Load final {
public:
    Load(HttpClientKind kind, dispatch::WebhookTarget target, int bodyBytes, int concurrency)
        : m_kind(kind)
        , m_target(std::move(target)) {
        const QByteArray head = "{\"n\": 1, \"pad\": \"";
        m_body =
            head + QByteArray(std::max<qsizetype>(bodyBytes - head.size() - 2, 0), 'x') + "\"}";
        if (kind == HttpClientKind::Webhook)
            m_client.configure(dispatch::httpEndpoint(m_target), m_target.timeout, concurrency);
        for (int i = 0; kind == HttpClientKind::Qnam && i < (concurrency + 5) / 6; ++i) {
            auto manager = std::make_unique<QNetworkAccessManager>();
            manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
            manager->setAutoDeleteReplies(false);
            m_managers.push_back(std::move(manager));
            m_load.push_back(0);
        }
    }
    int managers() const { return int(m_managers.size()); }

    // Builds and signs a request, starts `sent`, hands it to the client.
    void post(QElapsedTimer &sent, Done done) {
        const dispatch::HttpHeaders headers = eventHeaders(m_target, m_body);
        if (m_kind == HttpClientKind::Webhook) {
            const QByteArray request = dispatch::httpRequest(m_target, headers, m_body);
            sent.start();
            m_client.post(request, 64 * 1024, [done](dispatch::HttpAnswer &answer) {
                done(answer.failure == dispatch::HttpAnswer::Failure::None &&
                     isSuccess(answer.status));
            });
            return;
        }
        const auto chosen = size_t(std::min_element(m_load.begin(), m_load.end()) - m_load.begin());
        QNetworkRequest request(m_target.url);
        for (const auto &[name, value] : headers)
            request.setRawHeader(name, value);
        request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
        request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
        request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                             QNetworkRequest::AlwaysNetwork);
        request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
        request.setTransferTimeout(int(m_target.timeout.count()));
        ++m_load[chosen];
        sent.start();
        QNetworkReply *reply = m_managers[chosen]->post(request, m_body);
        QObject::connect(reply, &QNetworkReply::finished, reply, [this, reply, chosen, done] {
            --m_load[chosen];
            reply->deleteLater();
            done(reply->error() == QNetworkReply::NoError &&
                 isSuccess(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt()));
        });
    }

    // `total` requests, `concurrency` in flight; false after 5 minutes.
    bool run(int total, int concurrency, HttpLoadResult &result) {
        QEventLoop loop;
        int started = 0;
        int finished = 0;
        std::function<void()> send = [&] {
            ++started;
            auto sent = std::make_shared<QElapsedTimer>();
            post(*sent, [&, sent](bool ok) {
                result.latenciesMs.append(double(sent->nsecsElapsed()) / 1e6);
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
        const bool answered = total == 0 || loop.exec() == 0;
        result.elapsedNs = clock.nsecsElapsed();
        return answered;
    }

private:
    HttpClientKind m_kind;
    dispatch::WebhookTarget m_target;
    QByteArray m_body;
    dispatch::WebhookClient m_client;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    std::vector<int> m_load; // requests in flight per manager
};

} // namespace

core::Result<HttpLoadResult> postLoad(HttpClientKind kind, const QUrl &url, const QString &secret,
                                      int bodyBytes, int concurrency, int warmUp, int total) {
    auto signer = core::WebhookSigner::fromSecrets({secret});
    if (!signer)
        return signer.error();
    dispatch::WebhookTarget target;
    target.url = url;
    target.signer = std::move(signer).value();
    concurrency = std::max(concurrency, 1);
    Load load(kind, std::move(target), bodyBytes, concurrency);
    HttpLoadResult result;
    // The warm-up opens the connections (the dispatcher keeps its own open too).
    if (!load.run(warmUp, concurrency, result) ||
        !(result = {}, load.run(total, concurrency, result)))
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("the runner left requests unanswered for 5 minutes")};
    result.managers = load.managers();
    return result;
}

} // namespace outbox::devtools
