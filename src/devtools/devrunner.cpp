#include "devtools/devrunner.h"

#include "core/logline.h"
#include "core/webhooksigner.h"
#include "devtools/devrunnerbatch.h"
#include "devtools/devrunnerconnection.h"
#include "devtools/logging.h"
#include "dispatch/logging.h"

#include <QHash>
#include <QLoggingCategory>
#include <QMutexLocker>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>

#include <algorithm>
#include <cstdlib>

namespace outbox::devtools {

QByteArray DevRunnerRequest::header(QByteArrayView name) const {
    for (const auto &[key, value] : headers) {
        if (QByteArrayView(key).compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

struct DevRunner::Shared {
    mutable QMutex mutex;
    DevRunnerSettings settings;
    core::WebhookSigner verifier;
    DevRunnerStats stats;
    QHash<QUuid, int> deliveredIds;
    QHash<QByteArray, int> deliveredOtherIds; // ids that are not UUIDs
    bool recording = false;
    QList<DevRunnerRequest> recorded;
    QRandomGenerator rng{QRandomGenerator::global()->generate()};
};

DevRunner::DevRunner(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this))
    , m_shared(std::make_unique<Shared>()) {
    connect(m_server, &QTcpServer::newConnection, this, &DevRunner::onNewConnection);
}

DevRunner::~DevRunner() {
    close();
}

core::Result<void> DevRunner::listen(const QHostAddress &address, quint16 port) {
    if (m_server->isListening())
        m_server->close();
    if (!m_server->listen(address, port))
        return core::Result<void>::failure(
            core::ErrorKind::Unavailable,
            QStringLiteral("the development runner cannot listen on ") % address.toString() %
                QLatin1Char(':') % QString::number(port) % QStringLiteral(": ") %
                m_server->errorString() %
                QStringLiteral("; choose another port (or 0 for any free port)"));
    qCInfo(lcDevtools) << core::LogLine("runner_listen").add("url", url().toString());
    return {};
}

void DevRunner::close() {
    m_server->close();
    const auto connections = m_connections;
    for (DevRunnerConnection *connection : connections)
        delete connection;
}

bool DevRunner::isListening() const {
    return m_server->isListening();
}

quint16 DevRunner::port() const {
    return m_server->serverPort();
}

QHostAddress DevRunner::address() const {
    return m_server->serverAddress();
}

QUrl DevRunner::url(const QString &path) const {
    QUrl url;
    url.setScheme(QStringLiteral("http"));
    QHostAddress host = m_server->serverAddress();
    if (host == QHostAddress::Any || host == QHostAddress::AnyIPv4)
        host = QHostAddress::LocalHost;
    else if (host == QHostAddress::AnyIPv6)
        host = QHostAddress::LocalHostIPv6;
    url.setHost(host.toString());
    url.setPort(m_server->serverPort());
    url.setPath(path);
    return url;
}

void DevRunner::onNewConnection() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        new DevRunnerConnection(this, socket);
        QMutexLocker lock(&m_shared->mutex);
        ++m_shared->stats.connections;
    }
}

int DevRunner::decide(DevRunnerSettings &settings, const DevRunnerRequest &request,
                      QByteArray &reason) {
    QMutexLocker lock(&m_shared->mutex);
    settings = m_shared->settings;
    ++m_shared->stats.received;
    if (m_shared->verifier.isEnabled()) {
        const QByteArray id = request.header("webhook-id");
        const QByteArray timestampText = request.header("webhook-timestamp");
        const QByteArray signature = request.header("webhook-signature");
        bool timestampOk = false;
        const qint64 timestamp = timestampText.toLongLong(&timestampOk);
        if (id.isEmpty() || !timestampOk || signature.isEmpty()) {
            reason = "missing webhook-id, webhook-timestamp or webhook-signature\n";
            return 401;
        }
        if (settings.timestampTolerance.count() > 0 &&
            std::llabs(QDateTime::currentSecsSinceEpoch() - timestamp) * 1000 >
                settings.timestampTolerance.count()) {
            reason = "webhook-timestamp is outside the tolerance\n";
            return 401;
        }
        if (!m_shared->verifier.verify(id, timestamp, request.body, signature)) {
            reason = "webhook-signature does not match\n";
            return 401;
        }
    }
    if (settings.mode == DevRunnerSettings::Mode::Redirect) {
        reason = "moved\n";
        return 302;
    }
    if (settings.fixedStatus != 0) {
        reason = "fixed status\n";
        return settings.fixedStatus;
    }
    const bool batch = !request.header("outbox-batch").isEmpty(); // failRate per event
    if (!batch && settings.failRate > 0.0 && m_shared->rng.generateDouble() < settings.failRate) {
        reason = "simulated failure\n";
        return settings.failStatus;
    }
    reason = "ok\n";
    return 200;
}

BatchAnswer DevRunner::answerBatch(const DevRunnerRequest &request,
                                   const DevRunnerSettings &settings) {
    BatchAnswer answer;
    const auto ids = batchEventIds(request.body);
    if (!ids) {
        answer.status = 400;
        answer.body = ids.errorMessage().toUtf8() + '\n';
        return answer;
    }
    QList<QByteArray> failed;
    {
        QMutexLocker lock(&m_shared->mutex);
        for (const QByteArray &id : ids.value()) {
            if (settings.failRate > 0.0 && m_shared->rng.generateDouble() < settings.failRate)
                failed.append(id);
            else
                answer.delivered.append(id);
        }
    }
    bool retryAfterOk = false;
    const qint64 retryAfter = settings.retryAfter.toLongLong(&retryAfterOk);
    answer.failed = failed.size();
    answer.body = batchAnswer(failed, settings.failPermanent, retryAfterOk ? retryAfter : -1);
    return answer;
}

void DevRunner::account(const DevRunnerRequest &request, int status, bool dropped,
                        const BatchAnswer *batch) {
    const auto countDelivered = [this](const QByteArray &id) {
        const QUuid uuid = QUuid::fromString(QLatin1String(id));
        int &count = uuid.isNull() ? m_shared->deliveredOtherIds[id] : m_shared->deliveredIds[uuid];
        if (count++ == 0)
            ++m_shared->stats.uniqueIds;
        else
            ++m_shared->stats.duplicates;
    };
    {
        QMutexLocker lock(&m_shared->mutex);
        DevRunnerStats &stats = m_shared->stats;
        if (!request.header("outbox-batch").isEmpty())
            ++stats.batches; // answered or not
        if (status == 401) {
            ++stats.badSignatures;
        } else if (dropped || status < 200 || status >= 300) {
            ++stats.failed;
        } else if (batch) {
            stats.delivered += batch->delivered.size();
            stats.failed += batch->failed;
            for (const QByteArray &id : batch->delivered)
                countDelivered(id);
        } else {
            ++stats.delivered;
            if (const QByteArray id = request.header("webhook-id"); !id.isEmpty())
                countDelivered(id);
        }
        if (m_shared->recording) {
            DevRunnerRequest copy = request;
            copy.status = dropped ? 0 : status;
            m_shared->recorded.append(std::move(copy));
        }
    }
    qCDebug(lcDevtools) << core::LogLine("runner_request")
                               .add("id", QString::fromLatin1(request.header("webhook-id")))
                               .add("status", dropped ? 0 : status);
    Q_EMIT requestHandled(dropped ? 0 : status);
}

core::Result<void> DevRunner::setSettings(const DevRunnerSettings &settings) {
    auto verifier = core::WebhookSigner::fromSecrets(settings.secrets);
    if (!verifier)
        return core::Result<void>(verifier.error());
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings = settings;
    m_shared->settings.failRate = std::clamp(settings.failRate, 0.0, 1.0);
    m_shared->settings.latency = std::max(settings.latency, core::Millis(0));
    m_shared->verifier = std::move(verifier).value();
    return {};
}

DevRunnerSettings DevRunner::settings() const {
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->settings;
}

void DevRunner::setFailRate(double rate) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.failRate = std::clamp(rate, 0.0, 1.0);
}

void DevRunner::setFailStatus(int status) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.failStatus = status;
}

void DevRunner::setFixedStatus(int status) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.fixedStatus = status;
}

void DevRunner::setLatency(core::Millis latency) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.latency = std::max(latency, core::Millis(0));
}

void DevRunner::setMode(DevRunnerSettings::Mode mode) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.mode = mode;
}

void DevRunner::setRetryAfter(const QByteArray &value) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.retryAfter = value;
}

core::Result<void> DevRunner::setSecrets(const QStringList &secrets) {
    auto verifier = core::WebhookSigner::fromSecrets(secrets);
    if (!verifier)
        return core::Result<void>(verifier.error());
    QMutexLocker lock(&m_shared->mutex);
    m_shared->settings.secrets = secrets;
    m_shared->verifier = std::move(verifier).value();
    return {};
}

DevRunnerStats DevRunner::stats() const {
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->stats;
}

void DevRunner::resetStats() {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->stats = DevRunnerStats();
    m_shared->deliveredIds.clear();
    m_shared->deliveredOtherIds.clear();
}

int DevRunner::deliveredCount(const QUuid &webhookId) const {
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->deliveredIds.value(webhookId);
}

int DevRunner::deliveredCount(const QByteArray &webhookId) const {
    const QUuid uuid = QUuid::fromString(QLatin1String(webhookId));
    if (!uuid.isNull())
        return deliveredCount(uuid);
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->deliveredOtherIds.value(webhookId);
}

void DevRunner::setRecording(bool on) {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->recording = on;
}

QList<DevRunnerRequest> DevRunner::recordedRequests() const {
    QMutexLocker lock(&m_shared->mutex);
    return m_shared->recorded;
}

void DevRunner::clearRecorded() {
    QMutexLocker lock(&m_shared->mutex);
    m_shared->recorded.clear();
}

} // namespace outbox::devtools
