#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>
#include <QSslConfiguration>
#include <QString>

#include <functional>
#include <memory>

class QTcpSocket;

namespace outbox::dispatch {

// What came back for one request.
struct HttpAnswer {
    enum class Failure {
        None,       // a complete response
        Timeout,    // no complete response before the request's deadline
        Connection, // no response: refused, reset, closed, unreadable
        Tls,        // the TLS handshake failed (certificate, protocol)
        Incomplete, // the status line arrived, then the connection broke
        TooLong,    // the body passed the request's limit and was cut off
    };
    Failure failure = Failure::None;
    int status = 0;                               // 0: no status line was read
    QByteArray reason;                            // the reason phrase
    QList<QPair<QByteArray, QByteArray>> headers; // names in lower case
    QByteArray body;                              // at most the request's body limit
    QString error;                                // the transport's words, when it failed

    QByteArray header(QByteArrayView lowerCaseName) const; // the first one; null if none
};

// Where a connection goes.
struct HttpEndpoint {
    QString host;
    quint16 port = 80;
    bool tls = false;
    QSslConfiguration ssl; // for tls: trusted CAs; the peer is always verified

    bool operator==(const HttpEndpoint &other) const = default;
};

// One keep-alive HTTP/1.1 connection to an endpoint, one request at a time.
//  - TCP_NODELAY is on (QAbstractSocket::LowDelayOption) and a request
//    (head and body in one buffer) is handed to the socket in one write:
//    nothing waits for the runner's delayed ACK (docs/PERFORMANCE.md, "Batch
//    requests stalled 40 ms").
//  - A response is read by Content-Length, chunked, or up to the close; 1xx
//    responses are skipped. At most the request's body limit is kept: a
//    longer body ends the exchange (TooLong) and the connection.
//  - TLS: QSslSocket with the endpoint's configuration and the host name
//    checked; certificate errors are never ignored.
// The owner hears of every answer through `onAnswer`, once per send(),
// never after abort(), and of a connection the runner closed while idle
// through `onClosed`. Either may be called from inside the socket's signals:
// the owner deletes a connection later (deleteLater), never in them.
class HttpConnection final : public QObject {
public:
    // `stale`: the connection had carried a request before and closed
    // before any byte of this answer came: the runner probably closed it as
    // idle while the request was on its way, and it may be sent again.
    using AnswerHandler = std::function<void(HttpConnection *, HttpAnswer &, bool stale)>;
    using ClosedHandler = std::function<void(HttpConnection *)>;

    HttpConnection(const HttpEndpoint &endpoint, AnswerHandler onAnswer, ClosedHandler onClosed,
                   QObject *parent = nullptr);
    ~HttpConnection() override;
    Q_DISABLE_COPY_MOVE(HttpConnection)

    // Sends `request` (the whole message, head and body), connecting first
    // when needed. Only while not busy.
    void send(const QByteArray &request, qint64 bodyLimit);
    // Closes the connection; the request on it gets no answer.
    void abort();

    bool isBusy() const { return m_busy; }
    // Open, or not yet used: another request may follow on it.
    bool isUsable() const { return !m_closed; }
    int generation = 0; // the owner's endpoint generation it was made for

private:
    enum class Stage { Status, Headers, Body, ChunkSize, ChunkData, ChunkEnd, Trailer };
    enum class BodyMode { Length, Chunked, UntilClose };

    void onConnected();
    // Reads and parses what arrived; false when the exchange is over (or the
    // connection was idle, and is closed now).
    bool readArrived();
    void onReadyRead();
    void onError();
    void writeRequest();
    // Parses what has arrived; returns once it needs more or the exchange ended.
    void parse();
    bool readLine(QByteArray &line);
    bool headersEnded(); // false: the exchange ended (completed or failed)
    bool takeBody(qsizetype available);
    void complete();
    void fail(HttpAnswer::Failure failure, const QString &error, bool stale = false);
    void closeSocket();
    void resetExchange();

    HttpEndpoint m_endpoint;
    AnswerHandler m_onAnswer;
    ClosedHandler m_onClosed;
    std::unique_ptr<QTcpSocket> m_socket;
    bool m_ready = false;  // connected (and encrypted for TLS)
    bool m_closed = false; // closed for good
    bool m_busy = false;
    int m_exchanges = 0; // answered on this connection so far
    QByteArray m_request;
    qint64 m_bodyLimit = 0;

    // The exchange being read.
    QByteArray m_in;
    qsizetype m_pos = 0; // parsed up to here in m_in
    Stage m_stage = Stage::Status;
    BodyMode m_mode = BodyMode::Length;
    qint64 m_remaining = 0; // bytes of the body or chunk still to come
    qint64 m_received = 0;  // body bytes so far
    qint64 m_headerBytes = 0;
    bool m_gotBytes = false; // any byte of an answer arrived
    bool m_http10 = false;
    bool m_keepAlive = true;
    HttpAnswer m_answer;
};

} // namespace outbox::dispatch
