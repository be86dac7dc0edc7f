#include "dispatch/webhookrequest.h"

#include "core/uuidtext.h"

#include <QDateTime>
#include <QSslCertificate>

#include <algorithm>
#include <climits>

namespace outbox::dispatch {

namespace {

// Header values must not carry line breaks or raw non-ASCII; namespace, topic
// and keys are free text in the table, so everything outside printable ASCII
// (and '%' itself) is percent-encoded UTF-8.
QByteArray headerValue(const QString &text) {
    const QByteArray utf8 = text.toUtf8();
    QByteArray out;
    out.reserve(utf8.size());
    for (char c : utf8) {
        const auto byte = uchar(c);
        if (byte < 0x20 || byte >= 0x7f || byte == '%') {
            out += '%';
            out += QByteArray::number(byte, 16).rightJustified(2, '0').toUpper();
        } else {
            out += c;
        }
    }
    return out;
}

} // namespace

core::Result<WebhookTarget> webhookTarget(const core::DispatcherConfig &config) {
    auto signer = core::WebhookSigner::fromSecrets(config.secrets);
    if (!signer)
        return signer.error();

    QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
    if (!config.caFile.isEmpty()) {
        const QList<QSslCertificate> certificates =
            QSslCertificate::fromPath(config.caFile, QSsl::Pem);
        if (certificates.isEmpty())
            return core::Error{
                core::ErrorKind::Invalid,
                QStringLiteral("the CA bundle \"") % config.caFile %
                    QStringLiteral("\" contains no PEM certificate; give a PEM file with the "
                                   "runner's CA (-----BEGIN CERTIFICATE-----)")};
        ssl.addCaCertificates(certificates);
    }

    WebhookTarget target;
    target.url = config.runnerUrl;
    target.signer = std::move(signer).value();
    target.authorization =
        config.bearerToken.isEmpty() ? QByteArray() : "Bearer " + config.bearerToken.toUtf8();
    target.timeout = config.requestTimeout;
    target.ssl = ssl;
    return target;
}

QNetworkRequest signedRequest(const WebhookTarget &target, const QByteArray &webhookId,
                              QByteArrayView body) {
    QNetworkRequest request(target.url);
    const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader(QByteArrayLiteral("webhook-id"), webhookId);
    request.setRawHeader(QByteArrayLiteral("webhook-timestamp"), QByteArray::number(timestamp));
    if (target.signer.isEnabled())
        request.setRawHeader(QByteArrayLiteral("webhook-signature"),
                             target.signer.sign(webhookId, timestamp, body));
    if (!target.authorization.isEmpty())
        request.setRawHeader(QByteArrayLiteral("Authorization"), target.authorization);

    // HTTP/2 in Qt 6.4 stalls about 40 ms per round trip; HTTP/1.1 keep-alive
    // with a pool of managers is far faster for small POSTs.
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute,
                         QNetworkRequest::AlwaysNetwork);
    request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    request.setTransferTimeout(int(std::min<qint64>(target.timeout.count(), INT_MAX)));
    if (target.url.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0)
        request.setSslConfiguration(target.ssl);
    return request;
}

QNetworkRequest webhookRequest(const WebhookTarget &target, const store::ClaimedEvent &event) {
    const QByteArray id = core::uuidText(event.id).toLatin1();
    QNetworkRequest request = signedRequest(target, id, event.payload);
    request.setRawHeader(QByteArrayLiteral("Idempotency-Key"),
                         event.dedupeKey ? headerValue(*event.dedupeKey) : id);
    request.setRawHeader(QByteArrayLiteral("Outbox-Namespace"), headerValue(event.nameSpace));
    request.setRawHeader(QByteArrayLiteral("Outbox-Topic"), headerValue(event.topic));
    if (event.tenantId)
        request.setRawHeader(QByteArrayLiteral("Outbox-Tenant"),
                             core::uuidText(*event.tenantId).toLatin1());
    request.setRawHeader(QByteArrayLiteral("Outbox-Attempt"), QByteArray::number(event.attempts));
    return request;
}

QString scrubSecrets(const WebhookTarget &target, QString text) {
    static const QByteArray bearer = QByteArrayLiteral("Bearer ");
    if (target.authorization.startsWith(bearer) && target.authorization.size() > bearer.size())
        text.replace(QString::fromUtf8(target.authorization.mid(bearer.size())),
                     QStringLiteral("***"));
    if (!target.url.password().isEmpty())
        text.replace(target.url.password(), QStringLiteral("***"));
    return text;
}

} // namespace outbox::dispatch
