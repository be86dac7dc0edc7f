#include "dispatch/metricsserver.h"

#include "core/logline.h"
#include "dispatch/logging.h"
#include "dispatch/metrics.h"
#include "dispatch/queuegaugereader.h"

#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <memory>

namespace outbox::dispatch {

namespace {

using Status = QHttpServerResponder::StatusCode;

// Accepts like QTcpServer, but a scraper that never finishes its request must
// not keep the socket: every connection gets a deadline.
class DeadlineTcpServer final : public QTcpServer {
public:
    using QTcpServer::QTcpServer;

protected:
    void incomingConnection(qintptr descriptor) override {
        auto *socket = new QTcpSocket(this);
        if (!socket->setSocketDescriptor(descriptor)) {
            delete socket;
            return;
        }
        QTimer::singleShot(10000, socket, [socket] { socket->abort(); });
        addPendingConnection(socket);
    }
};

// Qt HttpServer 6.4 keeps every connection open; a scrape is one request, so
// the answer says so and the connection closes once it is sent.
void answerAndClose(QHttpServerResponder &responder, Status status, const QByteArray &contentType,
                    const QByteArray &body) {
    responder.write(body, {{"Content-Type", contentType}, {"Connection", "close"}}, status);
    responder.socket()->disconnectFromHost();
}

} // namespace

MetricsServer::MetricsServer(QObject *parent)
    : QObject(parent)
    , m_http(new QHttpServer(this)) {
    m_http->route(QStringLiteral("/metrics"), QHttpServerRequest::Method::Get,
                  [this](const QHttpServerRequest &, QHttpServerResponder &&responder) {
                      answerAndClose(
                          responder, Status::Ok, "text/plain; version=0.0.4; charset=utf-8",
                          prometheusText(m_stats) +
                              (m_queue ? queueGaugesText(*m_queue, QDateTime::currentDateTimeUtc())
                                       : QByteArray()));
                  });
    m_http->setMissingHandler([](const QHttpServerRequest &, QHttpServerResponder &&responder) {
        answerAndClose(responder, Status::NotFound, "text/plain; charset=utf-8",
                       "only GET /metrics is served here\n");
    });
}

MetricsServer::~MetricsServer() = default;

core::Result<void> MetricsServer::listen(const QHostAddress &address, quint16 port) {
    auto server = std::make_unique<DeadlineTcpServer>();
    if (!server->listen(address, port))
        return core::Result<void>::failure(
            core::ErrorKind::Unavailable,
            QStringLiteral("cannot serve metrics on ") % address.toString() % QLatin1Char(':') %
                QString::number(port) % QStringLiteral(": ") % server->errorString() %
                QStringLiteral("; choose another --metrics-addr"));
    m_server = server.release();
    m_http->bind(m_server); // takes ownership
    qCInfo(lcDispatch) << core::LogLine("metrics_listen")
                              .add("addr", QString(address.toString() % QLatin1Char(':') %
                                                   QString::number(m_server->serverPort())));
    return {};
}

quint16 MetricsServer::port() const {
    return m_server ? m_server->serverPort() : 0;
}

void MetricsServer::enableQueueGauges(const core::ConnInfo &connInfo, core::Millis interval) {
    if (m_queueReader)
        return;
    auto *reader = new QueueGaugeReader(connInfo, interval, this);
    connect(reader, &QueueGaugeReader::gaugesRead, this,
            [this](const store::QueueGauges &gauges) { m_queue = gauges; });
    m_queueReader = reader;
}

void MetricsServer::update(const DispatcherStats &stats) {
    m_stats = stats;
}

} // namespace outbox::dispatch
