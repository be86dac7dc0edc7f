#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace outbox::core {

// Standard Webhooks signatures: HMAC-SHA256 over "{id}.{timestamp}.{body}",
// key = base64-decoded secret after the "whsec_" prefix; header value
// "v1,<base64>", several separated by spaces while a secret is rotated.
class WebhookSigner final {
public:
    WebhookSigner() = default; // no secrets: sign() returns an empty value

    // Each secret is "whsec_<base64>" (a bare base64 string is accepted too).
    // Refuses empty or non-base64 secrets with a message that never echoes them.
    static Result<WebhookSigner> fromSecrets(const QStringList &secrets);
    // One secret per non-empty line of the file (rotation: old and new).
    static Result<WebhookSigner> fromFile(const QString &path);

    bool isEnabled() const { return !m_keys.isEmpty(); }
    QByteArray sign(QByteArrayView id, qint64 timestamp, QByteArrayView body) const;
    // True when any v1 signature in `header` matches any key.
    bool verify(QByteArrayView id, qint64 timestamp, QByteArrayView body,
                QByteArrayView header) const;

private:
    QList<QByteArray> m_keys;
};

} // namespace outbox::core
