#include "dispatch/dispatcherstats.h"

#include "core/enumnames.h"

namespace outbox::dispatch {

constexpr core::EnumName<DispatcherState> kStateNames[] = {
    {DispatcherState::Stopped, "stopped"},   {DispatcherState::Starting, "starting"},
    {DispatcherState::Running, "running"},   {DispatcherState::Reconnecting, "reconnecting"},
    {DispatcherState::Stopping, "stopping"}, {DispatcherState::Failed, "failed"}};

QString stateName(DispatcherState state) {
    return core::nameOf(kStateNames, state, "unknown");
}

} // namespace outbox::dispatch
