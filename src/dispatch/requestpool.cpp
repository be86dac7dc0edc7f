#include "dispatch/requestpool.h"

#include <QNetworkAccessManager>

#include <algorithm>

namespace outbox::dispatch {

RequestPool::RequestPool(QObject *owner, std::function<void()> onDeadlineTick)
    : m_owner(owner)
    , m_deadlineTimer(owner) {
    m_deadlineTimer.setInterval(100);
    QObject::connect(&m_deadlineTimer, &QTimer::timeout, owner, std::move(onDeadlineTick));
}

RequestPool::~RequestPool() = default;

void RequestPool::resize(int concurrency) {
    const int count =
        (std::max(concurrency, 1) + ConnectionsPerManager - 1) / ConnectionsPerManager;
    while (int(m_managers.size()) < count) {
        auto manager = std::make_unique<QNetworkAccessManager>();
        manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
        manager->setAutoDeleteReplies(false);
        m_managers.push_back(std::move(manager));
        m_load.push_back(0);
    }
    m_activeManagers = count;
}

QNetworkReply *RequestPool::post(const QNetworkRequest &request, const QByteArray &body,
                                 int *manager) {
    // Under load each manager stays within its 6 connections as long as the
    // pool is big enough. (std::min_element returns the first of equals.)
    const auto active = m_load.begin() + m_activeManagers;
    const int chosen = int(std::min_element(m_load.begin(), active) - m_load.begin());
    ++m_load[size_t(chosen)];
    *manager = chosen;
    QNetworkReply *reply = m_managers[size_t(chosen)]->post(request, body);
    if (!m_deadlineTimer.isActive())
        m_deadlineTimer.start();
    return reply;
}

void RequestPool::abortAll(const QList<QNetworkReply *> &replies) {
    std::fill(m_load.begin(), m_load.end(), 0);
    for (QNetworkReply *reply : replies) {
        QObject::disconnect(reply, nullptr, m_owner, nullptr);
        reply->abort();
        reply->deleteLater();
    }
    m_deadlineTimer.stop();
}

} // namespace outbox::dispatch
