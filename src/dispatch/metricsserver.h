#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "core/result.h"
#include "dispatch/dispatcherstats.h"
#include "store/queuegauges.h"

#include <QHostAddress>
#include <QObject>

#include <optional>

class QHttpServer;
class QTcpServer;

namespace outbox::dispatch {

// A tiny HTTP endpoint (Qt HttpServer) answering GET /metrics with
// prometheusText() of the latest snapshot (connect
// DispatcherHost::statsSnapshot to update()). Anything else gets 404; one
// request per connection. For `outboxctl dispatch --metrics-addr`.
class MetricsServer final : public QObject {
    Q_OBJECT
public:
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
    QHttpServer *m_http = nullptr;
    QTcpServer *m_server = nullptr; // owned by m_http once listening
    DispatcherStats m_stats;
    QObject *m_queueReader = nullptr; // child QueueGaugeReader
    std::optional<store::QueueGauges> m_queue;
};

} // namespace outbox::dispatch
