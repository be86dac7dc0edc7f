#pragma once

#include "core/duration.h"
#include "dispatch/httpconnection.h"

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QTimer>

#include <deque>
#include <functional>

namespace outbox::dispatch {

// The HTTP/1.1 client of the webhook publishers: keep-alive connections to
// one endpoint (HttpConnection: TCP_NODELAY, a request in one write), at
// most `maxConnections` of them, one request each at a time; requests
// beyond that wait in order. Chosen over QNetworkAccessManager by
// measurement (docs/DECISIONS.md, "Our own HTTP/1.1 client for delivery").
//  - The most recently used idle connection takes the next request, so that
//    at low load every request goes over the same warm connection.
//  - A hard deadline per request from post() (a timer checks every 100 ms);
//    the connection of a request past it is closed.
//  - A request on a reused connection that the runner had closed (no byte
//    of answer came) is sent once more on a new connection, as browsers and
//    QNetworkAccessManager do: a runner may see it twice (at-least-once).
// Lives in one thread; `done` runs in it, once per post(), never after
// abortAll() for what was in flight.
class WebhookClient final : public QObject {
public:
    using Done = std::function<void(HttpAnswer &answer)>;

    explicit WebhookClient(QObject *parent = nullptr);
    ~WebhookClient() override;
    Q_DISABLE_COPY_MOVE(WebhookClient)

    // A new endpoint closes the idle connections to the old one; requests in
    // flight finish where they started.
    void configure(const HttpEndpoint &endpoint, core::Millis timeout, int maxConnections);

    // `request` is the whole message (see httpRequest()); at most `bodyLimit`
    // bytes of the answer's body are read (TooLong beyond).
    void post(const QByteArray &request, qint64 bodyLimit, Done done);
    // Drops every request without an answer and closes their connections.
    void abortAll();

    int inFlight() const { return int(m_sent.size() + m_waiting.size()); }
    int connections() const { return m_connections; }

private:
    struct Request {
        QByteArray bytes;
        qint64 bodyLimit = 0;
        Done done;
        QElapsedTimer since;
        bool resent = false;
    };

    void start(Request request);
    void pump(); // hands waiting requests to free connections
    HttpConnection *newConnection();
    void retire(HttpConnection *connection);
    void onAnswer(HttpConnection *connection, HttpAnswer &answer, bool stale);
    void abortExpired();

    HttpEndpoint m_endpoint;
    int m_generation = 0;
    core::Millis m_timeout{10000};
    int m_maxConnections = 1;
    int m_connections = 0;
    int m_posting = 0;              // inside post()
    quint64 m_aborts = 0;           // abortAll() calls so far
    QList<HttpConnection *> m_idle; // most recently used last
    QHash<HttpConnection *, Request> m_sent;
    std::deque<Request> m_waiting;
    QTimer m_deadlineTimer;
};

} // namespace outbox::dispatch
