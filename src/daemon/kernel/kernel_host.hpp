// This machine's part of a kernel trace description: what lttng-modules puts
// in the env (hostname, uname) and the clock the UST traces use.
#pragma once

#include "kernel_metadata.hpp"

namespace tracectl::kernel {

/// A KernelTraceDescription of this machine, without channels: hostname
/// from gethostname(2); sysname, kernelRelease, kernelVersion from uname(2)
/// (empty if it fails); clock = metadata::defaultClock() (CLOCK_MONOTONIC,
/// boot id uuid, offset measured now, exactly as the UST registries make
/// theirs); tracer 2.13.0; `uuid`, `sessionName` and `creationTime`
/// (seconds since the Epoch) as given.
KernelTraceDescription describeHost(const metadata::Uuid& uuid, std::string sessionName,
                                    std::int64_t creationTime);

} // namespace tracectl::kernel
