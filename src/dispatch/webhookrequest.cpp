#include "dispatch/webhookrequest.h"

#include "core/uuidtext.h"

#include <QDateTime>
#include <QSslCertificate>

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

bool isHttps(const QUrl &url) {
    return url.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0;
}

int defaultPort(const QUrl &url) {
    return isHttps(url) ? 443 : 80;
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
    if (!config.bearerToken.isEmpty())
        target.authorization = "Bearer " + config.bearerToken.toUtf8();
    else if (!config.runnerUrl.userName().isEmpty())
        target.authorization =
            "Basic " +
            (config.runnerUrl.userName() + u':' + config.runnerUrl.password()).toUtf8().toBase64();
    target.timeout = config.requestTimeout;
    target.ssl = ssl;
    return target;
}

HttpHeaders signedHeaders(const WebhookTarget &target, const QByteArray &webhookId,
                          QByteArrayView body) {
    const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
    HttpHeaders headers{{QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")},
                        {QByteArrayLiteral("webhook-id"), webhookId},
                        {QByteArrayLiteral("webhook-timestamp"), QByteArray::number(timestamp)}};
    if (target.signer.isEnabled())
        headers.append({QByteArrayLiteral("webhook-signature"),
                        target.signer.sign(webhookId, timestamp, body)});
    if (!target.authorization.isEmpty())
        headers.append({QByteArrayLiteral("Authorization"), target.authorization});
    return headers;
}

HttpHeaders webhookHeaders(const WebhookTarget &target, const store::ClaimedEvent &event) {
    const QByteArray id = core::uuidText(event.id).toLatin1();
    HttpHeaders headers = signedHeaders(target, id, event.payload);
    headers.append({QByteArrayLiteral("Idempotency-Key"),
                    event.dedupeKey ? headerValue(*event.dedupeKey) : id});
    headers.append({QByteArrayLiteral("Outbox-Namespace"), headerValue(event.nameSpace)});
    headers.append({QByteArrayLiteral("Outbox-Topic"), headerValue(event.topic)});
    if (event.tenantId)
        headers.append(
            {QByteArrayLiteral("Outbox-Tenant"), core::uuidText(*event.tenantId).toLatin1()});
    headers.append({QByteArrayLiteral("Outbox-Attempt"), QByteArray::number(event.attempts)});
    // W3C Trace Context: the database admits only its printable ASCII grammar.
    if (event.traceparent)
        headers.append({QByteArrayLiteral("traceparent"), headerValue(*event.traceparent)});
    if (event.tracestate)
        headers.append({QByteArrayLiteral("tracestate"), headerValue(*event.tracestate)});
    return headers;
}

QByteArray httpRequest(const WebhookTarget &target, const HttpHeaders &headers,
                       QByteArrayView body) {
    const QUrl &url = target.url;
    QByteArray path = url.path(QUrl::FullyEncoded).toLatin1();
    if (path.isEmpty())
        path = "/";
    if (url.hasQuery())
        path += '?' + url.query(QUrl::FullyEncoded).toLatin1();
    QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    if (host.contains(':'))
        host = '[' + host + ']'; // IPv6
    if (url.port() != -1 && url.port() != defaultPort(url))
        host += ':' + QByteArray::number(url.port());

    QByteArray out;
    out.reserve(256 + path.size() + qsizetype(headers.size()) * 64 + body.size());
    out += "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: outbox-dispatcher\r\n";
    for (const auto &[name, value] : headers)
        out += name + ": " + value + "\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n";
    out.append(body.data(), body.size());
    return out;
}

HttpEndpoint httpEndpoint(const WebhookTarget &target) {
    HttpEndpoint endpoint;
    endpoint.host = target.url.host();
    endpoint.port = quint16(target.url.port(defaultPort(target.url)));
    endpoint.tls = isHttps(target.url);
    if (endpoint.tls)
        endpoint.ssl = target.ssl;
    return endpoint;
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
