#pragma once

#include "core/result.h"

#include <QDateTime>
#include <QMetaType>

namespace outbox::store {

class Session;

// The backlog as Prometheus gauges show it, read by one statement whose cost
// does not grow with the delivered history: the live sets are counted
// through their partial indexes, delivered exactly up to kDeliveredExactCap
// rows and estimated beyond.
struct QueueGauges {
    static constexpr qint64 kDeliveredExactCap = 100000;

    qint64 pending = 0; // including retrying
    qint64 processing = 0;
    qint64 delivered = 0;
    bool deliveredEstimated = false;
    qint64 dead = 0;
    qint64 dueNow = 0;              // pending, due, not paused
    double oldestDueAgeSeconds = 0; // since the oldest of those became due; 0 when none
    qint64 pausedScopes = 0;        // rows of outbox_pauses (namespaces or topics)
    qint64 pausedNamespaces = 0;    // distinct namespaces with a pause
    qint64 dispatchersAlive = 0;    // registry rows with a fresh heartbeat
    QDateTime readAt;               // UTC, when read
};

core::Result<QueueGauges> readQueueGauges(Session &session);

} // namespace outbox::store

Q_DECLARE_METATYPE(outbox::store::QueueGauges)
