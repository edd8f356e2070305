// SIGBUS on ring-buffer mappings. An application shares each stream's shm
// with the consumer and could truncate it; liblttng-ust-ctl then recovers
// from the fault inside its own calls (sigsetjmp/siglongjmp around every
// access to the mapping, lttng/ust-sigbus.h) provided the process defines the
// per-thread state it uses and forwards SIGBUS to
// lttng_ust_ctl_sigbus_handle(). This file does both, the way lttng-consumerd
// does (lttng-tools src/bin/lttng-consumerd/lttng-consumerd.c).
#pragma once

#include <cstddef>

namespace tracectl::consumer {

/// Installs the process-wide SIGBUS handler (sigaction, SA_SIGINFO): a fault
/// inside a liblttng-ust-ctl call on a registered mapping makes that call
/// fail (-EIO / NULL); any other SIGBUS writes one line to stderr and aborts.
/// Throws std::system_error if sigaction(2) fails.
void installSigbusHandler();

/// Copies `size` bytes from `from`, inside a ring-buffer mapping, to `to`:
/// false, with `to` partly written, if the mapping faulted (SIGBUS: the app
/// truncated its shm) instead of the process aborting. Needs
/// installSigbusHandler(). For the consumer's own reads of a sub-buffer
/// (counting its records): ust-ctl guards only its own calls.
bool copyFromMapping(void* to, const void* from, std::size_t size) noexcept;

} // namespace tracectl::consumer
