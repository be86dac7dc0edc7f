#include "dispatch/dispatcherstats.h"

namespace outbox::dispatch {

QString stateName(DispatcherState state) {
    switch (state) {
    case DispatcherState::Stopped:
        return QStringLiteral("stopped");
    case DispatcherState::Starting:
        return QStringLiteral("starting");
    case DispatcherState::Running:
        return QStringLiteral("running");
    case DispatcherState::Reconnecting:
        return QStringLiteral("reconnecting");
    case DispatcherState::Stopping:
        return QStringLiteral("stopping");
    case DispatcherState::Failed:
        return QStringLiteral("failed");
    }
    return QStringLiteral("unknown");
}

} // namespace outbox::dispatch
