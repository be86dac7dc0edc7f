#include "devtools/devrunnerconnection.h"

#include "devtools/devrunnerbatch.h"

#include <QDateTime>
#include <QTcpSocket>
#include <QTimer>

namespace outbox::devtools {

namespace {

constexpr qsizetype MaxHeaderBytes = 64 * 1024;
constexpr qsizetype MaxBodyBytes = 16 * 1024 * 1024;

QByteArray reasonPhrase(int status) {
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 302:
        return "Found";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 408:
        return "Request Timeout";
    case 410:
        return "Gone";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return status >= 200 && status < 300 ? "OK" : "Status";
    }
}

} // namespace

DevRunnerConnection::DevRunnerConnection(DevRunner *runner, QTcpSocket *socket)
    : QObject(runner)
    , m_runner(runner)
    , m_socket(socket) {
    socket->setParent(this);
    connect(socket, &QTcpSocket::readyRead, this, &DevRunnerConnection::onReadyRead);
    connect(socket, &QTcpSocket::disconnected, this, &QObject::deleteLater);
    runner->m_connections.insert(this);
}

DevRunnerConnection::~DevRunnerConnection() {
    m_runner->m_connections.remove(this);
}

void DevRunnerConnection::onReadyRead() {
    m_buffer += m_socket->readAll();
    if (!m_busy)
        processNext();
}

DevRunnerConnection::Parse DevRunnerConnection::parse(DevRunnerRequest &request, int &errorStatus) {
    const qsizetype headerEnd = m_buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) {
        if (m_buffer.size() > MaxHeaderBytes) {
            errorStatus = 431;
            return Parse::Error;
        }
        return Parse::Incomplete;
    }
    const QList<QByteArray> lines = m_buffer.left(headerEnd).split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    if (requestLine.size() != 3 || !requestLine.at(2).startsWith("HTTP/1.")) {
        errorStatus = 400;
        return Parse::Error;
    }
    request.method = requestLine.at(0);
    request.path = requestLine.at(1);
    m_http10 = requestLine.at(2) == "HTTP/1.0";
    qsizetype contentLength = 0;
    bool keepAlive = !m_http10;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0) {
            errorStatus = 400;
            return Parse::Error;
        }
        QByteArray name = line.left(colon).trimmed().toLower();
        QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = false;
            contentLength = value.toLongLong(&ok);
            if (!ok || contentLength < 0) {
                errorStatus = 400;
                return Parse::Error;
            }
            if (contentLength > MaxBodyBytes) {
                errorStatus = 413;
                return Parse::Error;
            }
        } else if (name == "transfer-encoding") {
            errorStatus = 411; // only Content-Length bodies
            return Parse::Error;
        } else if (name == "connection") {
            const QByteArray lower = value.toLower();
            if (lower.contains("close"))
                keepAlive = false;
            else if (lower.contains("keep-alive"))
                keepAlive = true;
        }
        request.headers.append({std::move(name), std::move(value)});
    }
    const qsizetype total = headerEnd + 4 + contentLength;
    if (m_buffer.size() < total)
        return Parse::Incomplete;
    request.body = m_buffer.mid(headerEnd + 4, contentLength);
    m_buffer.remove(0, total);
    m_keepAlive = keepAlive;
    return Parse::Complete;
}

void DevRunnerConnection::processNext() {
    DevRunnerRequest request;
    int errorStatus = 0;
    switch (parse(request, errorStatus)) {
    case Parse::Incomplete:
        return;
    case Parse::Error:
        m_keepAlive = false;
        m_busy = true;
        write(errorStatus, "malformed request\n", {});
        return;
    case Parse::Complete:
        break;
    }
    m_busy = true;
    request.receivedAt = QDateTime::currentDateTimeUtc();

    if (request.method == "GET" || request.method == "HEAD") {
        const DevRunnerStats s = m_runner->stats();
        const QByteArray body = "outbox development runner: POST events here\nreceived=" +
                                QByteArray::number(s.received) +
                                " delivered=" + QByteArray::number(s.delivered) +
                                " failed=" + QByteArray::number(s.failed) +
                                " duplicates=" + QByteArray::number(s.duplicates) +
                                " unique_ids=" + QByteArray::number(s.uniqueIds) +
                                " bad_signatures=" + QByteArray::number(s.badSignatures) +
                                " batches=" + QByteArray::number(s.batches) + '\n';
        write(200, request.method == "HEAD" ? QByteArray() : body, {});
        return;
    }

    QByteArray reason;
    DevRunnerSettings settings;
    const int status = m_runner->decide(settings, request, reason);
    switch (settings.mode) {
    case DevRunnerSettings::Mode::NeverRespond:
        if (status != 401) {
            m_runner->account(request, 0, true);
            return; // stays busy: nothing more is answered on this connection
        }
        break;
    case DevRunnerSettings::Mode::CloseWithoutResponse:
        if (status != 401) {
            m_runner->account(request, 0, true);
            m_socket->abort();
            return;
        }
        break;
    default:
        break;
    }
    const auto respond = [this, request, status, reason, settings]() {
        if (settings.mode == DevRunnerSettings::Mode::ResetMidResponse && status != 401) {
            m_runner->account(request, 0, true);
            m_socket->write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                            "Content-Length: 64\r\n\r\npartial");
            m_socket->flush();
            m_socket->abort();
            return;
        }
        QList<QPair<QByteArray, QByteArray>> extra;
        if (status >= 300 && status < 400)
            extra.append(qMakePair(QByteArray("Location"), QByteArray("/redirected")));
        if ((status < 200 || status >= 300) && !settings.retryAfter.isEmpty())
            extra.append(qMakePair(QByteArray("Retry-After"), settings.retryAfter));
        if (status == 401)
            extra.append(
                qMakePair(QByteArray("WWW-Authenticate"), QByteArray("webhook-signature")));
        if (status >= 200 && status < 300 && !request.header("outbox-batch").isEmpty()) {
            const BatchAnswer batch = m_runner->answerBatch(request, settings);
            m_runner->account(request, batch.status, false, &batch);
            write(batch.status, batch.body, extra,
                  batch.status == 200 ? "application/json" : "text/plain; charset=utf-8");
            return;
        }
        m_runner->account(request, status, false);
        write(status, reason, extra);
    };
    if (settings.latency.count() > 0)
        QTimer::singleShot(settings.latency, this, respond);
    else
        respond();
}

void DevRunnerConnection::write(int status, const QByteArray &body,
                                const QList<QPair<QByteArray, QByteArray>> &headers,
                                QByteArrayView contentType) {
    QByteArray out;
    out.reserve(160 + body.size());
    out += "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    out += "Content-Type: " + contentType.toByteArray() +
           "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n";
    for (const auto &[name, value] : headers)
        out += name + ": " + value + "\r\n";
    if (!m_keepAlive)
        out += "Connection: close\r\n";
    else if (m_http10)
        out += "Connection: keep-alive\r\n";
    out += "\r\n";
    out += body;
    m_socket->write(out);
    m_busy = false;
    if (!m_keepAlive) {
        m_socket->disconnectFromHost();
        return;
    }
    if (!m_buffer.isEmpty())
        processNext();
}

} // namespace outbox::devtools
