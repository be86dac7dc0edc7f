#pragma once

#include "core/duration.h"
#include "core/result.h"

#include <QByteArray>
#include <QDateTime>
#include <QHostAddress>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QUrl>
#include <QUuid>

#include <memory>
#include <optional>

class QTcpServer;

namespace outbox::devtools {
class DevRunnerConnection;
struct BatchAnswer;
} // namespace outbox::devtools

namespace outbox::devtools {

// How the development runner behaves; every field can be changed at runtime.
struct DevRunnerSettings {
    enum class Mode {
        Normal,               // answer (status chosen by the fields below)
        Redirect,             // 302 to another path (a dispatcher must not follow it)
        CloseWithoutResponse, // read the request, close the connection, send nothing
        ResetMidResponse,     // send half a response, then drop the connection
        NeverRespond,         // read the request and keep the connection silent (timeouts)
    };

    Mode mode = Mode::Normal;
    double failRate = 0.0;      // 0..1: share of requests answered with failStatus; in a batch,
                                // share of its events listed as failed
    bool failPermanent = false; // a batch lists its failures as permanent
    int failStatus = 503;
    int fixedStatus = 0;     // non-zero: answer every verified request with this status
    core::Millis latency{0}; // delay before answering (a timer; the runner never blocks)
    QByteArray retryAfter;   // Retry-After value sent with every non-2xx answer; empty = none
    QStringList secrets;     // Standard Webhooks secrets; non-empty = verify (401 on missing/bad)
    // Reject signatures whose webhook-timestamp is further than this from now
    // (Standard Webhooks recommends 5 minutes); 0 = do not check the time.
    core::Millis timestampTolerance{300000};
};

struct DevRunnerStats {
    qint64 connections = 0;   // TCP connections accepted
    qint64 received = 0;      // complete requests read
    qint64 delivered = 0;     // answered 2xx (in a batch answered 2xx: each event not failed)
    qint64 failed = 0;        // answered non-2xx on purpose, or dropped/never answered by a mode;
                              // in a batch answered 2xx: each event listed as failed
    qint64 batches = 0;       // requests that carried a batch (header Outbox-Batch)
    qint64 badSignatures = 0; // answered 401 (missing or wrong signature)
    qint64 duplicates = 0;    // 2xx answers for an id that had already been answered 2xx
    qint64 uniqueIds = 0;     // distinct ids answered 2xx (in batches: the events' ids)
};

// One request as the runner saw it (recorded only when recording is on).
struct DevRunnerRequest {
    QByteArray method;
    QByteArray path;
    QList<QPair<QByteArray, QByteArray>> headers; // names lower-cased, in order
    QByteArray body;
    int status = 0; // the status answered (0 = none sent)
    QDateTime receivedAt;

    QByteArray header(QByteArrayView name) const; // first match, case-insensitive
};

// A development HTTP runner: HTTP/1.1 with keep-alive and Content-Length
// bodies (pipelined requests are answered in order), Standard Webhooks
// signature verification, delivery and duplicate counting per webhook-id
// (per event id in batches: requests with the Outbox-Batch header, answered
// with the batch format of docs/RUNNER-CONTRACT.md), and failure
// injection. Used by `outboxctl runner`, demo mode, tests and
// benchmarks.
//
// Threading: the runner serves connections in the thread it lives in; call
// listen()/close() in that thread. Settings setters, stats() and the
// per-id queries are thread-safe (any thread), so a console can change the
// failure rate live while the runner runs in another thread.
class DevRunner final : public QObject {
    Q_OBJECT
public:
    explicit DevRunner(QObject *parent = nullptr);
    ~DevRunner() override;
    Q_DISABLE_COPY_MOVE(DevRunner)

    // port 0 = any free port. Errors name the address and the reason.
    core::Result<void> listen(const QHostAddress &address = QHostAddress::LocalHost,
                              quint16 port = 0);
    void close(); // stops listening and drops every connection
    bool isListening() const;
    quint16 port() const;
    QHostAddress address() const;
    QUrl url(const QString &path = QStringLiteral("/events")) const;

    // Thread-safe. Malformed secrets are refused and nothing changes.
    core::Result<void> setSettings(const DevRunnerSettings &settings);
    DevRunnerSettings settings() const;
    void setFailRate(double rate); // clamped to 0..1
    void setFailStatus(int status);
    void setFixedStatus(int status); // 0 = off
    void setLatency(core::Millis latency);
    void setMode(DevRunnerSettings::Mode mode);
    void setRetryAfter(const QByteArray &value);
    // An empty list turns verification off.
    core::Result<void> setSecrets(const QStringList &secrets);

    DevRunnerStats stats() const;
    void resetStats();                                // also forgets the seen ids
    int deliveredCount(const QUuid &webhookId) const; // 2xx answers for this id
    int deliveredCount(const QByteArray &webhookId) const;

    void setRecording(bool on);
    QList<DevRunnerRequest> recordedRequests() const;
    void clearRecorded();

Q_SIGNALS:
    // Emitted in the runner's thread after each complete request is answered
    // (or dropped by a mode). Cheap; for live displays.
    void requestHandled(int status);

private:
    friend class DevRunnerConnection;
    struct Shared;

    void onNewConnection();
    int decide(DevRunnerSettings &settings, const DevRunnerRequest &request, QByteArray &reason);
    // The answer to a verified batch request; failRate applies to each event.
    BatchAnswer answerBatch(const DevRunnerRequest &request, const DevRunnerSettings &settings);
    void account(const DevRunnerRequest &request, int status, bool dropped,
                 const BatchAnswer *batch = nullptr);

    QTcpServer *m_server = nullptr;
    QSet<DevRunnerConnection *> m_connections;
    std::unique_ptr<Shared> m_shared;
};

} // namespace outbox::devtools

Q_DECLARE_METATYPE(outbox::devtools::DevRunnerSettings)
Q_DECLARE_METATYPE(outbox::devtools::DevRunnerStats)
