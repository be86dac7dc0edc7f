#include "dispatch/metricsserver.h"

#include "core/logline.h"
#include "dispatch/logging.h"
#include "dispatch/metrics.h"
#include "dispatch/queuegaugereader.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <sys/socket.h>

namespace outbox::dispatch {

namespace {

// What a connection has read so far, kept on the socket itself.
const char kHeadProperty[] = "outboxRequestHead";
const char kAnsweredProperty[] = "outboxAnswered";

// After the answer the rest of what the client sends is read and thrown
// away (so that it sees the answer rather than a reset), up to this much.
constexpr qint64 kMaxDiscarded = 1024 * 1024;

// The value of a header in a request head (names compared case-insensitively),
// or nothing when it is absent.
std::optional<QByteArray> headerValue(const QList<QByteArray> &lines, const QByteArray &name) {
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines.at(i).indexOf(':');
        if (colon > 0 && lines.at(i).left(colon).trimmed().toLower() == name)
            return lines.at(i).mid(colon + 1).trimmed();
    }
    return std::nullopt;
}

} // namespace

MetricsServer::MetricsServer(QObject *parent)
    : QObject(parent) {}

MetricsServer::~MetricsServer() = default;

core::Result<void> MetricsServer::listen(const QHostAddress &address, quint16 port) {
    auto *server = new QTcpServer(this);
    if (!server->listen(address, port)) {
        const QString why = server->errorString();
        delete server;
        return core::Result<void>::failure(core::ErrorKind::Unavailable,
                                           QStringLiteral("cannot serve metrics on ") %
                                               address.toString() % QLatin1Char(':') %
                                               QString::number(port) % QStringLiteral(": ") % why %
                                               QStringLiteral("; choose another --metrics-addr"));
    }
    m_server = server;
    connect(m_server, &QTcpServer::newConnection, this, &MetricsServer::accept);
    qCInfo(lcDispatch) << core::LogLine("metrics_listen")
                              .add("addr", QString(address.toString() % QLatin1Char(':') %
                                                   QString::number(m_server->serverPort())));
    return {};
}

quint16 MetricsServer::port() const {
    return m_server ? m_server->serverPort() : 0;
}

void MetricsServer::accept() {
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        if (m_open >= kMaxConnections) {
            socket->abort();
            socket->deleteLater();
            continue;
        }
        ++m_open;
        // Qt reads no more than this from the kernel until it is taken:
        // whatever the client sends waits in the kernel's buffer.
        socket->setReadBufferSize(kMaxRequestHead);
        connect(socket, &QTcpSocket::readyRead, this, [this, socket] { readRequest(socket); });
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QObject::destroyed, this, [this] { --m_open; });
        // A client that never finishes its request must not keep the socket.
        QTimer::singleShot(kConnectionDeadline, socket, [socket] { socket->abort(); });
        readRequest(socket); // bytes may have arrived already
    }
}

void MetricsServer::readRequest(QTcpSocket *socket) {
    if (socket->property(kAnsweredProperty).isValid()) {
        // Thrown away without keeping it; a client that goes on sending is cut.
        char sink[4096];
        qint64 discarded = socket->property(kAnsweredProperty).toLongLong();
        while (socket->bytesAvailable() > 0 && discarded <= kMaxDiscarded)
            discarded += std::max<qint64>(0, socket->read(sink, sizeof sink));
        socket->setProperty(kAnsweredProperty, discarded);
        if (discarded > kMaxDiscarded)
            socket->abort();
        return;
    }
    QByteArray head = socket->property(kHeadProperty).toByteArray();
    head += socket->read(kMaxRequestHead + 4 - head.size());
    const qsizetype end = head.indexOf("\r\n\r\n");
    if (end < 0) {
        if (head.size() > kMaxRequestHead)
            answer(socket, "431 Request Header Fields Too Large", "text/plain; charset=utf-8",
                   "the request head is longer than 8 KiB\n");
        else
            socket->setProperty(kHeadProperty, head);
        return;
    }
    if (end > kMaxRequestHead) {
        answer(socket, "431 Request Header Fields Too Large", "text/plain; charset=utf-8",
               "the request head is longer than 8 KiB\n");
        return;
    }
    socket->setProperty(kHeadProperty, QVariant());
    const QList<QByteArray> lines = head.left(end).split('\n');
    const QList<QByteArray> request = lines.value(0).trimmed().split(' ');
    if (request.size() != 3 || !request.at(2).startsWith("HTTP/1.")) {
        answer(socket, "400 Bad Request", "text/plain; charset=utf-8", "not an HTTP/1.x request\n");
        return;
    }
    const auto length = headerValue(lines, "content-length");
    if (headerValue(lines, "transfer-encoding") || (length && length->toLongLong() != 0)) {
        answer(socket, "413 Content Too Large", "text/plain; charset=utf-8",
               "request bodies are not accepted; scrape with GET /metrics\n");
        return;
    }
    if (request.at(0) != "GET") {
        answer(socket, "405 Method Not Allowed", "text/plain; charset=utf-8",
               "only GET /metrics is served here\n", "Allow: GET\r\n");
        return;
    }
    const QByteArray &target = request.at(1);
    if (target != "/metrics" && !target.startsWith("/metrics?")) {
        answer(socket, "404 Not Found", "text/plain; charset=utf-8",
               "only GET /metrics is served here\n");
        return;
    }
    answer(
        socket, "200 OK", "text/plain; version=0.0.4; charset=utf-8",
        prometheusText(m_stats) +
            (m_queue ? queueGaugesText(*m_queue, QDateTime::currentDateTimeUtc()) : QByteArray()));
}

void MetricsServer::answer(QTcpSocket *socket, const char *status, const QByteArray &contentType,
                           const QByteArray &body, const QByteArray &extraHeaders) {
    socket->setProperty(kHeadProperty, QVariant());
    socket->setProperty(kAnsweredProperty, qint64(0));
    socket->write(QByteArray("HTTP/1.1 ") + status + "\r\nContent-Type: " + contentType +
                  "\r\nContent-Length: " + QByteArray::number(body.size()) +
                  "\r\nConnection: close\r\n" + extraHeaders + "\r\n" + body);
    // Once the answer is out, say "no more from us" but keep reading (and
    // discarding) until the client closes: closing with unread input would
    // reset the connection, and the client could lose the answer.
    connect(socket, &QTcpSocket::bytesWritten, socket, [socket] {
        if (socket->bytesToWrite() == 0)
            ::shutdown(int(socket->socketDescriptor()), SHUT_WR);
    });
    readRequest(socket); // discards what is already there
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
