#include "core/webhooksigner.h"

#include <QFile>

#include <algorithm>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace outbox::core {

namespace {

// The signed content, "id.timestamp.body": built once per request, whatever
// the number of secrets.
QByteArray signedContent(QByteArrayView id, qint64 timestamp, QByteArrayView body) {
    const QByteArray stamp = QByteArray::number(timestamp);
    QByteArray content;
    content.reserve(id.size() + stamp.size() + body.size() + 2);
    content.append(id).append('.').append(stamp).append('.').append(body);
    return content;
}

// HMAC-SHA256 of the signed content by libcrypto, not by Qt's
// QMessageAuthenticationCode: every request and every batch of a dispatcher
// is signed, and Qt's SHA-256 is portable C (182 MB/s on the benchmark
// machine) where libcrypto uses the CPU's SHA instructions (1.8 GB/s);
// docs/DECISIONS.md, "Signing with libcrypto".
QByteArray mac(const QByteArray &key, const QByteArray &content) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), key.constData(), int(key.size()),
              reinterpret_cast<const unsigned char *>(content.constData()), size_t(content.size()),
              digest, &length))
        return {}; // out of memory inside libcrypto: no signature matches an empty one
    return QByteArray(reinterpret_cast<const char *>(digest), qsizetype(length));
}

// Compares without an early exit so that the time taken does not reveal how
// much of a forged signature was right.
bool constantTimeEquals(QByteArrayView a, QByteArrayView b) {
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= uchar(a[i]) ^ uchar(b[i]);
    return diff == 0;
}

} // namespace

Result<WebhookSigner> WebhookSigner::fromSecrets(const QStringList &secrets) {
    WebhookSigner signer;
    for (qsizetype i = 0; i < secrets.size(); ++i) {
        // Messages say which secret by position: the text itself is never
        // repeated back.
        const QString which = secrets.size() == 1
                                  ? QStringLiteral("the webhook secret")
                                  : QStringLiteral("webhook secret #") % QString::number(i + 1);
        QString text = secrets.at(i).trimmed();
        if (text.startsWith(QLatin1String("whsec_")))
            text = text.mid(6);
        if (text.isEmpty())
            return Result<WebhookSigner>::failure(
                ErrorKind::Invalid,
                which % QStringLiteral(" is empty; use whsec_ followed by base64 key bytes"));
        const auto decoded = QByteArray::fromBase64Encoding(
            text.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        const bool ascii =
            std::all_of(text.begin(), text.end(), [](QChar c) { return c.unicode() < 0x80; });
        if (!ascii || !decoded || decoded.decoded.isEmpty())
            return Result<WebhookSigner>::failure(
                ErrorKind::Invalid,
                which % QStringLiteral(" is not valid base64 after the whsec_ prefix; copy it "
                                       "again from the runner's configuration"));
        signer.m_keys.append(decoded.decoded);
    }
    return signer;
}

Result<WebhookSigner> WebhookSigner::fromFile(const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return Result<WebhookSigner>::failure(
            ErrorKind::Invalid, QStringLiteral("cannot read the webhook secret file "
                                               "\"") %
                                    path % QStringLiteral("\": ") % file.errorString());
    QStringList secrets;
    QList<int> lineNumbers;
    int lineNumber = 0;
    while (!file.atEnd()) {
        ++lineNumber;
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty())
            continue;
        secrets << line;
        lineNumbers << lineNumber;
    }
    if (file.error() != QFileDevice::NoError)
        return Result<WebhookSigner>::failure(
            ErrorKind::Invalid, QStringLiteral("cannot read the webhook secret file "
                                               "\"") %
                                    path % QStringLiteral("\": ") % file.errorString());
    if (secrets.isEmpty())
        return Result<WebhookSigner>::failure(
            ErrorKind::Invalid, QStringLiteral("the webhook secret file \"") % path %
                                    QStringLiteral("\" contains no secret; put one whsec_... "
                                                   "secret per line"));

    WebhookSigner signer;
    for (qsizetype i = 0; i < secrets.size(); ++i) {
        auto one = fromSecrets({secrets.at(i)});
        if (!one)
            return Result<WebhookSigner>::failure(
                ErrorKind::Invalid,
                QStringLiteral("the webhook secret file \"") % path % QStringLiteral("\", line ") %
                    QString::number(lineNumbers.at(i)) % QStringLiteral(": ") % one.errorMessage());
        signer.m_keys.append(one->m_keys);
    }
    return signer;
}

QByteArray WebhookSigner::sign(QByteArrayView id, qint64 timestamp, QByteArrayView body) const {
    QByteArray header;
    const QByteArray content = signedContent(id, timestamp, body);
    for (const QByteArray &key : m_keys) {
        if (!header.isEmpty())
            header += ' ';
        header += "v1," + mac(key, content).toBase64();
    }
    return header;
}

bool WebhookSigner::verify(QByteArrayView id, qint64 timestamp, QByteArrayView body,
                           QByteArrayView header) const {
    if (m_keys.isEmpty())
        return false;
    QList<QByteArray> expected;
    expected.reserve(m_keys.size());
    const QByteArray content = signedContent(id, timestamp, body);
    for (const QByteArray &key : m_keys)
        expected << mac(key, content);

    for (const QByteArray &entry : header.toByteArray().split(' ')) {
        if (!entry.startsWith("v1,"))
            continue;
        const auto decoded =
            QByteArray::fromBase64Encoding(entry.mid(3), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded)
            continue;
        for (const QByteArray &candidate : expected) {
            // An empty MAC (libcrypto failed) matches nothing, not "v1,".
            if (!candidate.isEmpty() && constantTimeEquals(decoded.decoded, candidate))
                return true;
        }
    }
    return false;
}

} // namespace outbox::core
