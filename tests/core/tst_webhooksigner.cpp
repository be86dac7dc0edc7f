#include "core/webhooksigner.h"

#include <QFile>
#include <QMessageAuthenticationCode>
#include <QTemporaryDir>
#include <QTest>

using namespace outbox::core;

namespace {

// The published Standard Webhooks test vector.
const QString kSecret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray kId = QByteArrayLiteral("msg_p5jXN8AQM9LWM0D4loKWxJek");
constexpr qint64 kTimestamp = 1614265330;
const QByteArray kBody = QByteArrayLiteral(R"({"test": 2432232314})");
const QByteArray kSignature = QByteArrayLiteral("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");

const QString kOther = QStringLiteral("whsec_") +
                       QString::fromLatin1(QByteArrayLiteral("another key, rotated in").toBase64());

} // namespace

class TestWebhookSigner final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void standardWebhooksVector();
    void largeBodiesMatchQtsHmac();
    void bareBase64Secret();
    void disabledSigner();
    void rotation();
    void tamperFails_data();
    void tamperFails();
    void badSecrets_data();
    void badSecrets();
    void fromFile();
    void fromFileErrors();
};

void TestWebhookSigner::standardWebhooksVector() {
    const auto signer = WebhookSigner::fromSecrets({kSecret});
    QVERIFY2(signer.ok(), qPrintable(signer.errorMessage()));
    QVERIFY(signer->isEnabled());
    QCOMPARE(signer->sign(kId, kTimestamp, kBody), kSignature);
    QVERIFY(signer->verify(kId, kTimestamp, kBody, kSignature));
}

// libcrypto signs; Qt's own HMAC is the reference, on bodies up to a batch's
// byte limit (and an empty one).
void TestWebhookSigner::largeBodiesMatchQtsHmac() {
    const auto signer = WebhookSigner::fromSecrets({kSecret});
    QVERIFY(signer.ok());
    const QByteArray key = QByteArray::fromBase64(kSecret.mid(6).toLatin1());
    for (const qsizetype size : {qsizetype(0), qsizetype(30000), qsizetype(1024 * 1024)}) {
        QByteArray body(size, Qt::Uninitialized);
        for (qsizetype i = 0; i < size; ++i)
            body[i] = char(i * 31 % 251);
        QMessageAuthenticationCode reference(QCryptographicHash::Sha256, key);
        reference.addData(kId + '.' + QByteArray::number(kTimestamp) + '.' + body);
        const QByteArray expected = QByteArray("v1,") + reference.result().toBase64();
        QCOMPARE(signer->sign(kId, kTimestamp, body), expected);
        QVERIFY(signer->verify(kId, kTimestamp, body, expected));
    }
    QVERIFY(!signer->verify(kId, kTimestamp, kBody, "v1,"));
}

void TestWebhookSigner::bareBase64Secret() {
    const auto signer = WebhookSigner::fromSecrets({kSecret.mid(6)});
    QVERIFY2(signer.ok(), qPrintable(signer.errorMessage()));
    QCOMPARE(signer->sign(kId, kTimestamp, kBody), kSignature);
}

void TestWebhookSigner::disabledSigner() {
    const WebhookSigner none;
    QVERIFY(!none.isEnabled());
    QCOMPARE(none.sign(kId, kTimestamp, kBody), QByteArray());
    QVERIFY(!none.verify(kId, kTimestamp, kBody, kSignature));

    const auto fromEmptyList = WebhookSigner::fromSecrets({});
    QVERIFY(fromEmptyList.ok());
    QVERIFY(!fromEmptyList->isEnabled());
}

void TestWebhookSigner::rotation() {
    const auto both = WebhookSigner::fromSecrets({kSecret, kOther});
    const auto oldOnly = WebhookSigner::fromSecrets({kSecret});
    const auto newOnly = WebhookSigner::fromSecrets({kOther});
    QVERIFY(both.ok() && oldOnly.ok() && newOnly.ok());

    const QByteArray header = both->sign(kId, kTimestamp, kBody);
    const QList<QByteArray> parts = header.split(' ');
    QCOMPARE(parts.size(), 2);
    QCOMPARE(parts.at(0), kSignature);
    QVERIFY(parts.at(1).startsWith("v1,"));
    QVERIFY(parts.at(1) != parts.at(0));
    QCOMPARE(parts.at(1), newOnly->sign(kId, kTimestamp, kBody));

    // A receiver that knows either key accepts the rotated header.
    QVERIFY(oldOnly->verify(kId, kTimestamp, kBody, header));
    QVERIFY(newOnly->verify(kId, kTimestamp, kBody, header));
    // A receiver in mid-rotation accepts a sender that has only one key.
    QVERIFY(both->verify(kId, kTimestamp, kBody, oldOnly->sign(kId, kTimestamp, kBody)));
    QVERIFY(both->verify(kId, kTimestamp, kBody, newOnly->sign(kId, kTimestamp, kBody)));
    // Unknown signature versions are skipped, not fatal.
    QVERIFY(oldOnly->verify(kId, kTimestamp, kBody, QByteArray("v1a,abcd v2,xyz " + kSignature)));
    // A third key matches neither.
    const auto stranger = WebhookSigner::fromSecrets(
        {QStringLiteral("whsec_") + QString::fromLatin1(QByteArrayLiteral("stranger").toBase64())});
    QVERIFY(stranger.ok());
    QVERIFY(!stranger->verify(kId, kTimestamp, kBody, header));
}

void TestWebhookSigner::tamperFails_data() {
    QTest::addColumn<QByteArray>("id");
    QTest::addColumn<qint64>("timestamp");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("header");

    QTest::newRow("body") << kId << kTimestamp << QByteArray(R"({"test": 2432232315})")
                          << kSignature;
    QTest::newRow("body whitespace")
        << kId << kTimestamp << QByteArray(R"({"test":2432232314})") << kSignature;
    QTest::newRow("id") << QByteArray("msg_p5jXN8AQM9LWM0D4loKWxJeK") << kTimestamp << kBody
                        << kSignature;
    QTest::newRow("timestamp") << kId << kTimestamp + 1 << kBody << kSignature;
    QByteArray flipped = kSignature;
    flipped[5] = flipped[5] == 'A' ? 'B' : 'A';
    QTest::newRow("signature") << kId << kTimestamp << kBody << flipped;
    QTest::newRow("truncated") << kId << kTimestamp << kBody << kSignature.left(20);
    QTest::newRow("no version") << kId << kTimestamp << kBody << kSignature.mid(3);
    QTest::newRow("wrong version")
        << kId << kTimestamp << kBody << QByteArray("v2," + kSignature.mid(3));
    QTest::newRow("empty header") << kId << kTimestamp << kBody << QByteArray();
    QTest::newRow("not base64") << kId << kTimestamp << kBody << QByteArray("v1,!!!!");
}

void TestWebhookSigner::tamperFails() {
    QFETCH(QByteArray, id);
    QFETCH(qint64, timestamp);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, header);
    const auto signer = WebhookSigner::fromSecrets({kSecret});
    QVERIFY(signer.ok());
    QVERIFY(!signer->verify(id, timestamp, body, header));
}

void TestWebhookSigner::badSecrets_data() {
    QTest::addColumn<QStringList>("secrets");
    QTest::addColumn<QString>("problem");

    QTest::newRow("empty") << QStringList{QString()}
                           << QStringLiteral("the webhook secret is empty");
    QTest::newRow("prefix only") << QStringList{QStringLiteral("whsec_")}
                                 << QStringLiteral("is empty");
    QTest::newRow("not base64") << QStringList{QStringLiteral("whsec_not*base64!")}
                                << QStringLiteral("not valid base64");
    QTest::newRow("non-ascii") << QStringList{QStringLiteral("whsec_Zm9v\u00e9")}
                               << QStringLiteral("not valid base64");
    QTest::newRow("second of two") << QStringList{kSecret, QStringLiteral("whsec_%%%%secret")}
                                   << QStringLiteral("webhook secret #2 is not valid base64");
}

void TestWebhookSigner::badSecrets() {
    QFETCH(QStringList, secrets);
    QFETCH(QString, problem);
    const auto signer = WebhookSigner::fromSecrets(secrets);
    QVERIFY(!signer.ok());
    QCOMPARE(signer.errorKind(), ErrorKind::Invalid);
    QVERIFY2(signer.errorMessage().contains(problem), qPrintable(signer.errorMessage()));
    for (const QString &secret : secrets) {
        const QString body = secret.startsWith(QLatin1String("whsec_")) ? secret.mid(6) : secret;
        if (body.size() >= 4)
            QVERIFY2(!signer.errorMessage().contains(body), qPrintable(signer.errorMessage()));
    }
}

void TestWebhookSigner::fromFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("secrets"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("\n  " + kSecret.toLatin1() + "  \r\n\n" + kOther.toLatin1() + "\n\n");
    file.close();

    const auto signer = WebhookSigner::fromFile(path);
    QVERIFY2(signer.ok(), qPrintable(signer.errorMessage()));
    const auto both = WebhookSigner::fromSecrets({kSecret, kOther});
    QVERIFY(both.ok());
    QCOMPARE(signer->sign(kId, kTimestamp, kBody), both->sign(kId, kTimestamp, kBody));
    QVERIFY(signer->sign(kId, kTimestamp, kBody).startsWith(QByteArray(kSignature + ' ')));
}

void TestWebhookSigner::fromFileErrors() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());

    const QString missing = dir.filePath(QStringLiteral("missing"));
    const auto notThere = WebhookSigner::fromFile(missing);
    QVERIFY(!notThere.ok());
    QVERIFY2(notThere.errorMessage().contains(missing), qPrintable(notThere.errorMessage()));

    const QString blank = dir.filePath(QStringLiteral("blank"));
    {
        QFile file(blank);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("\n   \n");
    }
    const auto empty = WebhookSigner::fromFile(blank);
    QVERIFY(!empty.ok());
    QVERIFY2(empty.errorMessage().contains(blank), qPrintable(empty.errorMessage()));
    QVERIFY2(empty.errorMessage().contains(QStringLiteral("contains no secret")),
             qPrintable(empty.errorMessage()));

    const QString bad = dir.filePath(QStringLiteral("bad"));
    const QByteArray badSecret = "whsec_c3VwZXJzZWNyZXQ*broken";
    {
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(kSecret.toLatin1() + "\n\n" + badSecret + "\n");
    }
    const auto broken = WebhookSigner::fromFile(bad);
    QVERIFY(!broken.ok());
    const QString message = broken.errorMessage();
    QVERIFY2(message.contains(bad), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("line 3")), qPrintable(message));
    QVERIFY2(!message.contains(QStringLiteral("c3VwZXJzZWNyZXQ")), qPrintable(message));
    QVERIFY2(!message.contains(kSecret.mid(6)), qPrintable(message));
}

QTEST_GUILESS_MAIN(TestWebhookSigner)
#include "tst_webhooksigner.moc"
