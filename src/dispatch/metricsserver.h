#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "store/queuegauges.h"

#include <QHostAddress>
#include <QObject>

#include <optional>

class QTcpServer;
class QTcpSocket;

namespace outbox::dispatch {

// A tiny HTTP endpoint answering GET /metrics with prometheusText() of the
// latest snapshot (connect DispatcherHost::statsSnapshot to update()), for
// `outboxctl dispatch --metrics-addr`. One request per connection.
//
// It runs inside the dispatcher, so whoever reaches the port must not be able
// to make it hold memory or sockets: the request head is read into at most
// kMaxRequestHead bytes (a longer one gets 431), a request with a body (any
// Content-Length but 0, any Transfer-Encoding) gets 413 without the body
// being read, any method but GET gets 405, and every connection is closed
// after its answer or after kConnectionDeadline, whichever comes first; at
// most kMaxConnections are open at once. (Qt HttpServer 6.4 reads a whole
// request, body included, before it routes it: one large POST took a
// dispatcher from 24 MB to 4.4 GB.)
class MetricsServer final : public QObject {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxRequestHead = 8192;
    static constexpr int kMaxConnections = 32;
    static constexpr core::Millis kConnectionDeadline{10000};

    explicit MetricsServer(QObject *parent = nullptr);
    ~MetricsServer() override;
    Q_DISABLE_COPY_MOVE(MetricsServer)

    core::Result<void> listen(const QHostAddress &address, quint16 port);
    quint16 port() const;
    // Adds the queue gauges (queueGaugesText), read every `interval` by one
    // QueueGaugeReader on its own connection, whatever the scrape rate.
    void enableQueueGauges(const core::ConnInfo &connInfo,
                           core::Millis interval = core::Millis(10000));

public Q_SLOTS:
    void update(const outbox::dispatch::DispatcherStats &stats);

private:
    void accept();
    void readRequest(QTcpSocket *socket);
    // `status` is the status line's code and reason, e.g. "404 Not Found".
    void answer(QTcpSocket *socket, const char *status, const QByteArray &contentType,
                const QByteArray &body, const QByteArray &extraHeaders = {});

    QTcpServer *m_server = nullptr;
    int m_open = 0;
    DispatcherStats m_stats;
    QObject *m_queueReader = nullptr; // child QueueGaugeReader
    std::optional<store::QueueGauges> m_queue;
};

} // namespace outbox::dispatch
