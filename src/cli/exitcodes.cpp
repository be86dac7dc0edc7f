#include "cli/exitcodes.h"

namespace outbox::cli {

int exitCodeFor(core::ErrorKind kind) {
    switch (kind) {
    case core::ErrorKind::Invalid:
    case core::ErrorKind::AuthenticationFailed:
        return ExitUsage;
    case core::ErrorKind::Unavailable:
        return ExitUnavailable;
    case core::ErrorKind::PermissionDenied:
    case core::ErrorKind::NotFound:
    case core::ErrorKind::Conflict:
    case core::ErrorKind::Failed:
        break;
    }
    return ExitFailure;
}

} // namespace outbox::cli
