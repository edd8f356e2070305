// SIGBUS on ring-buffer mappings. An application shares each stream's shm
// with the consumer and could truncate it; liblttng-ust-ctl then recovers
// from the fault inside its own calls (sigsetjmp/siglongjmp around every
// access to the mapping, lttng/ust-sigbus.h) provided the process defines the
// per-thread state it uses and forwards SIGBUS to
// lttng_ust_ctl_sigbus_handle(). This file does both, the way lttng-consumerd
// does (lttng-tools src/bin/lttng-consumerd/lttng-consumerd.c).
#pragma once

namespace tracectl::consumer {

/// Installs the process-wide SIGBUS handler (sigaction, SA_SIGINFO): a fault
/// inside a liblttng-ust-ctl call on a registered mapping makes that call
/// fail (-EIO / NULL); any other SIGBUS writes one line to stderr and aborts.
/// Throws std::system_error if sigaction(2) fails.
void installSigbusHandler();

} // namespace tracectl::consumer
