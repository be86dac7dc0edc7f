#pragma once

#include "core/duration.h"

#include <QHash>
#include <QList>
#include <QNetworkReply>
#include <QTimer>

#include <functional>
#include <memory>
#include <vector>

class QNetworkAccessManager;
class QNetworkRequest;

namespace outbox::dispatch {

// What HttpPublisher and BatchPublisher share about their requests in flight:
//  - Qt opens at most 6 connections per host and QNetworkAccessManager, so a
//    pool of ceil(concurrency / ConnectionsPerManager) managers is used, each
//    request on the least busy one (the first of equals: at low load every
//    request takes the same warm connection and thread);
//  - a hard request deadline, checked by a timer (the transfer timeout of
//    Qt is an idle timeout);
//  - aborting everything without the replies' signals reaching the owner.
class RequestPool final {
public:
    static constexpr int ConnectionsPerManager = 6;

    // The deadline timer is a child of `owner` (moveToThread() takes it
    // along); `onDeadlineTick` runs on each of its ticks.
    RequestPool(QObject *owner, std::function<void()> onDeadlineTick);
    ~RequestPool();
    Q_DISABLE_COPY_MOVE(RequestPool)

    // Managers are never destroyed while the pool lives: replies in flight
    // belong to them. Shrinking only stops handing them new requests.
    void resize(int concurrency);
    bool isEmpty() const { return m_managers.empty(); }
    int activeManagers() const { return m_activeManagers; }

    // Posts on the least busy manager and starts the deadline timer.
    QNetworkReply *post(const QNetworkRequest &request, const QByteArray &body, int *manager);
    void release(int manager) { --m_load[size_t(manager)]; }

    // Aborts the replies (each one disconnected from the owner first, so no
    // outcome is reported) and stops the deadline timer.
    void abortAll(const QList<QNetworkReply *> &replies);

    // Aborts the flights older than `timeout`, marking them timedOut; those
    // for which `skip` is true are left alone. Stops the timer when nothing
    // is in flight.
    template <typename Flight, typename Skip>
    void abortExpired(QHash<QNetworkReply *, Flight> &replies, core::Millis timeout, Skip skip) {
        if (replies.isEmpty()) {
            m_deadlineTimer.stop();
            return;
        }
        QList<QNetworkReply *> expired;
        for (auto it = replies.begin(); it != replies.end(); ++it) {
            if (!it->timedOut && !skip(*it) && it->timer.elapsed() >= timeout.count()) {
                it->timedOut = true;
                expired << it.key();
            }
        }
        // abort() emits finished() synchronously: collect first, then abort.
        for (QNetworkReply *reply : expired)
            reply->abort();
    }

private:
    QObject *m_owner;
    std::vector<std::unique_ptr<QNetworkAccessManager>> m_managers;
    std::vector<int> m_load; // requests in flight per manager
    QTimer m_deadlineTimer;
    int m_activeManagers = 0;
};

} // namespace outbox::dispatch
