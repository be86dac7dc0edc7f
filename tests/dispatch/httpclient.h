#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QTcpSocket>

namespace outbox::testing {

// A raw HTTP/1.1 client for runner tests: sends exactly the bytes given and
// splits what comes back into responses by Content-Length. Asynchronous, so
// a server in the same thread keeps running while a test waits with QTRY_*.
class RawHttpClient final : public QObject {
public:
    struct Response {
        int status = 0;
        QList<QPair<QByteArray, QByteArray>> headers; // names lower-cased
        QByteArray body;
        QByteArray header(const QByteArray &name) const {
            for (const auto &[key, value] : headers) {
                if (key == name)
                    return value;
            }
            return {};
        }
    };

    explicit RawHttpClient(quint16 port) {
        connect(&m_socket, &QTcpSocket::readyRead, this, [this] {
            m_buffer += m_socket.readAll();
            parse();
        });
        connect(&m_socket, &QTcpSocket::disconnected, this, [this] { m_closed = true; });
        m_socket.connectToHost(QStringLiteral("127.0.0.1"), port);
    }

    void send(const QByteArray &bytes) { m_socket.write(bytes); }
    const QList<Response> &responses() const { return m_responses; }
    bool isClosed() const { return m_closed; }

    static QByteArray post(const QByteArray &path,
                           const QList<QPair<QByteArray, QByteArray>> &headers,
                           const QByteArray &body) {
        QByteArray out = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\n";
        for (const auto &[name, value] : headers)
            out += name + ": " + value + "\r\n";
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        return out;
    }

private:
    void parse() {
        for (;;) {
            const qsizetype end = m_buffer.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            const QList<QByteArray> lines = m_buffer.left(end).split('\n');
            Response response;
            response.status = lines.value(0).split(' ').value(1).toInt();
            qsizetype length = 0;
            for (qsizetype i = 1; i < lines.size(); ++i) {
                const qsizetype colon = lines.at(i).indexOf(':');
                const QByteArray name = lines.at(i).left(colon).trimmed().toLower();
                const QByteArray value = lines.at(i).mid(colon + 1).trimmed();
                if (name == "content-length")
                    length = value.toLongLong();
                response.headers.append({name, value});
            }
            if (m_buffer.size() < end + 4 + length)
                return;
            response.body = m_buffer.mid(end + 4, length);
            m_buffer.remove(0, end + 4 + length);
            m_responses.append(response);
        }
    }

    QTcpSocket m_socket;
    QByteArray m_buffer;
    QList<Response> m_responses;
    bool m_closed = false;
};

} // namespace outbox::testing
