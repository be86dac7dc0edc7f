#include "dispatch/metricsserver.h"

#include "dispatch/logging.h"
#include "dispatch/metrics.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace outbox::dispatch {

namespace {

constexpr qsizetype MaxRequestBytes = 16 * 1024;

QByteArray response(const QByteArray &status, const QByteArray &contentType,
                    const QByteArray &body) {
    return "HTTP/1.1 " + status + "\r\nContent-Type: " + contentType +
           "\r\nContent-Length: " + QByteArray::number(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

} // namespace

MetricsServer::MetricsServer(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this)) {
    connect(m_server, &QTcpServer::newConnection, this, &MetricsServer::onNewConnection);
}

MetricsServer::~MetricsServer() = default;

core::Result<void> MetricsServer::listen(const QHostAddress &address, quint16 port) {
    if (!m_server->listen(address, port))
        return core::Result<void>::failure(
            core::ErrorKind::Unavailable,
            QStringLiteral("cannot serve metrics on ") % address.toString() % QLatin1Char(':') %
                QString::number(port) % QStringLiteral(": ") % m_server->errorString() %
                QStringLiteral("; choose another --metrics-addr"));
    qCInfo(lcDispatch).noquote() << QLatin1String("event=metrics_listen addr=") %
                                        address.toString() % QLatin1Char(':') %
                                        QString::number(m_server->serverPort());
    return {};
}

quint16 MetricsServer::port() const {
    return m_server->serverPort();
}

void MetricsServer::update(const DispatcherStats &stats) {
    m_stats = stats;
}

void MetricsServer::onNewConnection() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { serve(socket); });
        // A scraper that never finishes its request must not keep the socket.
        QTimer::singleShot(10000, socket, [socket] { socket->abort(); });
    }
}

void MetricsServer::serve(QTcpSocket *socket) {
    if (socket->property("answered").toBool())
        return;
    QByteArray buffer = socket->property("buffer").toByteArray() + socket->readAll();
    if (!buffer.contains("\r\n\r\n")) {
        if (buffer.size() > MaxRequestBytes)
            socket->abort();
        else
            socket->setProperty("buffer", buffer);
        return;
    }
    socket->setProperty("answered", true);
    const QByteArray requestLine = buffer.left(buffer.indexOf("\r\n"));
    const QList<QByteArray> parts = requestLine.split(' ');
    QByteArray reply;
    if (parts.size() >= 2 && parts.at(0) == "GET" &&
        (parts.at(1) == "/metrics" || parts.at(1).startsWith("/metrics?"))) {
        reply =
            response("200 OK", "text/plain; version=0.0.4; charset=utf-8", prometheusText(m_stats));
    } else {
        reply = response("404 Not Found", "text/plain; charset=utf-8",
                         "only GET /metrics is served here\n");
    }
    socket->write(reply);
    socket->disconnectFromHost();
}

} // namespace outbox::dispatch
