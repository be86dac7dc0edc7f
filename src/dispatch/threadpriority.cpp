#include "dispatch/threadpriority.h"

#include <QString>

#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace outbox::dispatch {

core::Result<void> lowerThreadPriority(int increment) {
    const auto tid = id_t(::syscall(SYS_gettid));
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, tid);
    if ((current != -1 || errno == 0) && ::setpriority(PRIO_PROCESS, tid, current + increment) == 0)
        return {};
    return core::Error{core::ErrorKind::Failed, QString::fromLocal8Bit(std::strerror(errno))};
}

} // namespace outbox::dispatch
