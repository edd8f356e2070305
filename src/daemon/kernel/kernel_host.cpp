#include "kernel_host.hpp"

#include "metadata/clock_source.hpp"

#include <array>
#include <sys/utsname.h>
#include <unistd.h>

namespace tracectl::kernel {

KernelTraceDescription describeHost(const metadata::Uuid& uuid, std::string sessionName,
                                    std::int64_t creationTime) {
    KernelTraceDescription d;
    d.uuid = uuid;
    d.sessionName = std::move(sessionName);
    d.creationTime = creationTime;
    std::array<char, 256> host{};
    if (::gethostname(host.data(), host.size() - 1) == 0)
        d.hostname = host.data();
    struct utsname u {};
    if (::uname(&u) == 0) {
        d.sysname = u.sysname;
        d.kernelRelease = u.release;
        d.kernelVersion = u.version;
    }
    d.clock = metadata::defaultClock();
    return d;
}

} // namespace tracectl::kernel
