#include "dispatch/webhookclient.h"

#include <algorithm>

namespace outbox::dispatch {

WebhookClient::WebhookClient(QObject *parent)
    : QObject(parent)
    , m_deadlineTimer(this) {
    m_deadlineTimer.setInterval(100);
    connect(&m_deadlineTimer, &QTimer::timeout, this, [this] { abortExpired(); });
}

WebhookClient::~WebhookClient() {
    abortAll();
}

void WebhookClient::configure(const HttpEndpoint &endpoint, core::Millis timeout,
                              int maxConnections) {
    m_timeout = timeout;
    m_maxConnections = std::max(maxConnections, 1);
    if (!(endpoint == m_endpoint)) {
        m_endpoint = endpoint;
        ++m_generation;
        for (HttpConnection *connection : QList<HttpConnection *>(m_idle))
            retire(connection);
    }
    pump();
}

void WebhookClient::post(const QByteArray &request, qint64 bodyLimit, Done done) {
    Request entry{request, bodyLimit, std::move(done), {}, false};
    entry.since.start();
    if (!m_deadlineTimer.isActive())
        m_deadlineTimer.start();
    // A connection may fail at once (refused on loopback, a write to a dead
    // socket): its answer is then delivered from the event loop, never
    // from inside post().
    ++m_posting;
    start(std::move(entry));
    --m_posting;
}

void WebhookClient::start(Request request) {
    HttpConnection *connection = nullptr;
    if (!m_idle.isEmpty())
        connection = m_idle.takeLast();
    else if (m_connections < m_maxConnections)
        connection = newConnection();
    if (!connection) {
        m_waiting.push_back(std::move(request));
        return;
    }
    const QByteArray bytes = request.bytes;
    const qint64 limit = request.bodyLimit;
    m_sent.insert(connection, std::move(request));
    connection->send(bytes, limit);
}

void WebhookClient::pump() {
    while (!m_waiting.empty() && (!m_idle.isEmpty() || m_connections < m_maxConnections)) {
        Request next = std::move(m_waiting.front());
        m_waiting.pop_front();
        start(std::move(next));
    }
}

HttpConnection *WebhookClient::newConnection() {
    ++m_connections;
    auto *connection = new HttpConnection(
        m_endpoint,
        [this](HttpConnection *from, HttpAnswer &answer, bool stale) {
            onAnswer(from, answer, stale);
        },
        [this](HttpConnection *closed) {
            retire(closed);
            pump();
        },
        this);
    connection->generation = m_generation;
    return connection;
}

void WebhookClient::retire(HttpConnection *connection) {
    if (!m_idle.removeOne(connection) && m_sent.contains(connection))
        return; // busy: its answer retires it
    --m_connections;
    connection->abort();
    connection->deleteLater();
}

void WebhookClient::onAnswer(HttpConnection *connection, HttpAnswer &answer, bool stale) {
    const auto it = m_sent.find(connection);
    if (it == m_sent.end())
        return;
    Request request = std::move(it.value());
    m_sent.erase(it);
    if (connection->isUsable() && connection->generation == m_generation)
        m_idle.append(connection);
    else
        retire(connection);
    if (stale && !request.resent) {
        request.resent = true;
        // First in line: it has waited longest.
        m_waiting.push_front(std::move(request));
        pump();
        return;
    }
    pump();
    if (m_sent.isEmpty() && m_waiting.empty())
        m_deadlineTimer.stop();
    if (m_posting > 0) {
        QMetaObject::invokeMethod(
            this,
            [generation = m_aborts, done = std::move(request.done), answer, this]() mutable {
                if (generation == m_aborts)
                    done(answer);
            },
            Qt::QueuedConnection);
        return;
    }
    request.done(answer);
}

void WebhookClient::abortAll() {
    ++m_aborts; // answers queued by post() are dropped too
    m_waiting.clear();
    const QList<HttpConnection *> busy = m_sent.keys();
    m_sent.clear();
    for (HttpConnection *connection : busy)
        retire(connection);
    m_deadlineTimer.stop();
}

void WebhookClient::abortExpired() {
    if (m_sent.isEmpty() && m_waiting.empty()) {
        m_deadlineTimer.stop();
        return;
    }
    const auto expired = [this](const Request &request) {
        return request.since.elapsed() >= m_timeout.count();
    };
    // Collected first: `done` may post or abort.
    std::vector<Request> late;
    for (auto it = m_sent.begin(); it != m_sent.end();) {
        if (!expired(it.value())) {
            ++it;
            continue;
        }
        late.push_back(std::move(it.value()));
        HttpConnection *connection = it.key();
        it = m_sent.erase(it);
        retire(connection);
    }
    const auto waitingLate = std::stable_partition(m_waiting.begin(), m_waiting.end(),
                                                   [&](const Request &r) { return !expired(r); });
    std::move(waitingLate, m_waiting.end(), std::back_inserter(late));
    m_waiting.erase(waitingLate, m_waiting.end());
    pump();
    for (Request &request : late) {
        HttpAnswer answer;
        answer.failure = HttpAnswer::Failure::Timeout;
        request.done(answer);
    }
}

} // namespace outbox::dispatch
