#pragma once

namespace outbox::core {

// glibc looks at /etc/localtime again (a stat() call) on every conversion to
// local time while TZ is unset, and the QPSQL driver converts every
// timestamptz it reads to local time: a busy dispatcher made about 7,000 of
// those calls a second, a third of its thread's time. With TZ naming the same
// zone file glibc reads it once. Call at the very start of main(), before any
// thread exists (it changes the environment). A TZ that is already set, or a
// system without /etc/localtime (glibc then uses UTC), is left alone.
// Returns true when it set TZ. The price: a change of the system's time zone
// is seen after a restart, not at once.
bool pinLocalTimeZone();

} // namespace outbox::core
