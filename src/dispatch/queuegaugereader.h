#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "store/queuegauges.h"

#include <QObject>
#include <QThread>

namespace outbox::dispatch {

class QueueGaugeWorker;

// Reads store::QueueGauges every `interval` on a connection and thread of
// its own and hands the latest to its owner (gaugesRead). However many
// scrapes arrive, this is the only reader: the database sees one small
// statement per interval per process.
class QueueGaugeReader final : public QObject {
    Q_OBJECT
public:
    QueueGaugeReader(core::ConnInfo connInfo, core::Millis interval, QObject *parent = nullptr);
    ~QueueGaugeReader() override;
    Q_DISABLE_COPY_MOVE(QueueGaugeReader)

Q_SIGNALS:
    // In the owner's thread. A failed read emits nothing: the gauges keep the
    // last values and their age (outbox_queue_gauges_age_seconds) grows.
    void gaugesRead(const outbox::store::QueueGauges &gauges);

private:
    QThread m_thread;
    QueueGaugeWorker *m_worker = nullptr; // lives in m_thread
};

} // namespace outbox::dispatch
