#include "sigbus.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <lttng/ust-ctl.h>
#include <lttng/ust-sigbus.h>
#include <system_error>
#include <unistd.h>

// The TLS state liblttng-ust-ctl's sigbus_begin()/sigbus_end() use; the
// library only declares it (extern, initial-exec TLS), every executable that
// links liblttng-ust-ctl must define it exactly once.
DEFINE_LTTNG_UST_SIGBUS_STATE();

namespace tracectl::consumer {

namespace {

extern "C" void onSigbus(int, siginfo_t* info, void*) {
    // Returns only if the address is not inside a mapping a ust-ctl call is
    // currently reading; otherwise it siglongjmps back into that call.
    lttng_ust_ctl_sigbus_handle(info->si_addr);
    static const char msg[] = "tracectl-consumerd: SIGBUS outside a ring-buffer access, aborting\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    std::abort();
}

} // namespace

void installSigbusHandler() {
    struct sigaction sa {};
    sa.sa_sigaction = &onSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(SIGBUS, &sa, nullptr) < 0)
        throw std::system_error(errno, std::generic_category(), "sigaction(SIGBUS)");
}

} // namespace tracectl::consumer
