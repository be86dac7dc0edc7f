#pragma once

#include "core/conninfo.h"
#include "core/status.h"
#include "dispatch/housekeepingoptions.h"
#include "store/session.h"

#include <QObject>
#include <QTimer>

namespace outbox::dispatch {

// Deletes delivered (and dead) events older than the configured ages, in
// small batches, in the background: one pass every retentionInterval, one
// short transaction per batch, a short pause between batches. Of many
// dispatchers with the same setting, the one holding the advisory lock
// deletes and the others skip the pass. Every batch is audited by the
// database as the action 'retention'.
//
// Runs in Housekeeping's thread on a connection of its own: its deletes do
// not wait behind claims or acks, and these do not wait behind it beyond
// the row locks PostgreSQL takes anyway (SKIP LOCKED on both sides).
class Retention final : public QObject {
    Q_OBJECT
public:
    Retention(core::ConnInfo connInfo, HousekeepingOptions options, QString application,
              QObject *parent = nullptr);
    ~Retention() override;
    Q_DISABLE_COPY_MOVE(Retention)

    static bool enabled(const HousekeepingOptions &options) {
        return options.retainDelivered.count() > 0 || options.retainDead.count() > 0;
    }

public Q_SLOTS:
    void start();
    void stop();

private:
    void step();      // one batch, then the next one soon or the end of the pass
    void endPass();   // releases the lock, waits for the next interval
    bool beginPass(); // connects, takes the lock

    HousekeepingOptions m_options;
    store::Session m_session;
    QTimer m_timer;
    bool m_inPass = false;
    core::Status m_status = core::Status::Delivered; // being deleted in this pass
    qint64 m_deletedInPass = 0;
};

} // namespace outbox::dispatch
