#pragma once

#include "core/result.h"
#include "dispatch/dispatcherstats.h"

#include <QHostAddress>
#include <QObject>

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

public Q_SLOTS:
    void update(const outbox::dispatch::DispatcherStats &stats);

private:
    QHttpServer *m_http = nullptr;
    QTcpServer *m_server = nullptr; // owned by m_http once listening
    DispatcherStats m_stats;
};

} // namespace outbox::dispatch
