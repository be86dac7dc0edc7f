#pragma once

#include "dispatch/dispatcherstats.h"

#include <QObject>
#include <QString>
#include <QUuid>

namespace outbox::dispatch {

// What a dispatcher reports: Dispatcher emits these in its own thread and
// DispatcherHost forwards them into its owner's thread.
class DispatcherSignals : public QObject {
    Q_OBJECT
public:
    ~DispatcherSignals() override = default;
    Q_DISABLE_COPY_MOVE(DispatcherSignals)

Q_SIGNALS:
    void stateChanged(outbox::dispatch::DispatcherState state);
    void statsSnapshot(const outbox::dispatch::DispatcherStats &stats);
    void started(const QUuid &workerId);
    void stopped();
    void failed(const QString &message);
    void configApplied(const QString &description);
    void configRejected(const QString &message);

protected:
    explicit DispatcherSignals(QObject *parent)
        : QObject(parent) {}
};

} // namespace outbox::dispatch
