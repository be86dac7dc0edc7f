#include "dispatch/httpconnection.h"

#include <QSslSocket>
#include <QTcpSocket>

#include <algorithm>

namespace outbox::dispatch {

namespace {

constexpr qint64 MaxHeaderBytes = 64 * 1024;
constexpr qint64 SocketReadBufferBytes = 64 * 1024;

bool hasToken(const QByteArray &value, QByteArrayView token) {
    for (const QByteArray &part : value.split(','))
        if (part.trimmed().compare(token, Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

} // namespace

QByteArray HttpAnswer::header(QByteArrayView lowerCaseName) const {
    for (const auto &[name, value] : headers)
        if (name == lowerCaseName)
            return value;
    return {};
}

HttpConnection::HttpConnection(const HttpEndpoint &endpoint, AnswerHandler onAnswer,
                               ClosedHandler onClosed, QObject *parent)
    : QObject(parent)
    , m_endpoint(endpoint)
    , m_onAnswer(std::move(onAnswer))
    , m_onClosed(std::move(onClosed)) {}

HttpConnection::~HttpConnection() {
    closeSocket();
}

void HttpConnection::send(const QByteArray &request, qint64 bodyLimit) {
    Q_ASSERT(!m_busy && !m_closed);
    m_busy = true;
    m_request = request;
    m_bodyLimit = bodyLimit;
    resetExchange();
    if (m_ready) {
        writeRequest();
        return;
    }
    if (m_socket)
        return; // connecting: written once connected
    if (m_endpoint.tls) {
        auto *socket = new QSslSocket;
        m_socket.reset(socket);
        socket->setSslConfiguration(m_endpoint.ssl);
        connect(socket, &QSslSocket::encrypted, this, [this] {
            m_ready = true;
            if (m_busy)
                writeRequest();
        });
    } else {
        m_socket = std::make_unique<QTcpSocket>();
    }
    // Qt stops reading the socket while this much is unread: what is held per
    // connection stays bounded whatever the runner sends.
    m_socket->setReadBufferSize(SocketReadBufferBytes);
    connect(m_socket.get(), &QAbstractSocket::connected, this, &HttpConnection::onConnected);
    connect(m_socket.get(), &QAbstractSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_socket.get(), &QAbstractSocket::errorOccurred, this, &HttpConnection::onError);
    connect(m_socket.get(), &QAbstractSocket::disconnected, this, &HttpConnection::onError);
    if (m_endpoint.tls)
        static_cast<QSslSocket *>(m_socket.get())
            ->connectToHostEncrypted(m_endpoint.host, m_endpoint.port);
    else
        m_socket->connectToHost(m_endpoint.host, m_endpoint.port);
}

void HttpConnection::abort() {
    m_busy = false;
    closeSocket();
}

void HttpConnection::closeSocket() {
    m_closed = true;
    m_ready = false;
    if (!m_socket)
        return;
    m_socket->disconnect(this);
    m_socket->abort();
    // Deleted later: this may run inside one of the socket's own signals.
    m_socket.release()->deleteLater();
}

void HttpConnection::onConnected() {
    // Without it the kernel holds back a segment shorter than the MSS while
    // an earlier one is unacknowledged, and a runner that waits for the whole
    // body acknowledges only after its delayed-ACK timer (40 ms on Linux).
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    if (m_endpoint.tls)
        return; // written once encrypted
    m_ready = true;
    if (m_busy)
        writeRequest();
}

void HttpConnection::writeRequest() {
    const QByteArray request = std::exchange(m_request, {});
    if (m_socket->write(request) != request.size()) {
        fail(HttpAnswer::Failure::Connection, m_socket->errorString(), m_exchanges > 0);
        return;
    }
    // A plain socket writes the buffer now, in one send(); QSslSocket
    // encrypts and writes on its own (its flush() may read or fail inside).
    if (!m_endpoint.tls)
        m_socket->flush();
}

void HttpConnection::resetExchange() {
    m_in.clear();
    m_pos = 0;
    m_stage = Stage::Status;
    m_mode = BodyMode::Length;
    m_remaining = 0;
    m_received = 0;
    m_headerBytes = 0;
    m_gotBytes = false;
    m_http10 = false;
    m_keepAlive = true;
    m_answer = HttpAnswer();
}

bool HttpConnection::readArrived() {
    if (!m_busy) {
        // Bytes or a close while nothing was asked: the connection is done.
        closeSocket();
        if (m_onClosed)
            m_onClosed(this);
        return false;
    }
    m_in += m_socket->readAll();
    m_gotBytes = m_gotBytes || !m_in.isEmpty();
    parse();
    return m_busy;
}

void HttpConnection::onReadyRead() {
    readArrived();
}

void HttpConnection::onError() {
    // What arrived with the close is read first: a body read up to the close
    // ends here.
    if (m_closed || !readArrived())
        return;
    if (m_stage == Stage::Body && m_mode == BodyMode::UntilClose) {
        complete();
        return;
    }
    const QAbstractSocket::SocketError error = m_socket->error();
    QString text = m_socket->errorString();
    if (error == QAbstractSocket::UnknownSocketError || text.isEmpty())
        text = QStringLiteral("the connection was closed");
    if (m_answer.status != 0) {
        fail(HttpAnswer::Failure::Incomplete, text);
    } else if (error == QAbstractSocket::SslHandshakeFailedError ||
               error == QAbstractSocket::SslInternalError ||
               error == QAbstractSocket::SslInvalidUserDataError) {
        fail(HttpAnswer::Failure::Tls, text);
    } else {
        fail(HttpAnswer::Failure::Connection, text, m_exchanges > 0 && !m_gotBytes);
    }
}

bool HttpConnection::readLine(QByteArray &line) {
    const qsizetype end = m_in.indexOf('\n', m_pos);
    if (end < 0)
        return false;
    const qsizetype length =
        end > m_pos && m_in.at(end - 1) == '\r' ? end - 1 - m_pos : end - m_pos;
    line = m_in.mid(m_pos, length);
    m_headerBytes += end + 1 - m_pos;
    m_pos = end + 1;
    return true;
}

void HttpConnection::parse() {
    const auto unreadable = [this](const char *what) {
        fail(HttpAnswer::Failure::Connection,
             QStringLiteral("the runner's answer is not HTTP/1.1 (%1)").arg(QLatin1String(what)));
    };
    QByteArray line;
    while (m_busy) {
        switch (m_stage) {
        case Stage::Status: {
            if (!readLine(line)) {
                if (qint64(m_in.size() - m_pos) > MaxHeaderBytes)
                    return unreadable("a status line longer than 64 KiB");
                return;
            }
            // HTTP/1.x SP status [SP reason]
            if (!line.startsWith("HTTP/1.") || line.size() < 12 || line.at(8) != ' ')
                return unreadable("no status line");
            bool ok = false;
            const int status = line.mid(9, 3).toInt(&ok);
            if (!ok || status < 100 || status > 999)
                return unreadable("no status code");
            m_http10 = line.at(7) == '0';
            m_answer.status = status;
            m_answer.reason = line.mid(13).trimmed();
            m_answer.headers.clear();
            m_stage = Stage::Headers;
            break;
        }
        case Stage::Headers:
            if (!readLine(line)) {
                if (m_headerBytes + qint64(m_in.size() - m_pos) > MaxHeaderBytes)
                    return unreadable("headers longer than 64 KiB");
                return;
            }
            if (line.isEmpty()) {
                if (!headersEnded())
                    return;
                break;
            }
            if (const qsizetype colon = line.indexOf(':'); colon > 0)
                m_answer.headers.append(
                    {line.left(colon).trimmed().toLower(), line.mid(colon + 1).trimmed()});
            else
                return unreadable("a header line without a colon");
            break;
        case Stage::Body:
        case Stage::ChunkData:
            if (!takeBody(m_in.size() - m_pos))
                return;
            break;
        case Stage::ChunkSize: {
            if (!readLine(line))
                return;
            const qsizetype semicolon = line.indexOf(';');
            bool ok = false;
            const qint64 size =
                (semicolon < 0 ? line : line.left(semicolon)).trimmed().toLongLong(&ok, 16);
            if (!ok || size < 0)
                return unreadable("a bad chunk size");
            m_remaining = size;
            m_stage = size == 0 ? Stage::Trailer : Stage::ChunkData;
            break;
        }
        case Stage::ChunkEnd:
            if (!readLine(line))
                return;
            if (!line.isEmpty())
                return unreadable("a chunk longer than its size");
            m_stage = Stage::ChunkSize;
            break;
        case Stage::Trailer:
            if (!readLine(line))
                return;
            if (line.isEmpty())
                return complete();
            break;
        }
    }
}

bool HttpConnection::headersEnded() {
    const int status = m_answer.status;
    if (status >= 100 && status < 200) { // 100 Continue, 103 Early Hints: the answer follows
        m_stage = Stage::Status;
        m_headerBytes = 0;
        return true;
    }
    const QByteArray connection = m_answer.header("connection");
    m_keepAlive = m_http10 ? hasToken(connection, "keep-alive") : !hasToken(connection, "close");
    m_stage = Stage::Body;
    if (status == 204 || status == 304) {
        complete();
        return false;
    }
    if (const QByteArray coding = m_answer.header("transfer-encoding"); !coding.isNull()) {
        if (coding.trimmed().toLower().endsWith("chunked")) {
            m_mode = BodyMode::Chunked;
            m_stage = Stage::ChunkSize;
        } else {
            m_mode = BodyMode::UntilClose;
            m_keepAlive = false;
        }
        return true;
    }
    if (const QByteArray length = m_answer.header("content-length"); !length.isNull()) {
        bool ok = false;
        m_remaining = length.trimmed().toLongLong(&ok);
        if (!ok || m_remaining < 0) {
            fail(HttpAnswer::Failure::Connection,
                 QStringLiteral("the runner's answer is not HTTP/1.1 (a bad Content-Length)"));
            return false;
        }
        m_mode = BodyMode::Length;
        if (m_remaining == 0) {
            complete();
            return false;
        }
        return true;
    }
    m_mode = BodyMode::UntilClose;
    m_keepAlive = false;
    return true;
}

bool HttpConnection::takeBody(qsizetype available) {
    const bool untilClose = m_stage == Stage::Body && m_mode == BodyMode::UntilClose;
    const qint64 take = untilClose ? available : std::min<qint64>(m_remaining, available);
    if (take == 0)
        return false;
    const qint64 room = m_bodyLimit - m_answer.body.size();
    if (room > 0)
        m_answer.body.append(m_in.constData() + m_pos, qsizetype(std::min(room, take)));
    m_pos += qsizetype(take);
    m_received += take;
    // Compacted as it goes: a long body is never held beyond the limit.
    m_in.remove(0, m_pos);
    m_pos = 0;
    if (m_received > m_bodyLimit) {
        fail(HttpAnswer::Failure::TooLong, QString());
        return false;
    }
    if (untilClose)
        return false;
    m_remaining -= take;
    if (m_remaining > 0)
        return false;
    if (m_stage == Stage::ChunkData) {
        m_stage = Stage::ChunkEnd;
        return true;
    }
    complete();
    return false;
}

void HttpConnection::complete() {
    HttpAnswer answer = std::move(m_answer);
    // Anything after the answer was not asked for: do not reuse the connection.
    const bool reusable = m_keepAlive && m_pos == m_in.size() && m_socket &&
                          m_socket->state() == QAbstractSocket::ConnectedState;
    m_busy = false;
    ++m_exchanges;
    resetExchange();
    if (!reusable)
        closeSocket();
    m_onAnswer(this, answer, false);
}

void HttpConnection::fail(HttpAnswer::Failure failure, const QString &error, bool stale) {
    HttpAnswer answer = std::move(m_answer);
    answer.failure = failure;
    answer.error = error;
    m_busy = false;
    resetExchange();
    closeSocket();
    m_onAnswer(this, answer, stale);
}

} // namespace outbox::dispatch
